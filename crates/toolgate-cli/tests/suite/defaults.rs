//! Zero configuration: with no flags and no `toolgate.toml`, the workspace is the current
//! directory and state lives in `./.toolgate/`, out of reach of the built-in tools.

use serde_json::json;

use super::harness::{Env, Run, bare_command, failure, success};

fn run_in(env: &Env, args: &[&str]) -> Run {
    Run::from_output(bare_command(&env.ws).args(args).output().expect("spawn"))
}

#[test]
fn defaults_put_state_under_dot_toolgate_and_protect_it() {
    let env = Env::new();
    env.write("a.txt", "hi\n");
    run_in(
        &env,
        &[
            "call",
            "read_file",
            "--args",
            r#"{"path":"a.txt"}"#,
            "--no-prompt",
        ],
    )
    .assert_code(0);
    let log = env.ws.join(".toolgate/logs/tool-audit.jsonl");
    assert_eq!(super::harness::audit_lines(&log).len(), 1);

    let check = run_in(&env, &["config", "check"]);
    check.assert_code(0);
    assert_eq!(
        check.stdout,
        format!(
            "config:    none (embedded defaults)\nworkspace: {ws}\ndata dir:  {ws}/.toolgate\n\
             audit:     {ws}/.toolgate/logs/tool-audit.jsonl (Durable)\n\
             roles:     default, readonly (acting as `default`)\nok\n",
            ws = env.ws.display()
        )
    );

    let denied = run_in(
        &env,
        &[
            "call",
            "read_file",
            "--args",
            r#"{"path":".toolgate/logs/tool-audit.jsonl"}"#,
            "--no-prompt",
        ],
    );
    denied.assert_code(2);
    assert_eq!(
        denied.envelope(),
        failure(json!({
            "code": "policy_denied",
            "message": "path `.toolgate/logs/tool-audit.jsonl` is inside the protected path \
                `.toolgate`, which the built-in tools never read or write",
            "retryable": false}))
    );
    let listed = run_in(&env, &["call", "list_dir", "--args", "{}", "--no-prompt"]);
    listed.assert_code(0);
    // `.toolgate` is not even listed.
    assert_eq!(
        listed.envelope(),
        success(json!({
            "entries": [{"path": "a.txt", "size": 3, "type": "file"}],
            "path": ".", "truncated": false}))
    );
}
