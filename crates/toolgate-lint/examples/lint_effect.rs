//! `cargo run --release -p toolgate-lint --example lint_effect`: does the linter's confusable-
//! pair fix help retrieval? The project's retrieval eval (BFCL's questions over BFCL's
//! functions, Tool RAG's BM25) is run on the definitions as they are, then again after the
//! fix `toolgate tools lint` gives for each confusable pair — a boundary sentence naming the
//! sibling ("Not for what `b` does: use `b` instead.") — is applied to both tools of every
//! pair. Reported overall and on the queries whose answer is a tool of a pair. BFCL data from
//! the repository's `.venv` (scripts/test.sh installs it). Results: docs/lint.md.
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;

use toolgate_eval::bfcl::prompt::tool_specs;
use toolgate_eval::bfcl::{BfclData, Category};
use toolgate_eval::retrieval::{EvalSet, ReportRow, Subset, evaluate};
use toolgate_lint::confusable_pairs;
use toolgate_rag::bm25::Bm25Params;

fn row(set: &EvalSet, subset: &Subset) -> ReportRow {
    evaluate(set, subset, Bm25Params::default(), None, &[], false, None)
        .expect("evaluate")
        .remove(0)
}

fn print(label: &str, r: &ReportRow) {
    println!(
        "| {label} | {} | {} | {:.4} | {:.4} | {:.4} | {:.4} |",
        r.tools, r.queries, r.recall_at_1, r.recall_at_5, r.recall_at_10, r.mrr
    );
}

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let data = BfclData::discover_from(&root).expect("BFCL data (scripts/test.sh installs it)");
    let mut seen = HashSet::new();
    let mut specs = Vec::new();
    for category in Category::ALL {
        for case in data.load(category).expect("reading BFCL") {
            for spec in tool_specs(&case.entry, category.language()) {
                if seen.insert(spec.name.clone()) {
                    specs.push(spec);
                }
            }
        }
    }
    let pairs = confusable_pairs(&specs, 0.8);
    // Every sibling a tool is confused with, by name.
    let mut siblings: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for p in &pairs {
        siblings.entry(p.a.clone()).or_default().push(p.b.clone());
        siblings.entry(p.b.clone()).or_default().push(p.a.clone());
    }

    let before = EvalSet::from_bfcl(&data).expect("the eval set");
    let mut after = before.clone();
    let mut fixed = 0;
    for doc in &mut after.docs {
        if let Some(names) = siblings.get(&doc.name) {
            for b in names {
                doc.description
                    .push_str(&format!(" Not for what `{b}` does: use `{b}` instead."));
            }
            fixed += 1;
        }
    }
    let full = before.full();
    let paired_docs: HashSet<&str> = before
        .docs
        .iter()
        .filter(|d| siblings.contains_key(&d.name))
        .map(|d| d.id.as_str())
        .collect();
    let touched = Subset {
        label: "queries answered by a tool of a pair".into(),
        docs: full.docs.clone(),
        queries: full
            .queries
            .iter()
            .copied()
            .filter(|&q| {
                before.queries[q]
                    .relevant
                    .iter()
                    .any(|r| paired_docs.contains(r.as_str()))
            })
            .collect(),
    };
    println!(
        "{} functions, {} confusable pairs (BM25 ≥ 0.8), {} catalog docs given the boundary fix",
        specs.len(),
        pairs.len(),
        fixed
    );
    println!("| definitions | tools | queries | recall@1 | recall@5 | recall@10 | MRR |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    print("as they are, all queries", &row(&before, &full));
    print("with the fix, all queries", &row(&after, &full));
    print("as they are, queries of a pair", &row(&before, &touched));
    print("with the fix, queries of a pair", &row(&after, &touched));
}
