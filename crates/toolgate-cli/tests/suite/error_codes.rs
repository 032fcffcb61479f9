//! Every error code of the closed vocabulary that a `toolgate call` can produce, as the whole
//! envelope on stdout with its exit status — and each attempt recorded in the audit with the
//! same outcome. (`unavailable` and `cancelled` are covered elsewhere or noted as unreachable:
//! see `cancelled_on_sigint` in this file.)

use serde_json::{Value, json};

use super::harness::{Env, Run, USER, approval_id, approval_required, call_id, failure};

/// The outcome records in the audit, as `(call_id, outcome)` in log order.
fn audited(env: &Env) -> Vec<(String, String)> {
    env.audit_records()
        .iter()
        .filter(|r| r["kind"] == "outcome")
        .map(|r| {
            (
                r["call_id"].as_str().unwrap_or_default().to_owned(),
                r["outcome"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// Asserts the envelope (whole) and exit code, and returns the call id.
fn expect(run: &Run, code: i32, envelope: &Value) -> String {
    run.assert_code(code);
    assert_eq!(&run.envelope(), envelope, "{run:#?}");
    call_id(&run.json())
}

#[test]
fn unknown_tool_and_forbidden() {
    let env = Env::with_config("[roles.reader]\ntools = [\"read_file\"]\n");
    let unknown = expect(
        &env.call("nope", &json!({})),
        2,
        &failure(json!({
            "code": "unknown_tool", "message": "no tool named `nope`", "retryable": false,
            "hint": "`toolgate tools list` shows the available tools"})),
    );
    let forbidden = expect(
        &env.call_with(&["--role", "reader"], "list_dir", &json!({}), &[]),
        2,
        &failure(json!({
            "code": "forbidden", "message": "role `reader` may not call `list_dir`",
            "retryable": false,
            "hint": "call with a token of a role whose `tools` allowlist names `list_dir` (an operator issues one: `toolgate token create --principal NAME --role ROLE`), or add it to role `reader`'s `tools` in toolgate.toml"})),
    );
    assert_eq!(
        audited(&env),
        vec![
            (unknown, "unknown_tool".to_owned()),
            (forbidden, "forbidden".to_owned())
        ]
    );
}

#[test]
fn invalid_arguments_schema_violations_malformed_json_and_unknown_fields() {
    let env = Env::new();
    let schema_hint =
        "fix every listed field and call again; `toolgate tools show NAME` prints the schema";
    let violations = expect(
        &env.call("read_file", &json!({"path": 5, "limit": 0})),
        2,
        &failure(json!({
            "code": "invalid_arguments",
            "message": "arguments do not match the input schema of `read_file`: \
                /limit: 0 is less than the minimum of 1; /path: 5 is not of type \"string\"",
            "retryable": false,
            "hint": schema_hint,
            "details": {"count": 2, "violations": [
                {"path": "/limit", "message": "0 is less than the minimum of 1",
                 "schema_path": "/properties/limit/minimum"},
                {"path": "/path", "message": "5 is not of type \"string\"",
                 "schema_path": "/properties/path/type"},
            ]},
        })),
    );
    let malformed = expect(
        &env.run(&["call", "read_file", "--args", "{\"path\":", "--no-prompt"]),
        2,
        &failure(json!({
            "code": "invalid_arguments",
            "message": "arguments are not valid JSON: EOF while parsing a value at line 1 column 8",
            "retryable": false,
            "hint": "send one JSON object, e.g. {\"path\": \"src/main.rs\"}",
        })),
    );
    let unknown_field = expect(
        &env.call("read_file", &json!({"path": "a.txt", "mode": "fast"})),
        2,
        &failure(json!({
            "code": "invalid_arguments",
            "message": "arguments do not match the input schema of `read_file`: \
                /: Additional properties are not allowed ('mode' was unexpected)",
            "retryable": false,
            "hint": schema_hint,
            "details": {"count": 1, "violations": [
                {"path": "/", "message": "Additional properties are not allowed ('mode' was unexpected)",
                 "schema_path": "/additionalProperties"},
            ]},
        })),
    );
    let invalid = "invalid_arguments".to_owned();
    assert_eq!(
        audited(&env),
        vec![
            (violations, invalid.clone()),
            (malformed, invalid.clone()),
            (unknown_field, invalid)
        ]
    );
    // Arguments that never parsed are still audited, as the raw text.
    let rec = env.outcome_of(&audited(&env)[1].0);
    assert_eq!(rec["arguments"], json!({"_unparsed": "{\"path\":"}));
}

#[test]
fn policy_denied_for_path_escapes_and_a_denying_role() {
    let env = Env::with_config("[roles.nowrite]\nwrite = \"deny\"\n");
    let dotdot = expect(
        &env.call("read_file", &json!({"path": "../secret.txt"})),
        2,
        &failure(json!({
            "code": "policy_denied",
            "message": "path `../secret.txt` contains `..`; paths must stay inside the workspace \
                and `..` components are refused outright",
            "retryable": false})),
    );
    let absolute = expect(
        &env.call("read_file", &json!({"path": "/etc/hostname"})),
        2,
        &failure(json!({
            "code": "policy_denied",
            "message": "path `/etc/hostname` is absolute; use a path relative to the workspace root",
            "retryable": false})),
    );
    let role = expect(
        &env.call_with(
            &["--role", "nowrite"],
            "write_file",
            &json!({"path": "x.txt", "content": "x"}),
            &[],
        ),
        2,
        &failure(json!({
            "code": "policy_denied",
            "message": "policy denies `write_file` (write risk) for role `nowrite`",
            "retryable": false,
            "hint": "call with a role whose policy allows it (an operator issues a token of that role: `toolgate token create --principal NAME --role ROLE`), or ask an operator to change role `nowrite`'s policy in toolgate.toml"})),
    );
    assert!(!env.ws.join("x.txt").exists());
    let denied = "policy_denied".to_owned();
    assert_eq!(
        audited(&env),
        vec![
            (dotdot, denied.clone()),
            (absolute, denied.clone()),
            (role, denied)
        ]
    );
}

#[test]
fn approval_required_then_denied_then_asked_afresh() {
    let env = Env::new();
    let args = json!({"path": "b.txt", "content": "x"});
    let run = env.call("write_file", &args);
    run.assert_code(3);
    let id = approval_id(&run.json());
    assert_eq!(
        run.envelope(),
        approval_required(&run.json(), "write_file", &id, false)
    );
    let deny = env.run(&["approvals", "deny", &id, "--reason", "not today"]);
    deny.assert_code(0);
    assert_eq!(deny.stdout, format!("denied {id} (write_file)\n"));

    let denied = env.call("write_file", &args);
    expect(
        &denied,
        2,
        &failure(json!({
            "code": "approval_denied",
            "message": format!("{id} was denied by {USER}: not today"),
            "retryable": false,
            "hint": "do not retry the same call; change the approach or ask the user",
            "details": {"approval_id": id}})),
    );
    assert!(!env.ws.join("b.txt").exists());
    // The denial is reported once; the next identical call asks again under a new id.
    let again = env.call("write_file", &args);
    again.assert_code(3);
    let new_id = approval_id(&again.json());
    assert_ne!(new_id, id);
    assert_eq!(
        again.envelope(),
        approval_required(&again.json(), "write_file", &new_id, false)
    );
}

#[test]
fn approval_expired_after_the_ttl() {
    let env = Env::with_config("[approvals]\nttl_secs = 1\n");
    let args = json!({"path": "b.txt", "content": "x"});
    let run = env.call("write_file", &args);
    run.assert_code(3);
    let id = approval_id(&run.json());
    std::thread::sleep(std::time::Duration::from_millis(1500));
    expect(
        &env.call("write_file", &args),
        2,
        &failure(json!({
            "code": "approval_expired",
            "message": format!("{id} expired before anyone decided"),
            "retryable": true,
            "hint": "call again to create a new approval request",
            "details": {"approval_id": id}})),
    );
    // Approving it now is refused: the request is no longer pending.
    let late = env.run(&["approvals", "approve", &id]);
    late.assert_code(1);
    assert!(!env.ws.join("b.txt").exists());
}

#[test]
fn execution_failed_when_the_tool_fails() {
    let env = Env::with_config("[files]\nmax_read_bytes = 10\n");
    env.write("big.txt", "0123456789abcdef\n");
    let id = expect(
        &env.call("read_file", &json!({"path": "big.txt"})),
        2,
        &failure(json!({
            "code": "execution_failed",
            "message": "`big.txt` is 17 bytes, over the 10-byte limit; read a window with offset \
                and limit, or find the lines you need with search_files",
            "retryable": false})),
    );
    assert_eq!(audited(&env), vec![(id, "execution_failed".to_owned())]);
}

#[test]
fn timeout_stops_a_slow_shell_command() {
    let env = Env::with_config(
        "[limits]\ncall_timeout_secs = 1\n\
         [roles.ops]\nrules = [{tool = \"shell\", decision = \"allow\"}]\n",
    );
    let sleep = marker();
    let id = expect(
        &env.call_with(
            &["--role", "ops"],
            "shell",
            &json!({"command": format!("exec sleep {sleep}")}),
            &[],
        ),
        2,
        &failure(json!({
            "code": "timeout", "message": "`shell` did not finish within 1s", "retryable": true})),
    );
    assert_eq!(audited(&env), vec![(id, "timeout".to_owned())]);
    assert_gone(&sleep);
}

/// A `sleep` duration (about 30 s) no other process uses. Inside the sandbox's PID
/// namespace `$$` means nothing to the host, so the command is found by its arguments.
fn marker() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .subsec_nanos();
    format!("30.{}{nanos:09}", std::process::id())
}

/// No live process has `arg` among its arguments (zombies may linger until reaped).
fn assert_gone(arg: &str) {
    let running = || {
        std::fs::read_dir("/proc")
            .expect("/proc")
            .filter_map(|e| e.ok()?.file_name().into_string().ok()?.parse::<u32>().ok())
            .filter(|pid| {
                let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
                let state = stat.rsplit(") ").next().and_then(|s| s.chars().next());
                !stat.is_empty() && state != Some('Z')
            })
            .filter(|pid| {
                std::fs::read(format!("/proc/{pid}/cmdline"))
                    .is_ok_and(|c| c.split(|&b| b == 0).any(|a| a == arg.as_bytes()))
            })
            .collect::<Vec<_>>()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !running().is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(running(), Vec::<u32>::new(), "`sleep {arg}` still runs");
}

/// The data `read_file` returns for a one-line file, as result governance measures it.
fn read_file_data(path: &str, content: &str) -> Value {
    json!({
        "content": content, "encoding": "utf-8", "lines_returned": 1, "path": path,
        "start_line": 1, "total_lines": 1, "truncated": false,
    })
}

#[test]
fn result_too_large_over_the_hard_limit() {
    let env =
        Env::with_config("[limits]\nresult_budget_bytes = 100\nresult_hard_limit_bytes = 1000\n");
    let content = "z".repeat(2000);
    env.write("big.txt", &content);
    let size = serde_json::to_string_pretty(&read_file_data("big.txt", &content))
        .unwrap()
        .len();
    let id = expect(
        &env.call("read_file", &json!({"path": "big.txt"})),
        2,
        &failure(json!({
            "code": "result_too_large",
            "message": format!("the result is {size} bytes, over the hard limit of 1000 bytes"),
            "retryable": false,
            "hint": "narrow the request (a smaller range, a filter, a limit)"})),
    );
    assert_eq!(audited(&env), vec![(id, "result_too_large".to_owned())]);
}

#[test]
fn oversized_result_is_offloaded_and_read_result_pages_through_it_exactly() {
    let env = Env::with_config("[limits]\nresult_budget_bytes = 100\n");
    let content: String = (0..5000u32)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect();
    env.write("five.txt", &content);
    let full = serde_json::to_string_pretty(&read_file_data("five.txt", &content)).unwrap();

    let run = env.call("read_file", &json!({"path": "five.txt"}));
    run.assert_code(0);
    let first = run.json();
    let result_id = first["truncated"]["result_id"]
        .as_str()
        .expect("a result id")
        .to_owned();
    let mut expected = json!({
        "ok": true, "call_id": first["call_id"], "data": &full[..100],
        "truncated": {"total_bytes": full.len(), "returned_bytes": 100, "result_id": result_id},
    });
    assert_eq!(first, expected);

    let mut assembled = String::new();
    let mut offset = 0u64;
    let mut pages = 0;
    loop {
        let page = env.call(
            "read_result",
            &json!({"id": result_id, "offset": offset, "limit": 100}),
        );
        page.assert_code(0);
        let data = page.json()["data"].clone();
        let text = data["text"].as_str().expect("page text").to_owned();
        let end = offset + text.len() as u64;
        let eof = end == full.len() as u64;
        expected = json!({
            "eof": eof, "id": result_id, "next_offset": if eof { Value::Null } else { json!(end) },
            "offset": offset, "text": &full[offset as usize..end as usize],
            "total_bytes": full.len(),
        });
        assert_eq!(data, expected, "page {pages}");
        assembled.push_str(&text);
        pages += 1;
        if eof {
            break;
        }
        offset = end;
    }
    assert_eq!(assembled, full);
    assert_eq!(pages, full.len().div_ceil(100));
}

/// `cancelled`: SIGINT to a `toolgate call` whose shell command is running. The command
/// marks that it started, so the signal is sent only once the call is inside the tool.
#[test]
fn cancelled_on_sigint_and_the_command_is_killed() {
    let env = Env::with_config("[roles.ops]\nrules = [{tool = \"shell\", decision = \"allow\"}]\n");
    let sleep = marker();
    let args = json!({"command": format!("touch started && exec sleep {sleep}")});
    let child = env
        .command()
        .args([
            "--role",
            "ops",
            "call",
            "shell",
            "--args",
            &args.to_string(),
        ])
        .arg("--no-prompt")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn toolgate");
    let started = env.ws.join("started");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !started.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the shell command never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let pid = rustix::process::Pid::from_raw(child.id() as i32).expect("a pid");
    rustix::process::kill_process(pid, rustix::process::Signal::INT).expect("send SIGINT");
    let run = Run::from_output(child.wait_with_output().expect("wait"));
    let id = expect(
        &run,
        2,
        &failure(json!({
            "code": "cancelled", "message": "the caller cancelled the call", "retryable": false})),
    );
    assert_eq!(audited(&env), vec![(id, "cancelled".to_owned())]);
    // The command was killed with the call, not left sleeping.
    assert_gone(&sleep);
}

/// Issue 30, 30.28: `toolgate call` on the embedded store was never rate-limited — each
/// one-shot process started with a full bucket. With 2 calls an hour, the third call is
/// refused `rate_limited` (exit 2) and audited; another tool's bucket is untouched.
#[test]
fn one_shot_calls_draw_from_one_quota_bucket() {
    let env = Env::with_config(
        "[[quotas]]\nid = \"reads\"\ntool = \"read_file\"\nper = \"principal_tool\"\n\
         calls = 2\ninterval = \"1h\"\n",
    );
    env.write("a.txt", "hello\n");
    for _ in 0..2 {
        env.call("read_file", &json!({"path": "a.txt"}))
            .assert_code(0);
    }
    let third = env.call("read_file", &json!({"path": "a.txt"}));
    third.assert_code(2);
    let error = &third.json()["error"];
    assert_eq!(error["code"], json!("rate_limited"), "{third:#?}");
    assert_eq!(error["details"]["quota"], json!("reads"), "{third:#?}");
    assert!(
        audited(&env)
            .iter()
            .any(|(_, outcome)| outcome == "rate_limited"),
        "{:?}",
        audited(&env)
    );
    env.call("list_dir", &json!({"path": "."})).assert_code(0);
}
