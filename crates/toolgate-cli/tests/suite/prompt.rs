//! The terminal approval channel: on a real pseudo-terminal (util-linux `script`), a call that
//! needs approval asks inline and proceeds on the answer; dangerous tools need the name typed.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::json;

use super::harness::{BIN, Env, Run};

/// Runs `toolgate … call TOOL --args ARGS` on a pty, typing `answers` line by line.
fn on_tty(env: &Env, tool: &str, args: &serde_json::Value, answers: &str) -> (Run, String) {
    let script = which("script");
    let inner = format!(
        "{BIN} --workspace '{}' --data-dir '{}' call {tool} --args '{}'",
        env.root().join("ws").display(),
        env.root().join("data").display(),
        args
    );
    let mut child = Command::new(script)
        .args(["-qfec", &inner, "/dev/null"])
        .env("USER", "tty-user")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn script");
    let mut stdin = child.stdin.take().expect("stdin");
    // Give the prompt time to appear; the pty buffers what arrives early anyway.
    std::thread::sleep(std::time::Duration::from_millis(300));
    stdin.write_all(answers.as_bytes()).expect("type answers");
    std::thread::sleep(std::time::Duration::from_millis(300));
    drop(stdin);
    let out = child.wait_with_output().expect("script finished");
    let transcript = String::from_utf8_lossy(&out.stdout).into_owned();
    (Run::from_output(out), transcript)
}

fn which(tool: &str) -> String {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .expect("sh");
    let path = String::from_utf8_lossy(&found.stdout).trim().to_owned();
    assert!(
        !path.is_empty(),
        "`{tool}` (util-linux) is required for the terminal prompt test"
    );
    path
}

#[test]
fn the_terminal_prompt_approves_inline() {
    let env = Env::new();
    let (_, transcript) = on_tty(
        &env,
        "write_file",
        &json!({"path": "t.txt", "content": "tty"}),
        "o\n",
    );
    assert!(
        transcript.contains("approval needed: write_file (write risk)"),
        "{transcript}"
    );
    assert!(transcript.contains("\"ok\": true"), "{transcript}");
    assert_eq!(env.read("t.txt"), "tty");
    let rec = env
        .audit_records()
        .into_iter()
        .rfind(|r| r["kind"] == "outcome")
        .expect("outcome");
    assert_eq!(
        (rec["outcome"].as_str(), rec["approver"].as_str()),
        (Some("ok"), Some("tty-user"))
    );
}

#[test]
fn the_terminal_prompt_denies_and_checks_the_typed_confirmation() {
    let env = Env::new();
    let (_, transcript) = on_tty(
        &env,
        "write_file",
        &json!({"path": "d.txt", "content": "x"}),
        "d\n",
    );
    assert!(
        transcript.contains("\"code\": \"approval_denied\""),
        "{transcript}"
    );
    assert!(!env.root().join("ws/d.txt").exists());

    // A wrong name is not a confirmation; the prompt asks again, then the right name passes.
    let (_, transcript) = on_tty(
        &env,
        "shell",
        &json!({"command": "echo confirmed"}),
        "o\nshel\no\nshell\n",
    );
    assert!(
        transcript.contains("confirmation did not match"),
        "{transcript}"
    );
    assert!(transcript.contains("confirmed\\n"), "{transcript}");
}
