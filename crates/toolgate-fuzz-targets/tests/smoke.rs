//! The fuzz smoke of the test suite, in its own build (no instrumented second build): for
//! each target, every committed corpus input (`fuzz/corpus/<target>`) is replayed, then
//! seeded mutations of them are run for `TOOLGATE_FUZZ_SMOKE_SECS` seconds (default 4).
//! Without coverage feedback this is a smoke, not fuzzing: the coverage-guided runs are
//! `scripts/fuzz.sh` (docs/security.md, "Fuzzing").
//!
//! A failing input is written to `target/fuzz-smoke/<target>/` and named in the failure with
//! the seed; `TOOLGATE_FUZZ_SEED=<seed>` replays the same mutations, and
//! `cargo fuzz run <target> <file>` (in `fuzz/`) the input itself.

#![allow(clippy::expect_used, clippy::print_stderr)]

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use toolgate_fuzz_targets::mutate::{Rng, mutate, parse_dict};
use toolgate_fuzz_targets::{TARGETS, Target};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn seed() -> u64 {
    std::env::var("TOOLGATE_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(1, |d| d.as_secs())
        })
}

fn budget() -> Duration {
    let secs = std::env::var("TOOLGATE_FUZZ_SMOKE_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(4);
    Duration::from_secs(secs)
}

/// Runs `input`; on a panic, keeps the input and fails naming it and the seed.
fn run_one(target: &Target, input: &[u8], seed: u64, what: &str) {
    if catch_unwind(AssertUnwindSafe(|| (target.run)(input))).is_ok() {
        return;
    }
    let dir = repo().join("target/fuzz-smoke").join(target.name);
    std::fs::create_dir_all(&dir).expect("the failures' directory");
    let name = format!("{what}-{seed}-{}", input.len());
    let path = dir.join(&name);
    std::fs::write(&path, input).expect("the failing input");
    panic!(
        "fuzz target `{}` failed on {what} (seed {seed}); the input is {} — replay: \
         TOOLGATE_FUZZ_SEED={seed} cargo test -p toolgate-fuzz-targets --test smoke, or \
         (cd fuzz && cargo fuzz run -O -a -s none {} {})",
        target.name,
        path.display(),
        target.name,
        path.display()
    );
}

fn smoke(name: &str) {
    let target = TARGETS
        .iter()
        .find(|t| t.name == name)
        .expect("a listed target");
    let dir = repo().join("fuzz/corpus").join(name);
    let mut corpus: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| {
            let e = e.expect("a corpus entry");
            let bytes = std::fs::read(e.path()).expect("a corpus file");
            (e.file_name().to_string_lossy().into_owned(), bytes)
        })
        .collect();
    corpus.sort();
    assert!(!corpus.is_empty(), "{} holds no corpus", dir.display());
    let dict = std::fs::read_to_string(repo().join(format!("fuzz/dict/{name}.dict")))
        .map(|t| parse_dict(&t))
        .unwrap_or_default();
    let seed = seed();

    for (file, input) in &corpus {
        run_one(target, input, seed, &format!("corpus-{file}"));
    }
    let mut rng = Rng::new(seed);
    let started = Instant::now();
    let mut runs = 0u64;
    while started.elapsed() < budget() {
        let (_, input) = &corpus[rng.below(corpus.len())];
        let (_, other) = &corpus[rng.below(corpus.len())];
        let mutated = mutate(&mut rng, input, other, &dict, target.max_len);
        run_one(target, &mutated, seed, &format!("mutation-{runs}"));
        runs += 1;
    }
    eprintln!(
        "{name}: {} corpus inputs, {runs} mutations in {:?} (seed {seed})",
        corpus.len(),
        started.elapsed()
    );
}

#[test]
fn audit_verify() {
    smoke("audit_verify");
}

#[test]
fn chat_inbound() {
    smoke("chat_inbound");
}

#[test]
fn config_toml() {
    smoke("config_toml");
}

#[test]
fn egress_check() {
    smoke("egress_check");
}

#[test]
fn html_markdown() {
    smoke("html_markdown");
}

#[test]
fn mcp_server() {
    smoke("mcp_server");
}

#[test]
fn redact() {
    smoke("redact");
}

#[test]
fn sse_parser() {
    smoke("sse_parser");
}

#[test]
fn validate_args() {
    smoke("validate_args");
}

/// Every target has its smoke above.
#[test]
fn every_target_is_smoked() {
    let source = include_str!("smoke.rs");
    for t in TARGETS {
        assert!(
            source.contains(&format!("smoke(\"{}\")", t.name)),
            "{} has no smoke test",
            t.name
        );
    }
}

/// The coverage-guided fuzzer (`fuzz/`, built only by `scripts/fuzz.sh`) runs the same
/// functions: each target has its cargo-fuzz entry, declared in `fuzz/Cargo.toml`.
#[test]
fn every_target_has_its_cargo_fuzz_entry() {
    let manifest =
        std::fs::read_to_string(repo().join("fuzz/Cargo.toml")).expect("fuzz/Cargo.toml");
    for t in TARGETS {
        let path = format!("fuzz_targets/{}.rs", t.name);
        assert!(
            manifest.contains(&format!("name = \"{}\"", t.name))
                && manifest.contains(&format!("path = \"{path}\"")),
            "fuzz/Cargo.toml declares no [[bin]] {}",
            t.name
        );
        let entry = std::fs::read_to_string(repo().join("fuzz").join(&path))
            .unwrap_or_else(|e| panic!("fuzz/{path}: {e}"));
        assert!(
            entry.contains(&format!(
                "toolgate_fuzz_targets::targets::{}::run(data)",
                t.name
            )),
            "fuzz/{path} does not run the target"
        );
    }
}
