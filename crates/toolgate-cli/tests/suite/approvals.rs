//! Approvals across processes: each `toolgate` run is a fresh process, so every test here
//! shows that requests, decisions and grants live in the store and survive a restart.

use serde_json::json;

use super::harness::{Env, USER, approval_id, approval_required, success};

/// A non-interactive call that must need approval; returns the approval id.
fn needs_approval(env: &Env, pre: &[&str], tool: &str, args: &serde_json::Value) -> String {
    let run = env.call_with(pre, tool, args, &[]);
    run.assert_code(3);
    let id = approval_id(&run.json());
    let confirm = tool == "shell";
    assert_eq!(
        run.envelope(),
        approval_required(&run.json(), tool, &id, confirm)
    );
    id
}

fn written(path: &str, bytes: usize, created: bool) -> serde_json::Value {
    success(json!({"path": path, "bytes_written": bytes, "created": created}))
}

#[test]
fn approve_once_from_another_process_lets_exactly_one_identical_call_through() {
    let env = Env::new();
    let args = json!({"path": "b.txt", "content": "hello"});
    let id = needs_approval(&env, &[], "write_file", &args);
    assert!(!env.ws.join("b.txt").exists());

    let listed = env.run(&["approvals", "list", "--json"]);
    listed.assert_code(0);
    let listed = listed.json();
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{listed}");
    let pending = &listed[0];
    assert_eq!(
        (
            &pending["id"],
            &pending["status"],
            &pending["tool"],
            &pending["arguments"]
        ),
        (&json!(id), &json!("pending"), &json!("write_file"), &args)
    );
    assert_eq!(
        (
            &pending["principal"],
            &pending["session"],
            &pending["role"],
            &pending["consumed"]
        ),
        (
            &json!(format!("cli:{USER}")),
            &json!("cli"),
            &json!("default"),
            &json!(false)
        )
    );

    let approve = env.approve(&id, &[]);
    assert_eq!(
        approve.stdout,
        format!("approved {id} (write_file, Once) — the identical call will now proceed\n")
    );
    let run = env.call("write_file", &args);
    run.assert_code(0);
    assert_eq!(run.envelope(), written("b.txt", 5, true));
    assert_eq!(env.read("b.txt"), "hello");

    // The audit names the approval and approver on the attempt record.
    let attempt = env
        .audit_records()
        .into_iter()
        .find(|r| r["kind"] == "attempt")
        .expect("an attempt record");
    assert_eq!(
        (&attempt["approval_id"], &attempt["approver"]),
        (&json!(id), &json!(USER))
    );

    // Once means once: the third identical call needs a new approval.
    let again = needs_approval(&env, &[], "write_file", &args);
    assert_ne!(again, id);
    let all = env.run(&["approvals", "list", "--all", "--json"]).json();
    let first = all
        .as_array()
        .and_then(|l| l.iter().find(|r| r["id"] == id.as_str()))
        .expect("the first request is still listed");
    assert_eq!(
        (&first["status"], &first["consumed"], &first["decided_by"]),
        (&json!("approved"), &json!(true), &json!(USER))
    );
}

#[test]
fn session_scope_covers_the_tool_in_that_session_only() {
    let env = Env::new();
    let session = ["--session", "s1"];
    let id = env.call_with(
        &[],
        "write_file",
        &json!({"path": "s.txt", "content": "1"}),
        &session,
    );
    id.assert_code(3);
    let id = approval_id(&id.json());
    env.approve(&id, &["--scope", "session"]);

    for (path, content) in [("s.txt", "1"), ("t.txt", "22"), ("u.txt", "333")] {
        let run = env.call_with(
            &[],
            "write_file",
            &json!({"path": path, "content": content}),
            &session,
        );
        run.assert_code(0);
        assert_eq!(run.envelope(), written(path, content.len(), true));
        assert_eq!(env.read(path), content);
    }
    let other = env.call_with(
        &[],
        "write_file",
        &json!({"path": "v.txt", "content": "4"}),
        &["--session", "s2"],
    );
    other.assert_code(3);
    assert!(!env.ws.join("v.txt").exists());
}

#[test]
fn dangerous_tool_needs_the_typed_confirmation() {
    let env = Env::new();
    let args = json!({"command": "echo hi"});
    let id = needs_approval(&env, &[], "shell", &args);

    let expected = format!(
        "toolgate: error: {id}: this is a dangerous tool: type its name `shell` to confirm\n"
    );
    let bare = env.run(&["approvals", "approve", &id]);
    bare.assert_code(1);
    assert_eq!(bare.stderr, expected);
    let wrong = env.run(&["approvals", "approve", &id, "--confirm", "sh"]);
    wrong.assert_code(1);
    assert_eq!(wrong.stderr, expected);
    // Neither attempt approved anything.
    needs_approval(&env, &[], "shell", &args);

    env.approve(&id, &["--confirm", "shell"]);
    let run = env.call("shell", &args);
    run.assert_code(0);
    let mut data = run.json()["data"].clone();
    assert!(data["duration_ms"].is_u64(), "{data}");
    data["duration_ms"] = json!(0);
    assert_eq!(
        data,
        json!({"duration_ms": 0, "exit_code": 0, "stderr": "", "stderr_bytes": 0,
               "stderr_truncated": false, "stdout": "hi\n", "stdout_bytes": 3,
               "stdout_truncated": false, "sandbox": "namespaces+landlock+seccomp"})
    );
}

#[test]
fn always_scope_with_a_pattern_covers_matching_arguments_only() {
    let env = Env::new();
    let id = needs_approval(
        &env,
        &[],
        "write_file",
        &json!({"path": "notes/a.txt", "content": "a"}),
    );
    env.approve(
        &id,
        &["--scope", "always", "--pattern", r#"{"path":"notes/*"}"#],
    );

    for (path, content) in [("notes/a.txt", "a"), ("notes/x", "other content")] {
        let run = env.call("write_file", &json!({"path": path, "content": content}));
        run.assert_code(0);
        assert_eq!(run.envelope(), written(path, content.len(), true));
    }
    // Another session: "always" is not tied to the session.
    let run = env.call_with(
        &[],
        "write_file",
        &json!({"path": "notes/y", "content": "y"}),
        &["--session", "elsewhere"],
    );
    run.assert_code(0);

    needs_approval(
        &env,
        &[],
        "write_file",
        &json!({"path": "other/x", "content": "x"}),
    );
    assert!(!env.ws.join("other/x").exists());
}

#[test]
fn an_unknown_approval_id_is_named_once_with_what_to_do() {
    let env = Env::new();
    for args in [
        &["approvals", "approve", "apr_nope"][..],
        &["approvals", "deny", "apr_nope"],
        &["approvals", "show", "apr_nope"],
    ] {
        let run = env.run(args);
        run.assert_code(1);
        assert_eq!(
            run.stderr,
            "toolgate: error: no approval request apr_nope (see `toolgate approvals list --all`)\n",
            "{args:?}"
        );
    }
}

/// Starts a call that waits for its approval (`[approvals] wait = true`).
fn spawn_waiting_call(env: &Env, args: &serde_json::Value) -> std::process::Child {
    env.command()
        .args([
            "call",
            "write_file",
            "--args",
            &args.to_string(),
            "--no-prompt",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn toolgate")
}

/// The id of the one pending request, once the waiting `child` has created it. A child that
/// exits first fails the test with its output rather than a bare timeout.
fn pending_id(env: &Env, child: &mut std::process::Child) -> String {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let listed = env.run(&["approvals", "list", "--json"]);
        if listed.code == 0
            && let Some(id) = listed.json()[0]["id"].as_str()
        {
            return id.to_owned();
        }
        if let Ok(Some(status)) = child.try_wait() {
            let mut out = String::new();
            let mut err = String::new();
            if let Some(mut pipe) = child.stdout.take() {
                let _ = std::io::Read::read_to_string(&mut pipe, &mut out);
            }
            if let Some(mut pipe) = child.stderr.take() {
                let _ = std::io::Read::read_to_string(&mut pipe, &mut err);
            }
            panic!(
                "the waiting call exited ({status}) before its approval request was listed\n\
                 stdout: {out}\nstderr: {err}\nlast `approvals list`: code {} {} {}",
                listed.code, listed.stdout, listed.stderr
            );
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no approval request appeared in 60 s; last `approvals list`: code {} {} {}",
            listed.code,
            listed.stdout,
            listed.stderr
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn a_waiting_call_resumes_when_another_process_approves() {
    let env = Env::with_config("[approvals]\nwait = true\npoll_millis = 20\n");
    let args = json!({"path": "w.txt", "content": "waited"});
    let mut child = spawn_waiting_call(&env, &args);
    let id = pending_id(&env, &mut child);
    env.approve(&id, &[]);
    let run = super::harness::Run::from_output(child.wait_with_output().expect("wait"));
    run.assert_code(0);
    assert_eq!(run.envelope(), written("w.txt", 6, true));
    assert_eq!(env.read("w.txt"), "waited");
}

#[test]
fn a_waiting_call_is_cancelled_by_sigint() {
    let env = Env::with_config("[approvals]\nwait = true\npoll_millis = 20\n");
    let mut child = spawn_waiting_call(&env, &json!({"path": "w.txt", "content": "x"}));
    let id = pending_id(&env, &mut child);
    let pid = rustix::process::Pid::from_raw(child.id() as i32).expect("a pid");
    rustix::process::kill_process(pid, rustix::process::Signal::INT).expect("send SIGINT");
    let run = super::harness::Run::from_output(child.wait_with_output().expect("wait"));
    run.assert_code(2);
    assert_eq!(
        run.envelope(),
        super::harness::failure(json!({
            "code": "cancelled",
            "message": format!(
                "cancelled while waiting for approval {id}; the request is abandoned and can \
                 no longer be approved"
            ),
            "retryable": false}))
    );
    assert!(!env.ws.join("w.txt").exists());
    // Nobody waits for it any more: an operator arriving late is refused.
    let late = env.run(&["approvals", "approve", &id]);
    assert_ne!(late.code, 0, "{}", late.stdout);
    assert!(late.stderr.contains("was abandoned"), "{}", late.stderr);
}

/// Issue 12, item 2: a command padded past 2,000 characters with spaces, its dangerous part
/// at the end. `approvals show` prints it whole (and with the padding made visible), the
/// listing's summary shows what follows the padding; the same for `write_file` content.
#[test]
fn approvals_show_reveals_a_payload_hidden_after_2100_spaces() {
    let env = Env::new();
    let command = format!("echo hi{}; echo SNEAKY > f", " ".repeat(2100));
    let id = needs_approval(&env, &[], "shell", &json!({"command": command}));
    let shown = env.run(&["approvals", "show", &id]);
    shown.assert_code(0);
    assert!(
        shown.stdout.contains("; echo SNEAKY > f"),
        "{}",
        shown.stdout
    );
    let shown = shown.json();
    assert_eq!(shown["arguments"]["command"], json!(command));
    assert_eq!(
        shown["arguments_view"]["command"],
        json!("echo hi⟨2100 spaces⟩; echo SNEAKY > f")
    );
    assert_eq!(shown["arguments_hidden"], json!(true));
    let listed = env.run(&["approvals", "list"]);
    listed.assert_code(0);
    assert!(
        listed.stdout.contains("⟨2100 spaces⟩; echo SNEAKY > f"),
        "{}",
        listed.stdout
    );

    let content = format!("harmless{}\nrm -rf ~\n", "\n".repeat(3000));
    let args = json!({"path": "run.sh", "content": content});
    let id = needs_approval(&env, &[], "write_file", &args);
    let shown = env.run(&["approvals", "show", &id]).json();
    assert_eq!(shown["arguments"]["content"], json!(content));
    assert_eq!(
        shown["arguments_view"]["content"],
        json!("harmless⟨3001 newlines⟩rm -rf ~\n")
    );
}
