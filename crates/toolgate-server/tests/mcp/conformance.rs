//! The official MCP conformance suite (`@modelcontextprotocol/conformance` 0.1.16, server
//! mode, active suite) against the test-only fixture server (`examples/conformance_server`).
//! Every active scenario passes, DNS-rebinding protection included; a scenario passes when
//! none of its checks in `checks.json` is a FAILURE (a SUCCESS line alone can hide an
//! `isError` result, so the checks are read, not the exit code).

use std::collections::BTreeSet;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use super::peers::{Server, conformance_server, node_bin, wait_output};

/// The active scenarios of 0.1.16; all of them pass.
const PASSING: [&str; 30] = [
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

/// Scenario name → whether every check passed, from the suite's output directory.
fn scenario_results(dir: &std::path::Path) -> Vec<(String, bool)> {
    let mut results = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        // `server-<scenario>-<timestamp>`
        let scenario = name
            .strip_prefix("server-")
            .and_then(|rest| rest.split_once("-20").map(|(s, _)| s.to_owned()))
            .unwrap_or(name);
        let checks: Value =
            serde_json::from_str(&std::fs::read_to_string(path.join("checks.json")).unwrap())
                .unwrap();
        let passed = checks
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["status"] != "FAILURE");
        results.push((scenario, passed));
    }
    results.sort();
    results
}

#[test]
fn official_conformance_suite_passes_every_active_scenario() {
    let server = Server::start(Command::new(conformance_server()));
    // The suite's DNS-rebinding scenario requires a localhost URL.
    let url = server.url.replace("127.0.0.1", "localhost");
    let out_dir = tempfile::tempdir().unwrap();
    let bin = node_bin();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let child = Command::new(bin.join("conformance"))
        .args(["server", "--url", &url, "--suite", "active", "-o"])
        .arg(out_dir.path())
        .env("PATH", path)
        .current_dir(bin.parent().unwrap().parent().unwrap())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (_, stdout, stderr) = wait_output(child, Duration::from_secs(600));
    let summary = stdout
        .lines()
        .find(|l| l.starts_with("Total: "))
        .unwrap_or_else(|| panic!("no summary line:\n{stdout}\n{stderr}"));
    let results = scenario_results(out_dir.path());
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
        (BTreeSet::from(PASSING), Vec::new()),
        "{summary}"
    );
    assert_eq!(summary, "Total: 40 passed, 0 failed");
}
