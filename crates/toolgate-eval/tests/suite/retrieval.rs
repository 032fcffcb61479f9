//! The retrieval eval on the installed BFCL data, and the Python references
//! (`scripts/rag_reference.py`, rank-bm25 and numpy from the repository's .venv) reading the
//! export of the same run.

use std::collections::HashSet;
use std::path::PathBuf;

use serde_json::json;
use toolgate_eval::retrieval::{
    EvalQuery, EvalSet, ReportRow, RetrievalError, RunOptions, Vectors, evaluate, export, run,
};
use toolgate_rag::ToolDoc;
use toolgate_rag::bm25::Bm25Params;

use super::data::data;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn the_bfcl_catalog_and_its_samples() {
    let set = EvalSet::from_bfcl(&data()).unwrap();
    // As `toolgate eval retrieval` reports it (docs/rag.md).
    assert_eq!((set.docs.len(), set.queries.len()), (3526, 2501));
    let ids: HashSet<&str> = set.docs.iter().map(|d| d.id.as_str()).collect();
    assert_eq!(ids.len(), set.docs.len(), "doc ids are unique");
    let sample = set.sample(100, 7);
    assert_eq!(sample.docs.len(), 100);
    assert_eq!(set.sample(100, 7).queries, sample.queries, "deterministic");
    // Every scored query's relevant docs are in the sample, and they fill at most half of it.
    let chosen: HashSet<&str> = sample
        .docs
        .iter()
        .map(|&d| set.docs[d].id.as_str())
        .collect();
    let mut relevant = HashSet::new();
    for &q in &sample.queries {
        for r in &set.queries[q].relevant {
            assert!(chosen.contains(r.as_str()), "{r} missing from the sample");
            relevant.insert(r.as_str());
        }
    }
    assert!(!sample.queries.is_empty() && relevant.len() <= 50);
}

/// Four docs, two questions with an obvious answer each.
fn tiny() -> EvalSet {
    let doc = |id: &str, desc: &str| ToolDoc::new(id, id, desc, &json!({}));
    let query = |id: &str, text: &str, relevant: &str| EvalQuery {
        id: id.into(),
        text: text.into(),
        relevant: vec![relevant.into()],
    };
    EvalSet {
        docs: vec![
            doc("get_weather", "Current weather in a city."),
            doc("convert_currency", "Convert an amount between currencies."),
            doc("send_email", "Send an email message to a recipient."),
            doc("list_files", "List the files of a folder."),
        ],
        queries: vec![
            query("q1", "what is the weather in Paris", "get_weather"),
            query("q2", "send an email to Bob", "send_email"),
        ],
        from_entries: 4,
    }
}

fn find<'a>(rows: &'a [ReportRow], retriever: &str) -> &'a ReportRow {
    rows.iter()
        .find(|r| r.retriever == retriever)
        .unwrap_or_else(|| panic!("no row {retriever} in {rows:?}"))
}

#[test]
fn the_python_references_score_the_same_export() {
    let python = root().join(".venv/bin/python");
    let script = root().join("crates/toolgate-eval/scripts/rag_reference.py");
    assert!(script.is_file(), "{}", script.display());
    let dir = tempfile::tempdir().unwrap();
    let set = tiny();
    let opts = RunOptions {
        sizes: vec![],
        seed: 7,
        model_dir: None,
        cache: None,
        export_dir: Some(dir.path().to_owned()),
        python: Some((python.clone(), script.clone())),
        fusions: vec![],
        by_name: false,
        rerank: None,
    };
    let rows = run(&set, &opts)
        .expect("the references need rank-bm25 and numpy in .venv (scripts/test.sh installs them)");
    let (ours, theirs) = (find(&rows, "bm25"), find(&rows, "rank-bm25"));
    for r in [ours, theirs] {
        assert_eq!((r.catalog.as_str(), r.tools, r.queries), ("full (4)", 4, 2));
        assert_eq!(r.recall_at_1, 1.0, "{r:?}");
    }

    // With vectors: the export carries them and numpy's top-k agrees with our dense ranking.
    let dv = vec![
        vec![1.0, 0.0, 0.0],
        vec![0.0, 1.0, 0.0],
        vec![0.0, 0.0, 1.0],
        vec![0.6, 0.8, 0.0],
    ];
    let qv = vec![vec![0.9, 0.1, 0.0], vec![0.0, 0.2, 0.9]];
    let vectors: Vectors<'_> = (&dv, &qv);
    let subsets = [set.full()];
    export(&set, &subsets, Some(vectors), dir.path()).unwrap();
    let out = std::process::Command::new(&python)
        .arg(&script)
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let theirs: Vec<ReportRow> = serde_json::from_slice(&out.stdout).unwrap();
    let ours = evaluate(
        &set,
        &subsets[0],
        Bm25Params::default(),
        Some(vectors),
        &[],
        false,
        None,
    )
    .unwrap();
    let (dense, numpy) = (find(&ours, "dense"), find(&theirs, "numpy top-k"));
    assert_eq!(
        (dense.recall_at_1, dense.mrr, dense.ndcg_at_10),
        (numpy.recall_at_1, numpy.mrr, numpy.ndcg_at_10)
    );
    assert_eq!(dense.recall_at_1, 1.0);
}

#[test]
fn a_failing_reference_script_is_an_error_with_its_message() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("fail.py");
    std::fs::write(&script, "import sys\nsys.exit('no references today')\n").unwrap();
    let opts = RunOptions {
        sizes: vec![],
        seed: 7,
        model_dir: None,
        cache: None,
        export_dir: Some(dir.path().join("export")),
        python: Some((root().join(".venv/bin/python"), script)),
        fusions: vec![],
        by_name: false,
        rerank: None,
    };
    let err = run(&tiny(), &opts).unwrap_err();
    assert!(
        matches!(&err, RetrievalError::ReferenceFailed(m) if m.contains("no references today")),
        "{err:?}"
    );
}
