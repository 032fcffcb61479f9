//! Trace context through the gateway (issue 14 item 4, SEP-414): whatever way a caller sends a
//! W3C `traceparent` — an MCP request's `_meta` (2026-07-28 stateless or a 2025-11-25 session,
//! rmcp's path or the JSON fast path), the headers of the POST, or `/v1/calls` headers — the
//! federated server receives it in the `_meta` of toolgate's own request, over either
//! protocol era toolgate speaks to it. Nothing is invented when the caller sent nothing.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::harness::{Env, http};

const SDK: &str = "00-11111111111111111111111111111111-1111111111111111-01";
const META: &str = "00-22222222222222222222222222222222-2222222222222222-01";
const HEADER: &str = "00-33333333333333333333333333333333-3333333333333333-00";
const API: &str = "00-44444444444444444444444444444444-4444444444444444-01";
const STREAM: &str = "00-55555555555555555555555555555555-5555555555555555-01";

fn seen(traceparent: Option<&str>, tracestate: Option<&str>) -> Value {
    json!({"traceparent": traceparent, "tracestate": tracestate})
}

#[test]
fn the_callers_trace_context_reaches_the_federated_server_in_meta() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let python = repo.join(".venv/bin/python");
    let peer = repo.join("crates/toolgate-mcp-client/tests/peers/py_peer.py");
    let client = repo.join("crates/toolgate-cli/tests/peers/trace_client.py");
    assert!(
        python.exists(),
        "{} is missing: run scripts/test.sh",
        python.display()
    );
    // The same server twice: toolgate speaks 2026-07-28 to one and 2025-11-25 to the other.
    let server = |name: &str, protocol: &str| {
        format!(
            "[[mcp.servers]]\nname = \"{name}\"\ncommand = \"{}\"\nargs = [\"{}\", \"stdio\"]\n\
             trusted = true\n{protocol}risk = {{ trace = \"read\" }}\n",
            python.display(),
            peer.display()
        )
    };
    let env = Env::with_config(&format!(
        "{}{}",
        server("new", ""),
        server("old", "protocol = \"2025-11-25\"\n")
    ));
    let (mut child, addr) = env.serve();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let listed = http(&addr, "GET", "/v1/tools", None).1.to_string();
        if listed.contains("mcp__new__trace") && listed.contains("mcp__old__trace") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the tools never arrived: {listed}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let status = env.run(&["mcp", "status", "--json"]).json();
    let eras: Vec<(&Value, &Value)> = status
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (&s["name"], &s["protocol_version"]))
        .collect();
    assert_eq!(
        eras,
        [
            (&json!("new"), &json!("2026-07-28")),
            (&json!("old"), &json!("2025-11-25"))
        ],
        "{status}"
    );
    for tool in ["mcp__new__trace", "mcp__old__trace"] {
        let out = Command::new(&python)
            .arg(&client)
            .args(["--url", &format!("http://{addr}"), "--tool", tool])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let got: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            got,
            json!({
                "sdk": seen(Some(SDK), Some("vendor=sdk")),
                // _meta wins over the headers of the POST that carried it.
                "meta": seen(Some(META), Some("vendor=meta")),
                "header": seen(Some(HEADER), Some("vendor=header")),
                "api": seen(Some(API), Some("vendor=api")),
                "none": seen(None, None),
                "session_stream": seen(Some(STREAM), None),
            }),
            "{tool} ({status})"
        );
    }
    let _ = child.kill();
    let _ = child.wait();
}
