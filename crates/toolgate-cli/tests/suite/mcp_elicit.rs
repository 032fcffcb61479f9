//! MCP elicitation through the approval channel, end to end: server-everything's
//! `trigger-elicitation-request` asks for a form mid-call; the request appears in
//! `toolgate approvals list` as `mcp__everything__elicitation`; approving it from another
//! process sends the form's defaults, denying it declines.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use super::harness::{Env, Run, http};

fn peer(rel: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/peers/node_modules")
        .join(rel);
    assert!(
        p.exists(),
        "{} is missing: run scripts/test.sh",
        p.display()
    );
    p.to_string_lossy().into_owned()
}

fn env() -> Env {
    Env::with_config(&format!(
        "[approvals]\npoll_millis = 20\n\n\
         [roles.default]\nrules = [{{ tool = \"mcp__everything__*\", decision = \"allow\" }}]\n\n\
         [[mcp.servers]]\nname = \"everything\"\ncommand = \"{}\"\nargs = [\"{}\", \"stdio\"]\n",
        peer(".bin/node"),
        peer("@modelcontextprotocol/server-everything/dist/index.js"),
    ))
}

/// Calls the tool in the background, waits for its elicitation to be listed, decides it
/// with `decision` (`approve` or `deny`) and returns the call's run.
fn elicit_and(env: &Env, decision: &str) -> Run {
    let mut child = env
        .command()
        .args([
            "call",
            "mcp__everything__trigger-elicitation-request",
            "--args",
            "{}",
            "--no-prompt",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn toolgate");
    let deadline = Instant::now() + Duration::from_secs(60);
    let id = loop {
        let listed = env.run(&["approvals", "list", "--json"]);
        if listed.code == 0
            && let Some(req) = listed.json().as_array().and_then(|a| {
                a.iter()
                    .find(|r| r["tool"] == "mcp__everything__elicitation")
                    .cloned()
            })
        {
            assert_eq!(
                req["arguments"]["message"],
                "Please provide inputs for the following fields:"
            );
            assert_eq!(req["arguments"]["form"]["integer"], 42);
            break req["id"].as_str().expect("an id").to_owned();
        }
        if let Ok(Some(status)) = child.try_wait() {
            let out = child.wait_with_output().expect("output");
            panic!(
                "the call ended ({status}) before its elicitation was listed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        assert!(Instant::now() < deadline, "no elicitation request appeared");
        std::thread::sleep(Duration::from_millis(50));
    };
    let decided = env.run(&["approvals", decision, &id]);
    decided.assert_code(0);
    Run::from_output(child.wait_with_output().expect("wait"))
}

#[test]
fn an_approved_elicitation_sends_the_forms_defaults() {
    let env = env();
    let run = elicit_and(&env, "approve");
    run.assert_code(0);
    assert!(
        run.stdout.contains("It was a dark and stormy night."),
        "{run:#?}"
    );
}

#[test]
fn a_denied_elicitation_is_declined() {
    let env = env();
    let run = elicit_and(&env, "deny");
    assert!(run.stdout.to_lowercase().contains("decline"), "{run:#?}");
    assert!(!run.stdout.contains("stormy night"), "{run:#?}");
}

/// The token-shaped secret the Python peer's `ask` tool puts into its elicitation message
/// (`ELICIT_SECRET` in crates/toolgate-mcp-client/tests/peers/py_peer.py).
const PEER_SECRET: &str = "ghp_Zq7Zq7Zq7Zq7Zq7Zq7Zq7Zq7Zq7Zq7Zq7Zq7";

/// The first SSE events of `/v1/approvals/stream`, up to its `synced` event.
fn stream_backlog(addr: &str) -> String {
    use std::io::{BufRead, BufReader, Write};
    let mut stream = std::net::TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    write!(
        stream,
        "GET /v1/approvals/stream HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\n\r\n"
    )
    .expect("request");
    let mut seen = String::new();
    for line in BufReader::new(stream).lines() {
        let line = line.expect("stream line");
        seen.push_str(&line);
        seen.push('\n');
        if line.starts_with("event: synced") {
            break;
        }
    }
    seen
}

/// Issue 13, item 2: an elicitation is an approval like any other, so the server's
/// question reaches every place an operator reads it — the API's list and item (what the
/// console shows), the approval stream (how the console hears of it) — and the audit log
/// with its secrets masked. The old elicitor stored the message as the server sent it.
/// (`2025-11-25`: the Python SDK asks for input only on a session with a back-channel.)
#[test]
fn an_elicitation_secret_is_masked_in_the_api_the_stream_and_the_audit() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let python = repo.join(".venv/bin/python");
    let peer = repo.join("crates/toolgate-mcp-client/tests/peers/py_peer.py");
    assert!(
        python.exists() && peer.exists(),
        "{} or {} is missing: run scripts/test.sh",
        python.display(),
        peer.display()
    );
    let env = Env::with_config(&format!(
        "[approvals]\npoll_millis = 20\n\n\
         [[mcp.servers]]\nname = \"py\"\ncommand = \"{}\"\nargs = [\"{}\", \"stdio\"]\n\
         protocol = \"2025-11-25\"\ninclude = [\"ask\"]\nrisk = {{ ask = \"read\" }}\n",
        python.display(),
        peer.display()
    ));
    let (mut child, addr) = env.serve();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (_, tools) = http(&addr, "GET", "/v1/tools", None);
        if tools.to_string().contains("mcp__py__ask") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "mcp__py__ask never appeared: {tools}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let caller = addr.clone();
    let call = std::thread::spawn(move || {
        http(
            &caller,
            "POST",
            "/v1/calls",
            Some(&serde_json::json!({"tool": "mcp__py__ask", "arguments": {}})),
        )
    });
    let pending = loop {
        let (status, listed) = http(&addr, "GET", "/v1/approvals", None);
        assert_eq!(status, 200, "{listed}");
        if let Some(r) = listed.as_array().and_then(|a| {
            a.iter()
                .find(|r| r["tool"] == "mcp__py__elicitation")
                .cloned()
        }) {
            break r;
        }
        assert!(Instant::now() < deadline, "no elicitation request appeared");
        std::thread::sleep(Duration::from_millis(50));
    };
    let id = pending["id"].as_str().expect("an id").to_owned();
    let (status, item) = http(&addr, "GET", &format!("/v1/approvals/{id}"), None);
    assert_eq!(status, 200, "{item}");
    let backlog = stream_backlog(&addr);
    for (place, text) in [
        ("the list", pending.to_string()),
        ("the item", item.to_string()),
        ("the stream", backlog.clone()),
    ] {
        assert!(
            !text.contains(PEER_SECRET),
            "{place} shows the secret: {text}"
        );
        assert!(text.contains("[REDACTED]"), "{place}: {text}");
    }
    assert!(backlog.contains(&id), "{backlog}");
    let (status, decided) = http(
        &addr,
        "POST",
        &format!("/v1/approvals/{id}/decision"),
        Some(&serde_json::json!({"approve": false, "reason": "not now"})),
    );
    assert_eq!(status, 200, "{decided}");
    let (status, envelope) = call.join().expect("the call");
    assert_eq!(status, 200, "{envelope}");
    assert_eq!(envelope["ok"], serde_json::json!(true), "{envelope}");
    assert!(
        envelope["data"].to_string().contains("decline"),
        "{envelope}"
    );
    let pid = rustix::process::Pid::from_raw(child.id() as i32).expect("pid");
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).expect("SIGTERM");
    assert!(child.wait().expect("wait").success());

    let log = std::fs::read_to_string(env.audit_path()).expect("the audit log");
    assert!(!log.contains(PEER_SECRET), "the audit holds the secret");
    let elicitation: Vec<(String, String)> = env
        .audit_records()
        .iter()
        .filter(|r| r["tool"] == "mcp__py__elicitation" && r["source"] != "approvals:api")
        .map(|r| {
            (
                r["kind"].as_str().unwrap_or_default().to_owned(),
                r["outcome"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        elicitation,
        [
            ("attempt".to_owned(), "started".to_owned()),
            ("outcome".to_owned(), "approval_denied".to_owned())
        ]
    );
    // The operator's decision is a record of its own, as every decision is.
    let decisions: Vec<serde_json::Value> = env
        .audit_records()
        .into_iter()
        .filter(|r| r["tool"] == "mcp__py__elicitation" && r["source"] == "approvals:api")
        .collect();
    assert_eq!(decisions.len(), 1, "{decisions:?}");
    assert_eq!(decisions[0]["arguments"]["decision"], "deny");
}
