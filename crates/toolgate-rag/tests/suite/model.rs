//! The local embedding model against golden values, and the vector cache across restarts.

use std::sync::OnceLock;

use serde_json::json;
use toolgate_protocol::ToolSpec;
use toolgate_rag::{Embedder, Fusion, LocalEmbedder, Mode, ToolSearch, VectorCache};

use super::model_dir;

fn model() -> &'static LocalEmbedder {
    static M: OnceLock<LocalEmbedder> = OnceLock::new();
    M.get_or_init(|| LocalEmbedder::load(model_dir()).expect("loading the test model"))
}

#[test]
fn hello_world_matches_the_reference_vector() {
    assert_golden(model());
}

/// "hello world" embeds to the reference vector's first dimensions (the golden values the
/// encoder is held to), at unit length.
pub fn assert_golden(m: &LocalEmbedder) {
    assert_eq!(m.token_ids("hello world").unwrap(), [101, 7592, 2088, 102]);
    let v = &m.embed(&["hello world".to_owned()]).unwrap()[0];
    assert_eq!(v.len(), 384);
    let golden = [-0.034_477_33, 0.031_023_277, 0.006_734_912, 0.026_108_94];
    for (got, want) in v.iter().zip(golden) {
        assert!((got - want).abs() < 1e-4, "{:?} vs {golden:?}", &v[..4]);
    }
    let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    assert!((norm - 1.0).abs() < 1e-5);
}

#[test]
fn batching_and_padding_do_not_change_vectors() {
    let m = model();
    let texts = [
        "hello world".to_owned(),
        "a much longer sentence about the weather in Paris tomorrow morning".to_owned(),
    ];
    let batch = m.embed(&texts).unwrap();
    let alone = m.embed(&texts[..1]).unwrap();
    for (a, b) in batch[0].iter().zip(&alone[0]) {
        assert!((a - b).abs() < 1e-5);
    }
    // Unrelated sentences must not look alike (the tokenizer.json padding pitfall).
    let cos: f32 = batch[0].iter().zip(&batch[1]).map(|(a, b)| a * b).sum();
    assert!(cos < 0.5, "cosine {cos}");
}

#[test]
fn missing_model_dir_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let err = LocalEmbedder::load(dir.path()).unwrap_err().to_string();
    assert!(err.contains("missing `config.json`"), "{err}");
}

fn specs(n: usize) -> Vec<ToolSpec> {
    (0..n)
        .map(|i| {
            ToolSpec::new(
                format!("tool_{i}"),
                format!("Does thing number {i}."),
                json!({"type": "object"}),
            )
        })
        .collect()
}

#[tokio::test]
async fn second_open_embeds_nothing_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("vectors.db");
    let open = || {
        ToolSearch::new(
            Some(Embedder::Local(std::sync::Arc::new(
                LocalEmbedder::load(model_dir()).unwrap(),
            ))),
            Some(VectorCache::open(&path).unwrap()),
            Fusion::default(),
        )
    };
    let mut tools = specs(5);
    let first = open();
    let s = first.refresh(&tools).await.unwrap();
    assert_eq!((s.sync.added, s.cached, s.embedded), (5, 0, 5));
    drop(first);

    // A restart: same definitions → every vector from the cache.
    let second = open();
    let s = second.refresh(&tools).await.unwrap();
    assert_eq!((s.sync.added, s.cached, s.embedded), (5, 5, 0));

    // One definition changes: only it is embedded again.
    tools[2].description = "Something else entirely.".to_owned();
    let third = open();
    let s = third.refresh(&tools).await.unwrap();
    assert_eq!((s.cached, s.embedded), (4, 1));
    let hits = third
        .search("something else entirely", 1, Mode::Dense, &|_| true)
        .await
        .unwrap();
    assert_eq!(hits[0].name, "tool_2");
}
