//! The BFCL checker's throughput next to the official Python checker's, on the same outputs
//! in the same run: every entry of every AST category, the ground truth as output (entries/s)
//! and the ground truth plus its mutations (outputs/s, the agreement test's set).
//!
//! ```text
//! cargo bench -p toolgate-eval --bench checker --no-default-features
//! ```
//! Needs the repository's .venv with bfcl-eval (scripts/test.sh installs it).
//! `TOOLGATE_BENCH_SECONDS` (default 2) is the minimum measuring time per side and set.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::print_stdout
)]

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use toolgate_eval::bfcl::{
    BfclData, Call, Case, Category, CheckOptions, PyValue, check, mutate, parse_output,
};

struct Set {
    name: &'static str,
    outputs: Vec<(usize, PyValue)>,
}

fn main() {
    let min = Duration::from_secs_f64(
        std::env::var("TOOLGATE_BENCH_SECONDS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(2.0),
    );
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let data = BfclData::discover_from(manifest).expect("bfcl-eval in the repository's .venv");
    let mut cases: Vec<Case> = Vec::new();
    for category in Category::AST {
        cases.extend(data.load(category).unwrap());
    }
    let mut truth = Vec::new();
    let mut all = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        for m in mutate::mutants(case) {
            let out = PyValue::List(m.output.iter().map(Call::to_py).collect());
            if m.label == "ground_truth" {
                truth.push((i, out.clone()));
            }
            all.push((i, out));
        }
    }
    let sets = [
        Set {
            name: "ground truth (1 per entry)",
            outputs: truth,
        },
        Set {
            name: "ground truth + mutations",
            outputs: all,
        },
    ];
    let python = manifest
        .ancestors()
        .map(|d| d.join(".venv/bin/python"))
        .find(|p| p.is_file())
        .expect(".venv/bin/python");
    let driver = manifest.join("tests/official_checker.py");

    println!(
        "BFCL AST categories: {} entries; measuring ≥ {:.1} s per side",
        cases.len(),
        min.as_secs_f64()
    );
    println!(
        "{:<28} {:>8} {:>16} {:>16} {:>18} {:>9}",
        "set", "outputs", "rust outputs/s", "rust µs/output", "python outputs/s", "speed-up"
    );
    for set in &sets {
        let rust = rust_rate(&cases, &set.outputs, min);
        let py = python_rate(&python, &driver, &cases, &set.outputs, min);
        println!(
            "{:<28} {:>8} {:>16.0} {:>16.2} {:>18.0} {:>8.1}x",
            set.name,
            set.outputs.len(),
            rust,
            1e6 / rust,
            py,
            rust / py
        );
    }
}

/// Outputs per second: each decoded output judged (decoded into calls beforehand, as the
/// Python checker's outputs are dicts already), repeated until `min`.
fn rust_rate(cases: &[Case], outputs: &[(usize, PyValue)], min: Duration) -> f64 {
    let decoded: Vec<(usize, Vec<Call>)> = outputs
        .iter()
        .map(|(i, out)| (*i, parse_output(out).unwrap()))
        .collect();
    let mut passes = 0usize;
    let mut valid = 0usize;
    let start = Instant::now();
    while passes == 0 || start.elapsed() < min {
        for (i, calls) in &decoded {
            let case = &cases[*i];
            let verdict = check(
                case.category,
                &case.entry.functions,
                calls,
                case.answer.as_deref(),
                CheckOptions::default(),
            );
            valid += usize::from(std::hint::black_box(verdict).is_ok());
        }
        passes += 1;
    }
    let elapsed = start.elapsed().as_secs_f64();
    std::hint::black_box(valid);
    (passes * outputs.len()) as f64 / elapsed
}

/// The official checker over the same outputs (its own loop, timed inside Python; loading
/// and JSON parsing of the file excluded), repeated so that it runs about `min`.
fn python_rate(
    python: &PathBuf,
    driver: &Path,
    cases: &[Case],
    outputs: &[(usize, PyValue)],
    min: Duration,
) -> f64 {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("cases.jsonl");
    let mut file = std::io::BufWriter::new(std::fs::File::create(&input).unwrap());
    for (i, out) in outputs {
        let case = &cases[*i];
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
    let run = |repeat: usize| -> f64 {
        let out = Command::new(python)
            .arg(driver)
            .arg("--input")
            .arg(&input)
            .arg("--bench")
            .arg(repeat.to_string())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["seconds"].as_f64().unwrap()
    };
    let once = run(1).max(1e-6);
    let repeat = ((min.as_secs_f64() / once).ceil() as usize).max(1);
    let seconds = run(repeat);
    (repeat * outputs.len()) as f64 / seconds
}
