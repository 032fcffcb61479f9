//! The official MCP conformance suite against `toolgate serve` itself, with the project's
//! fixture server (`examples/conformance_server` of toolgate-server, a separate process)
//! federated behind it as the upstream with `prefix = "never"`: every request of the suite
//! passes the gateway — role, policy, audit — and the hub, and what the fixture answers
//! comes back through both.
//!
//! - 0.1.16, `--suite active`: every scenario passes.
//! - 0.2.0-alpha.12, `--requirements 2026-07-28`, the fixture federated over 2026-07-28:
//!   every scored scenario passes (`conformance-2026-07-28-expected-failures.yml` is empty;
//!   the suite fails a run where a listed scenario passes, so a list there cannot go stale).

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

use super::harness::Env;

const INSTALL: &str =
    "run scripts/test.sh, which installs node@22 and both conformance suites into tests/peers";

/// The 30 active server scenarios of 0.1.16.
const ACTIVE: [&str; 30] = [
    "completion-complete",
    "dns-rebinding-protection",
    "elicitation-sep1034-defaults",
    "elicitation-sep1330-enums",
    "logging-set-level",
    "ping",
    "prompts-get-embedded-resource",
    "prompts-get-simple",
    "prompts-get-with-args",
    "prompts-get-with-image",
    "prompts-list",
    "resources-list",
    "resources-read-binary",
    "resources-read-text",
    "resources-subscribe",
    "resources-templates-read",
    "resources-unsubscribe",
    "server-initialize",
    "server-sse-multiple-streams",
    "tools-call-audio",
    "tools-call-elicitation",
    "tools-call-embedded-resource",
    "tools-call-error",
    "tools-call-image",
    "tools-call-mixed-content",
    "tools-call-sampling",
    "tools-call-simple-text",
    "tools-call-with-logging",
    "tools-call-with-progress",
    "tools-list",
];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn must_exist(path: PathBuf) -> PathBuf {
    assert!(path.exists(), "{} is missing: {INSTALL}", path.display());
    path
}

/// A child process killed when the test ends, however it ends.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The fixture server (built with the workspace's tests, next to the `toolgate` binary) on
/// a free port: the process and its `/mcp` URL.
fn fixture() -> (Killed, String) {
    let bin = Path::new(env!("CARGO_BIN_EXE_toolgate"));
    let path = bin
        .parent()
        .map(|dir| dir.join("examples/conformance_server"))
        .unwrap_or_default();
    assert!(
        path.exists(),
        "{} is missing: build it with `cargo build -p toolgate-server --example conformance_server` (cargo test builds it)",
        path.display()
    );
    let mut child = Command::new(&path)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn the fixture server");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("the fixture's listening line");
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_owned();
    (Killed(child), url)
}

/// `toolgate serve` federating the fixture at `url` over `protocol` as the suite expects
/// it: the fixture's names unchanged, its requests to the client passed on, the anonymous
/// caller in a role that may call its (write-risk, untrusted-hint) tools without approval.
fn gateway(url: &str, protocol: &str) -> (Env, Killed, String) {
    let host = url
        .strip_prefix("http://")
        .and_then(|rest| rest.split('/').next())
        .expect("host:port");
    let env = Env::with_config(&format!(
        "[server.anonymous]\nrole = \"conformance\"\nprincipal = \"conformance\"\n\n\
         [roles.conformance]\nwrite = \"allow\"\n\n\
         [egress]\nallow_hosts = [\"{host}\"]\nallow_http = [\"{host}\"]\n\n\
         [[mcp.servers]]\nname = \"fixture\"\nurl = \"{url}\"\nprefix = \"never\"\n\
         protocol = \"{protocol}\"\nclient_requests = \"forward\"\n"
    ));
    let (child, addr) = env.serve();
    let child = Killed(child);
    wait_for_the_fixture(&addr);
    // The suite's DNS-rebinding scenario requires a localhost URL.
    let url = format!("http://{}/mcp", addr.replace("127.0.0.1", "localhost"));
    (env, child, url)
}

fn wait_for_the_fixture(addr: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let (_, tools) = super::harness::http(addr, "GET", "/v1/tools", None);
        if tools.to_string().contains("test_simple_text") {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the fixture's tools never arrived: {tools}"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// Scenario name → whether none of its checks failed, from the suite's output directory.
fn scenario_results(dir: &Path) -> Vec<(String, bool)> {
    let mut results = Vec::new();
    for entry in std::fs::read_dir(dir).expect("output dir") {
        let path = entry.expect("entry").path();
        let name = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        // `server-<scenario>-<timestamp>`
        let scenario = name
            .strip_prefix("server-")
            .and_then(|rest| rest.split_once("-20").map(|(s, _)| s.to_owned()))
            .unwrap_or(name);
        let text = std::fs::read_to_string(path.join("checks.json")).expect("checks.json");
        let checks: Value = serde_json::from_str(&text).expect("checks are JSON");
        let passed = checks
            .as_array()
            .expect("an array of checks")
            .iter()
            .all(|c| c["status"] != "FAILURE");
        results.push((scenario, passed));
    }
    results.sort();
    results
}

/// Runs the suite in `suite_dir` (its `node_modules` holds it) with `args`; the exit
/// status, the output and the output directory.
fn run_suite(suite_dir: &Path, args: &[&str]) -> (bool, String, tempfile::TempDir) {
    let cli =
        must_exist(suite_dir.join("node_modules/@modelcontextprotocol/conformance/dist/index.js"));
    let node = must_exist(repo().join("tests/peers/node_modules/.bin/node"));
    let out = tempfile::tempdir().expect("output dir");
    let output = Command::new(node)
        .current_dir(suite_dir)
        .arg(cli)
        .args(args)
        .arg("-o")
        .arg(out.path())
        .output()
        .expect("run the conformance suite");
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), text, out)
}

#[test]
fn every_active_scenario_of_0_1_16_passes_through_toolgate_serve() {
    let (_fixture, upstream) = fixture();
    let (env, _serve, url) = gateway(&upstream, "2025-11-25");
    let (_, text, out) = run_suite(
        &repo().join("tests/peers"),
        &["server", "--url", &url, "--suite", "active"],
    );
    let results = scenario_results(out.path());
    let passing: BTreeSet<&str> = results
        .iter()
        .filter(|(_, ok)| *ok)
        .map(|(s, _)| s.as_str())
        .collect();
    let failing: Vec<&str> = results
        .iter()
        .filter(|(_, ok)| !*ok)
        .map(|(s, _)| s.as_str())
        .collect();
    assert_eq!(
        (passing, failing),
        (BTreeSet::from(ACTIVE), Vec::new()),
        "{text}"
    );
    // The gateway did the work: the calls and reads are in its audit log.
    let audit = std::fs::read_to_string(env.audit_path()).expect("audit log");
    for name in ["test_sampling", "test://static-text", "test_simple_prompt"] {
        assert!(audit.contains(name), "{name} is not in the audit log");
    }
}

#[test]
fn every_scored_2026_07_28_scenario_passes_through_toolgate_serve() {
    let (_fixture, upstream) = fixture();
    // The modern era end to end: the suite's stateless requests, and the gateway's to the
    // fixture, so the fixture's named input requests reach the suite under their names.
    let (_env, _serve, url) = gateway(&upstream, "2026-07-28");
    let expected = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/suite/conformance-2026-07-28-expected-failures.yml");
    let expected = expected.to_string_lossy().into_owned();
    let (ok, text, _out) = run_suite(
        &repo().join("tests/peers/conformance-2026"),
        &[
            "server",
            "--url",
            &url,
            "--requirements",
            "2026-07-28",
            "--expected-failures",
            &expected,
        ],
    );
    assert!(ok, "{text}");
    assert!(!text.contains("Unexpected failures"), "{text}");
}
