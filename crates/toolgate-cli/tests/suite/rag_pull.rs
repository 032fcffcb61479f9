//! `toolgate rag model pull` as a user runs it, against a fake Hugging Face Hub on loopback
//! serving the packaged all-MiniLM-L6-v2 (`HF_ENDPOINT`, `TOOLGATE_MODEL_CACHE` in the test's
//! temp dir): refused by `[egress]` until the hub is allowlisted, then verified against the
//! pins; retrieval turns hybrid with no `[rag]` configuration, `doctor` and `tools search
//! --explain` say so (and before, name the command); a cut download resumes on the next run;
//! `[rag] model_dir` keeps precedence; `serve` never reaches the hub.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;
use toolgate_rag::hub::{DEFAULT_PINS, DEFAULT_REPO, DEFAULT_REVISION, MODEL_FILES};
use toolgate_testkit::{FakeHub, packaged_model_dir};

use super::harness::{Env, Run};

fn hub() -> FakeHub {
    let hub = FakeHub::start();
    hub.put_dir(
        DEFAULT_REPO,
        DEFAULT_REVISION,
        &packaged_model_dir(),
        &MODEL_FILES,
    );
    hub
}

/// `toolgate ARGS` with the test's model cache and hub.
fn command(env: &Env, cache: &Path, hub: &FakeHub) -> Command {
    let mut cmd = env.command();
    cmd.env("TOOLGATE_MODEL_CACHE", cache)
        .env("HF_ENDPOINT", hub.url());
    cmd
}

fn run(env: &Env, cache: &Path, hub: &FakeHub, args: &[&str]) -> Run {
    Run::from_output(
        command(env, cache, hub)
            .args(args)
            .output()
            .expect("spawn toolgate"),
    )
}

fn allowing(hub: &FakeHub) -> String {
    format!(
        "[egress]\nallow_hosts = [\"{0}\"]\nallow_http = [\"{0}\"]\n",
        hub.host()
    )
}

/// The `tool rag` check's detail.
fn doctor_rag(run: &Run) -> String {
    run.json()["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "tool rag")
        .map(|c| c["detail"].as_str().unwrap().to_owned())
        .unwrap_or_else(|| panic!("no tool rag check: {run:#?}"))
}

fn model_path(cache: &Path) -> PathBuf {
    cache
        .join("sentence-transformers/all-MiniLM-L6-v2")
        .join(DEFAULT_REVISION)
}

#[test]
fn pull_is_guarded_verified_and_makes_retrieval_hybrid_without_configuration() {
    let hub = hub();
    let env = Env::new();
    let cache = env.root().join("models");

    // Before: BM25 only, and both places say what upgrades it.
    let before = run(
        &env,
        &cache,
        &hub,
        &[
            "tools",
            "search",
            "run a command in a terminal",
            "--explain",
        ],
    );
    before.assert_code(0);
    assert!(
        before
            .stdout
            .contains("retrieval: BM25 only: no embedding model; `toolgate rag model pull`"),
        "{before:#?}"
    );
    let doctor = run(&env, &cache, &hub, &["doctor", "--json"]);
    assert!(
        doctor_rag(&doctor)
            .contains("`toolgate rag model pull` fetches sentence-transformers/all-MiniLM-L6-v2"),
        "{doctor:#?}"
    );

    // A hub on loopback is refused until [egress] lists it; nothing reaches it.
    let refused = run(&env, &cache, &hub, &["rag", "model", "pull"]);
    refused.assert_code(1);
    assert!(
        refused.stderr.contains("refused: plain http to 127.0.0.1"),
        "{refused:#?}"
    );
    assert!(hub.requests().is_empty(), "{:?}", hub.requests());
    std::fs::write(
        env.ws.join("toolgate.toml"),
        "[egress]\nallow_http = [\"127.0.0.1\"]\n",
    )
    .unwrap();
    let refused = run(&env, &cache, &hub, &["rag", "model", "pull"]);
    refused.assert_code(1);
    assert!(
        refused.stderr.contains("is loopback; to allow it add"),
        "{refused:#?}"
    );
    assert!(hub.requests().is_empty(), "{:?}", hub.requests());

    // Allowed: every file verified against the pins; no progress line into a pipe.
    std::fs::write(env.ws.join("toolgate.toml"), allowing(&hub)).unwrap();
    let pulled = run(&env, &cache, &hub, &["rag", "model", "pull"]);
    pulled.assert_code(0);
    for pin in DEFAULT_PINS {
        let row = pulled
            .stdout
            .lines()
            .find(|l| l.starts_with(pin.file))
            .unwrap_or_else(|| panic!("{pulled:#?}"));
        assert!(
            row.contains(pin.sha256)
                && row.contains("verified (pinned)")
                && row.contains("downloaded"),
            "{row}"
        );
    }
    let dir = model_path(&cache);
    assert!(
        pulled
            .stdout
            .contains(&format!("model at {}", dir.display())),
        "{pulled:#?}"
    );
    assert!(pulled.stdout.contains("Tool RAG uses it"), "{pulled:#?}");
    assert!(
        !pulled.stderr.contains("MiB") && !pulled.stderr.contains('\r'),
        "{pulled:#?}"
    );

    // After: hybrid with the pulled model, no [rag] table at all.
    let after = run(
        &env,
        &cache,
        &hub,
        &[
            "tools",
            "search",
            "run a command in a terminal",
            "--explain",
        ],
    );
    after.assert_code(0);
    assert!(after.stdout.contains(&format!("retrieval: hybrid (BM25 + dense) with model at {} (pulled by `toolgate rag model pull`)", dir.display())), "{after:#?}");
    assert!(after.stdout.contains("mode hybrid"), "{after:#?}");
    let hits: Value = run(
        &env,
        &cache,
        &hub,
        &["tools", "search", "run a command in a terminal", "--json"],
    )
    .json();
    assert_eq!(hits[0]["name"], "shell", "{hits:#}");
    assert!(hits[0]["dense"]["rank"].as_u64().is_some(), "{hits:#}");
    let detail = doctor_rag(&run(&env, &cache, &hub, &["doctor", "--json"]));
    assert!(
        detail.contains("pulled by")
            && detail.contains("384 dimensions")
            && detail.contains("loaded in"),
        "{detail}"
    );

    // An offline model_dir keeps precedence.
    std::fs::write(
        env.ws.join("toolgate.toml"),
        format!(
            "{}\n[rag]\nmodel_dir = {:?}\n",
            allowing(&hub),
            packaged_model_dir().display().to_string()
        ),
    )
    .unwrap();
    let explain = run(
        &env,
        &cache,
        &hub,
        &["tools", "search", "run a command", "--explain"],
    );
    assert!(
        explain.stdout.contains(&format!(
            "with model at {} ([rag] model_dir)",
            packaged_model_dir().display()
        )),
        "{explain:#?}"
    );
}

#[test]
fn a_cut_download_resumes_on_the_next_run_and_a_corrupt_file_is_refused() {
    let hub = hub();
    let env = Env::with_config(&allowing(&hub));
    let cache = env.root().join("models");
    hub.cut_next("model.safetensors", 20_000_000);
    let cut = run(&env, &cache, &hub, &["rag", "model", "pull"]);
    cut.assert_code(1);
    assert!(
        cut.stderr.contains("run the same command again to resume"),
        "{cut:#?}"
    );
    let part = model_path(&cache).join("model.safetensors.part");
    let kept = std::fs::metadata(&part).unwrap().len();
    assert!(kept > 0, "nothing kept");

    let resumed = run(&env, &cache, &hub, &["rag", "model", "pull"]);
    resumed.assert_code(0);
    assert!(
        resumed
            .stderr
            .contains(&format!("note: model.safetensors: resuming at byte {kept}")),
        "{resumed:#?}"
    );
    assert!(
        resumed.stdout.contains(&format!("resumed at byte {kept}")),
        "{resumed:#?}"
    );
    assert!(
        resumed.stdout.contains("already in the cache"),
        "{resumed:#?}"
    );
    assert_eq!(
        hub.requests().last().unwrap().range,
        Some(format!("bytes={kept}-"))
    );

    // A hub serving other bytes for the pinned revision: refused, named, nothing installed.
    let hub = self::hub();
    hub.corrupt("tokenizer.json");
    let env = Env::with_config(&allowing(&hub));
    let cache = env.root().join("models");
    let bad = run(&env, &cache, &hub, &["rag", "model", "pull"]);
    bad.assert_code(1);
    assert!(
        bad.stderr.contains(&format!(
            "tokenizer.json: SHA-256 mismatch: expected {}",
            DEFAULT_PINS[1].sha256
        )),
        "{bad:#?}"
    );
    assert!(!model_path(&cache).join("tokenizer.json").exists());
    let explain = run(
        &env,
        &cache,
        &hub,
        &["tools", "search", "run a command", "--explain"],
    );
    assert!(
        explain.stdout.contains("retrieval: BM25 only"),
        "{explain:#?}"
    );
}

#[test]
fn serve_never_downloads_the_model() {
    let hub = hub();
    // Retrieval on from the start (threshold 0), the hub allowed and reachable, the cache empty.
    let env = Env::with_config(&format!("{}\n[rag]\nthreshold = 0\n", allowing(&hub)));
    let cache = env.root().join("models");
    let mut child = command(&env, &cache, &hub)
        .args(["serve", "--listen", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn toolgate serve");
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.contains("http://"), "{line}");
    let addr = line
        .split_whitespace()
        .find_map(|w| w.strip_prefix("http://"))
        .unwrap()
        .trim_end_matches('/')
        .to_owned();
    // Ready, and the catalog listed (search_tools registered over the threshold): still
    // nothing asked of the hub.
    let (status, _) = super::harness::http(&addr, "GET", "/v1/ready", None);
    assert_eq!(status, 200);
    let (status, tools) = super::harness::http(&addr, "GET", "/v1/tools", None);
    assert_eq!(status, 200, "{tools}");
    assert!(tools.to_string().contains("search_tools"), "{tools}");
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        hub.requests().is_empty(),
        "serve reached the hub: {:?}",
        hub.requests()
    );
    assert!(!cache.exists(), "serve created the model cache");
}
