//! The Rust checker against the official Python checker (bfcl-eval 2026.3.23): every entry of
//! every AST category (and the irrelevance/relevance ones), the ground truth as output and at
//! least five mutations of it; verdict and error kind must be equal on every output.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use toolgate_eval::bfcl::{Case, Category, CheckOptions, PyValue, check, mutate};

use super::data::data;

/// Entries whose ground truth, written as output (the first accepted value of each parameter,
/// undeclared optional ones left out), the official checker itself rejects: BFCL data quirks
/// that fail for any model. Both checkers reject them the same way; listed so that a change
/// in the data or in either checker is noticed (docs/eval.md explains each).
const GROUND_TRUTH_REJECTED: &[(&str, &str)] = &[
    // ArrayList<any> elements convert to strings; the answer holds ints and booleans.
    ("simple_java_36", "value_error:list/tuple"),
    // The accepted HashMap value is a bare string, not a list: compared per character.
    ("simple_java_64", "value_error:dict_value"),
    ("simple_java_65", "value_error:list/tuple"),
    // Required list parameters (`auto_loan_payment_start`, …) whose accepted-values list is
    // empty: no value can match.
    ("live_simple_106-63-0", "type_error:simple"),
    // Required list parameters whose accepted-values list is empty.
    ("live_simple_112-68-0", "type_error:simple"),
    // The answer needs `journey_start_time`, which the function does not declare.
    (
        "live_multiple_862-181-3",
        "simple_function_checker:unexpected_param",
    ),
    // The answer names `question`; the function requires `statement`.
    (
        "live_multiple_964-207-0",
        "simple_function_checker:missing_required",
    ),
];

/// Outputs on which the two checkers are known to disagree (none).
const KNOWN_DISAGREEMENTS: &[(&str, &str)] = &[];

pub fn venv_python() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|d| d.join(".venv/bin/python"))
        .find(|p| p.is_file())
        .expect("the repository's .venv with bfcl-eval (scripts/test.sh creates it)")
}

/// Every case of the categories, and its mutants as decoded outputs.
pub fn generate(categories: &[Category]) -> (Vec<Case>, Vec<(usize, &'static str, PyValue)>) {
    let data = data();
    let mut all = Vec::new();
    let mut outputs = Vec::new();
    for &category in categories {
        for case in data.load(category).unwrap() {
            let idx = all.len();
            for m in mutate::mutants(&case) {
                let out = PyValue::List(m.output.iter().map(|c| c.to_py()).collect());
                outputs.push((idx, m.label, out));
            }
            all.push(case);
        }
    }
    (all, outputs)
}

#[test]
fn rust_checker_agrees_with_the_official_checker() {
    let (cases, outputs) = generate(&Category::ALL);
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("cases.jsonl");
    let mut file = std::io::BufWriter::new(std::fs::File::create(&input).unwrap());
    for (idx, _, out) in &outputs {
        let case = &cases[*idx];
        // Serialised from the PyValue itself: argument order is part of the verdict.
        writeln!(
            file,
            "{{\"category\":{},\"id\":{},\"output\":{}}}",
            serde_json::to_string(case.category.name()).unwrap(),
            serde_json::to_string(&case.entry.id).unwrap(),
            serde_json::to_string(out).unwrap()
        )
        .unwrap();
    }
    file.flush().unwrap();
    drop(file);

    let driver = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/official_checker.py");
    let result = Command::new(venv_python())
        .arg(&driver)
        .arg("--input")
        .arg(&input)
        .output()
        .unwrap();
    assert!(
        result.status.success(),
        "the official checker failed: {}",
        String::from_utf8_lossy(&result.stderr)
    );
    let official: Vec<serde_json::Value> = String::from_utf8(result.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(official.len(), outputs.len());

    let mut disagreements = Vec::new();
    let mut truth_rejected = Vec::new();
    let mut per_category: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    for ((idx, label, out), theirs) in outputs.iter().zip(&official) {
        let case = &cases[*idx];
        let calls = toolgate_eval::bfcl::parse_output(out).unwrap();
        let ours = check(
            case.category,
            &case.entry.functions,
            &calls,
            case.answer.as_deref(),
            CheckOptions::default(),
        );
        let ours_kind = ours.as_ref().err().map(|f| f.kind.as_str().to_owned());
        let theirs_kind = theirs["error_type"].as_str().map(str::to_owned);
        let counts = per_category.entry(case.category.name()).or_default();
        counts.0 += 1;
        if ours.is_ok() {
            counts.1 += 1;
        }
        *kinds
            .entry(ours_kind.clone().unwrap_or_else(|| "valid".into()))
            .or_default() += 1;
        if *label == "ground_truth" && theirs["valid"] == false {
            truth_rejected.push((
                case.entry.id.clone(),
                theirs_kind.clone().unwrap_or_default(),
            ));
        }
        if ours_kind != theirs_kind || ours.is_ok() != (theirs["valid"] == true) {
            disagreements.push(format!(
                "{} [{label}] output {}: rust {:?}, official {:?}",
                case.entry.id,
                serde_json::to_string(out).unwrap(),
                ours.as_ref().err().map(|f| f.message.clone()),
                theirs_kind
            ));
        }
    }

    let mut report = std::io::stdout();
    writeln!(
        report,
        "{} outputs over {} entries",
        outputs.len(),
        cases.len()
    )
    .unwrap();
    for (category, (n, valid)) in &per_category {
        writeln!(report, "  {category:<24} {n:>6} outputs, {valid:>5} valid").unwrap();
    }
    for (kind, n) in &kinds {
        writeln!(report, "  {kind:<56} {n:>6}").unwrap();
    }
    let known: Vec<String> = KNOWN_DISAGREEMENTS
        .iter()
        .map(|(id, label)| format!("{id} [{label}]"))
        .collect();
    let unexpected: Vec<&String> = disagreements
        .iter()
        .filter(|d| !known.iter().any(|k| d.starts_with(k.as_str())))
        .collect();
    assert!(
        unexpected.is_empty(),
        "{} of {} outputs disagree:\n{}",
        unexpected.len(),
        outputs.len(),
        unexpected
            .iter()
            .take(40)
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    let expected_rejected: Vec<(String, String)> = GROUND_TRUTH_REJECTED
        .iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect();
    assert_eq!(
        truth_rejected, expected_rejected,
        "ground truths the official checker rejects"
    );
    // Every AST entry: the ground truth and at least five mutations.
    let mut per_entry = vec![0usize; cases.len()];
    for (i, _, _) in &outputs {
        per_entry[*i] += 1;
    }
    for (case, &n) in cases.iter().zip(&per_entry) {
        let need = if case.answer.is_some() { 6 } else { 2 };
        assert!(n >= need, "{}: only {n} outputs", case.entry.id);
    }
}
