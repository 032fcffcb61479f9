//! The official MCP conformance suite in client mode (`@modelcontextprotocol/conformance`
//! 0.1.16, `--suite all`: 26 scenarios) against `toolgate-mcp-conformance`
//! (`src/bin/`), which drives toolgate's HTTP client and OAuth module. Every scenario
//! passes except the ones in `conformance-expected-failures.yml`, which must fail (the suite
//! itself rejects a run where a listed scenario passes).

use std::collections::BTreeMap;
use std::process::Command;

use crate::peers::{node, repo_root};

const EXPECTED_FAILURES: [&str; 3] = [
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/client-credentials-jwt",
    "auth/cross-app-access-complete-flow",
];

const PASSING: [&str; 23] = [
    "auth/2025-03-26-oauth-endpoint-fallback",
    "auth/basic-cimd",
    "auth/client-credentials-basic",
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/offline-access-not-supported",
    "auth/offline-access-scope",
    "auth/pre-registration",
    "auth/resource-mismatch",
    "auth/scope-from-scopes-supported",
    "auth/scope-from-www-authenticate",
    "auth/scope-omitted-when-undefined",
    "auth/scope-retry-limit",
    "auth/scope-step-up",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-none",
    "auth/token-endpoint-auth-post",
    "elicitation-sep1034-client-defaults",
    "initialize",
    "sse-retry",
    "tools_call",
];

#[test]
fn official_conformance_suite_client_mode() {
    let peers = repo_root().join("tests/peers");
    let cli = peers.join("node_modules/@modelcontextprotocol/conformance/dist/index.js");
    assert!(
        cli.exists(),
        "the conformance suite is missing at {}: run scripts/test.sh",
        cli.display()
    );
    let expected = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/suite/conformance-expected-failures.yml");
    let client = env!("CARGO_BIN_EXE_toolgate-mcp-conformance");
    let output = Command::new(node())
        .current_dir(&peers)
        .arg(&cli)
        .args([
            "client",
            "--suite",
            "all",
            "--timeout",
            "60000",
            "--command",
            client,
        ])
        .arg("--expected-failures")
        .arg(&expected)
        .output()
        .expect("node runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    // Summary lines: `✓ name: N passed, 0 failed` or `✗ name: …`.
    let verdicts: BTreeMap<String, bool> = text
        .lines()
        .filter_map(|line| {
            let (mark, rest) = line.split_once(' ')?;
            let passed = match mark {
                "✓" => true,
                "✗" => false,
                _ => return None,
            };
            Some((rest.split_once(':')?.0.to_owned(), passed))
        })
        .collect();
    let mut want: BTreeMap<String, bool> =
        PASSING.iter().map(|s| ((*s).to_owned(), true)).collect();
    want.extend(EXPECTED_FAILURES.iter().map(|s| ((*s).to_owned(), false)));
    assert_eq!(verdicts, want, "suite output:\n{text}");
    assert!(output.status.success(), "suite output:\n{text}");
}
