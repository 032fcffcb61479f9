//! Real MCP clients against `toolgate serve`: the Python SDK 2.x (modes `auto` — which
//! opens with `server/discover` — and `legacy`) and fastmcp 4.x, over stdio (spawning
//! `toolgate serve --stdio`) and Streamable HTTP. Each lists the tools, reads a file and a
//! directory, sees invalid arguments and an unknown tool as `isError` results, and writes a
//! file that needs approval:
//! - the SDK client sends no progress token: it gets `approval_required` naming the id,
//!   an operator approves with the CLI, and the identical call retried proceeds;
//! - fastmcp always sends a progress token: its call waits, receives progress notifications
//!   naming the approval, and completes once the operator approves.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use super::peers::{Server, client_script, python, report, toolgate};

const HELLO: &str = "hello from the workspace\n";

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hello.txt"), HELLO).unwrap();
    // HTTP callers without a token act in role `default` (reads allowed, writes asked).
    std::fs::write(
        dir.path().join("toolgate.toml"),
        "[server.anonymous]\nrole = \"default\"\nprincipal = \"mcp-tester\"\n",
    )
    .unwrap();
    dir
}

#[derive(Clone, Copy)]
enum Transport {
    Stdio,
    Http,
}

fn client(ws: &Path, transport: Transport, url: &str, args: &[&str]) -> Command {
    let mut c = Command::new(python());
    c.arg(client_script()).args(args).current_dir(ws);
    match transport {
        Transport::Stdio => {
            c.arg("--command")
                .arg(toolgate())
                .arg("--arg=serve")
                .arg("--arg=--stdio");
        }
        Transport::Http => {
            c.arg("--url").arg(url);
        }
    }
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    c
}

fn serve_http(ws: &Path) -> Server {
    let mut c = Command::new(toolgate());
    c.args(["serve", "--listen", "127.0.0.1:0"]).current_dir(ws);
    Server::start(c)
}

fn cli(ws: &Path, args: &[&str]) -> String {
    let out = Command::new(toolgate())
        .args(args)
        .current_dir(ws)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "toolgate {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The id of the one pending approval, once it exists (bounded wait).
fn pending_approval(ws: &Path) -> String {
    for _ in 0..600 {
        let list: Value = serde_json::from_str(&cli(ws, &["approvals", "list", "--json"])).unwrap();
        if let Some(id) = list[0]["id"].as_str() {
            return id.to_owned();
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("no approval request appeared");
}

fn tool_text(value: Value) -> Value {
    json!({"is_error": false, "structured": value, "texts": [value.to_string()]})
}

/// What the first phase shows, whatever the client; `write` differs by client.
fn expected_first(write: Value) -> Value {
    json!({
        "tools": ["edit_file", "list_dir", "read_file", "read_result", "search_files", "shell", "write_file"],
        "list_dir": tool_text(json!({"entries": [{"path": "hello.txt", "size": HELLO.len(), "type": "file"}],
            "path": ".", "truncated": false})),
        "read_file": tool_text(json!({"content": HELLO, "encoding": "utf-8", "lines_returned": 1,
            "path": "hello.txt", "start_line": 1, "total_lines": 1, "truncated": false})),
        "invalid": {"code": "invalid_arguments", "is_error": true, "retryable": false},
        "unknown": {"code": "unknown_tool", "is_error": true, "retryable": false},
        "write": write,
    })
}

fn written() -> Value {
    tool_text(json!({"bytes_written": 16, "created": true, "path": "out.txt"}))
}

/// SDK client: approval_required naming the id → approve with the CLI → retry → ok.
fn retry_after_approval(transport: Transport, mode: &str) {
    let ws = workspace();
    let server = matches!(transport, Transport::Http).then(|| serve_http(ws.path()));
    let url = server
        .as_ref()
        .map_or(String::new(), |s| format!("{}/mcp", s.url));
    let args = ["--client", "mcp", "--mode", mode, "--phase", "first"];
    let mut first = report(client(ws.path(), transport, &url, &args).spawn().unwrap());
    let id = first["write"]["approval_id"].as_str().unwrap().to_owned();
    first["write"]["approval_id"] = json!("<id>");
    assert_eq!(
        first,
        expected_first(
            json!({"approval_id": "<id>", "code": "approval_required", "is_error": true,
            "message_names_id": true, "retryable": true})
        )
    );
    assert!(!ws.path().join("out.txt").exists());
    assert_eq!(pending_approval(ws.path()), id);
    cli(ws.path(), &["approvals", "approve", &id]);
    let args = ["--client", "mcp", "--mode", mode, "--phase", "retry"];
    let retry = report(client(ws.path(), transport, &url, &args).spawn().unwrap());
    assert_eq!(retry, json!({"write": written()}));
    assert_eq!(
        std::fs::read_to_string(ws.path().join("out.txt")).unwrap(),
        "written over MCP"
    );
}

/// fastmcp: the write waits with progress naming the approval until the CLI approves it.
fn wait_for_approval(transport: Transport, mode: &str) {
    let ws = workspace();
    let server = matches!(transport, Transport::Http).then(|| serve_http(ws.path()));
    let url = server
        .as_ref()
        .map_or(String::new(), |s| format!("{}/mcp", s.url));
    let args = ["--client", "fastmcp", "--mode", mode, "--phase", "first"];
    let child = client(ws.path(), transport, &url, &args).spawn().unwrap();
    let id = pending_approval(ws.path());
    cli(ws.path(), &["approvals", "approve", &id]);
    let mut got = report(child);
    let progress = got
        .as_object_mut()
        .unwrap()
        .remove("progress")
        .expect("progress notifications while waiting");
    let message = format!(
        "waiting for approval {id} of `write_file`: an operator approves with `toolgate approvals approve {id}` or in the console"
    );
    let progress = progress.as_array().unwrap();
    assert!(!progress.is_empty());
    for (n, p) in progress.iter().enumerate() {
        assert_eq!(p, &json!({"progress": (n + 1) as f64, "message": message}));
    }
    assert_eq!(got, expected_first(written()));
}

#[test]
fn python_sdk_auto_over_stdio() {
    retry_after_approval(Transport::Stdio, "auto");
}

#[test]
fn python_sdk_legacy_over_stdio() {
    retry_after_approval(Transport::Stdio, "legacy");
}

#[test]
fn python_sdk_auto_over_http() {
    retry_after_approval(Transport::Http, "auto");
}

#[test]
fn python_sdk_legacy_over_http() {
    retry_after_approval(Transport::Http, "legacy");
}

#[test]
fn fastmcp_auto_over_stdio() {
    wait_for_approval(Transport::Stdio, "auto");
}

#[test]
fn fastmcp_legacy_over_stdio() {
    wait_for_approval(Transport::Stdio, "legacy");
}

#[test]
fn fastmcp_auto_over_http() {
    wait_for_approval(Transport::Http, "auto");
}

#[test]
fn fastmcp_legacy_over_http() {
    wait_for_approval(Transport::Http, "legacy");
}

/// A role that cannot see `write_file` is told it does not exist, in the same words as a
/// tool that really does not exist (and no hint points at hidden tools).
#[test]
fn hidden_tools_look_like_unknown_tools() {
    let ws = workspace();
    std::fs::write(
        ws.path().join("toolgate.toml"),
        "[roles.reader]\ntools = [\"read_file\", \"list_dir\"]\n",
    )
    .unwrap();
    let mut c = Command::new(python());
    c.arg(client_script())
        .args(["--client", "mcp", "--mode", "legacy", "--phase", "hidden"])
        .arg("--command")
        .arg(toolgate())
        .args([
            "--arg=serve",
            "--arg=--stdio",
            "--arg=--role",
            "--arg=reader",
        ])
        .current_dir(ws.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let got = report(c.spawn().unwrap());
    let unknown = |name: &str| {
        json!({"code": "unknown_tool", "message": format!("no tool named `{name}`"),
            "retryable": false, "hint": "tools/list shows the tools you can call"})
    };
    assert_eq!(
        got,
        json!({
            "tools": ["list_dir", "read_file"],
            "write_file": unknown("write_file"),
            "no_such_tool": unknown("no_such_tool"),
        })
    );
}
