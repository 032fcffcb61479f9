//! `cargo run -p toolgate-lint --example lint_bfcl`: `toolgate tools lint`'s rules over the
//! BFCL catalog — every function of the 13 single-turn categories as the model is shown it
//! (`bfcl::prompt::tool_specs`), one per name — with findings counted per rule and severity,
//! and the most confusable pairs. BFCL data from the repository's `.venv`.
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;

use toolgate_eval::bfcl::prompt::tool_specs;
use toolgate_eval::bfcl::{BfclData, Category};
use toolgate_lint::{LintOptions, Rule, confusable_pairs, lint_catalog};

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
    let findings = lint_catalog(&specs, &LintOptions::default());
    let mut by_rule: BTreeMap<(Rule, &str), (usize, HashSet<&str>)> = BTreeMap::new();
    for f in &findings {
        let slot = by_rule.entry((f.rule, f.severity.as_str())).or_default();
        slot.0 += 1;
        slot.1.insert(f.tool.as_str());
    }
    let flagged: HashSet<&str> = findings.iter().map(|f| f.tool.as_str()).collect();
    println!(
        "{} tools, {} findings, {} tools with at least one",
        specs.len(),
        findings.len(),
        flagged.len()
    );
    println!("| rule | severity | findings | tools |");
    println!("|---|---|---|---|");
    for ((rule, severity), (n, tools)) in &by_rule {
        println!("| `{}` | {severity} | {n} | {} |", rule.id(), tools.len());
    }
    let pairs = confusable_pairs(&specs, 0.8);
    println!("\nconfusable pairs (BM25 ≥ 0.8): {}", pairs.len());
    for p in pairs.iter().take(8) {
        println!("  {:.2}  {}  ~  {}", p.similarity, p.a, p.b);
    }
}
