//! Bad input never panics: every case ends with toolgate's own exit status (1 fatal, 2 a
//! failed call) and a message that says what is wrong — never 101 or "panicked".

use serde_json::json;
use sha2::{Digest, Sha256};

use super::harness::{Env, failure, success};

#[test]
fn ten_megabytes_of_arguments_are_refused_naming_the_limit() {
    let env = Env::new();
    let args = json!({"path": "a.txt", "content": "x".repeat(10 << 20)}).to_string();
    let file = env.root().join("big-args.json");
    std::fs::write(&file, &args).unwrap();
    let run = env.run(&[
        "call",
        "write_file",
        "--args",
        &format!("@{}", file.display()),
        "--no-prompt",
    ]);
    run.assert_code(1);
    assert_eq!(
        run.stderr,
        format!(
            "toolgate: error: the arguments in {} are longer than limits.max_argument_bytes (1048576 bytes)\n",
            file.display()
        )
    );
    // Inline arguments still reach the gateway, which refuses them and audits the attempt.
    let small = Env::with_config("[limits]\nmax_argument_bytes = 1000\n");
    let inline = json!({"path": "a.txt", "content": "x".repeat(2000)});
    let run = small.call("write_file", &inline);
    run.assert_code(2);
    assert_eq!(
        run.envelope(),
        failure(json!({
            "code": "invalid_arguments",
            "message": format!(
                "arguments are {} bytes; the limit is 1000 bytes",
                inline.to_string().len()
            ),
            "retryable": false,
            "hint": "pass large content by reference (a file in the workspace) instead"}))
    );
    // Audited as a digest, and the log still verifies.
    small.run(&["audit", "verify"]).assert_code(0);
}

/// `--args @/dev/zero` (and an endless stdin) used to be read without bound.
#[test]
fn endless_argument_streams_stop_at_the_limit() {
    let env = Env::new();
    let run = env.run(&["call", "read_file", "--args", "@/dev/zero", "--no-prompt"]);
    run.assert_code(1);
    assert_eq!(
        run.stderr,
        "toolgate: error: the arguments in /dev/zero are longer than limits.max_argument_bytes (1048576 bytes)\n"
    );
    let mut child = env
        .command()
        .args(["call", "read_file", "--args", "-", "--no-prompt"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || {
        let block = vec![b' '; 1 << 16];
        // Ends when toolgate stops reading and closes the pipe.
        while std::io::Write::write_all(&mut stdin, &block).is_ok() {}
    });
    let run = super::harness::Run::from_output(child.wait_with_output().unwrap());
    feeder.join().unwrap();
    run.assert_code(1);
    assert_eq!(
        run.stderr,
        "toolgate: error: the arguments in stdin are longer than limits.max_argument_bytes (1048576 bytes)\n"
    );
}

#[test]
fn deeply_nested_json_is_invalid_arguments() {
    let env = Env::new();
    let hint = "send one JSON object, e.g. {\"path\": \"src/main.rs\"}";
    for (name, text) in [
        ("open", "[".repeat(100_000)),
        (
            "closed",
            format!(
                "{{\"path\": {}{}}}",
                "[".repeat(100_000),
                "]".repeat(100_000)
            ),
        ),
    ] {
        let file = env.root().join(format!("{name}.json"));
        std::fs::write(&file, &text).unwrap();
        let run = env.run(&[
            "call",
            "read_file",
            "--args",
            &format!("@{}", file.display()),
            "--no-prompt",
        ]);
        run.assert_code(2);
        let column = if name == "open" { 128 } else { 136 };
        assert_eq!(
            run.envelope(),
            failure(json!({
                "code": "invalid_arguments",
                "message": format!(
                    "arguments are not valid JSON: recursion limit exceeded at line 1 column {column}"),
                "retryable": false, "hint": hint})),
            "{name}"
        );
    }
    env.run(&["audit", "verify"]).assert_code(0);
}

#[test]
fn unreadable_argument_sources_are_fatal_with_a_message() {
    let env = Env::new();
    let latin1 = env.root().join("latin1.json");
    std::fs::write(&latin1, b"{\"path\": \"caf\xe9\"}").unwrap();
    let run = env.run(&[
        "call",
        "read_file",
        "--args",
        &format!("@{}", latin1.display()),
        "--no-prompt",
    ]);
    run.assert_code(1);
    assert_eq!(
        run.stderr,
        format!(
            "toolgate: error: reading arguments from {}: stream did not contain valid UTF-8\n",
            latin1.display()
        )
    );
    let missing = env.root().join("missing.json");
    let run = env.run(&[
        "call",
        "read_file",
        "--args",
        &format!("@{}", missing.display()),
        "--no-prompt",
    ]);
    run.assert_code(1);
    assert_eq!(
        run.stderr,
        format!(
            "toolgate: error: reading arguments from {}: No such file or directory (os error 2)\n",
            missing.display()
        )
    );
}

#[test]
fn a_corrupt_config_names_the_file_and_line() {
    let env = Env::with_config("[limits\ncall_timeout_secs = 5\n");
    let config = env.ws.join("toolgate.toml");
    for args in [
        &["config", "check"][..],
        &["call", "read_file", "--no-prompt"],
    ] {
        let run = env.run(args);
        run.assert_code(1);
        assert!(
            run.stderr.starts_with(&format!(
                "toolgate: error: {}: TOML parse error at line 1, column 8\n",
                config.display()
            )),
            "{run:#?}"
        );
        assert!(
            run.stderr.contains("unclosed table, expected `]`"),
            "{run:#?}"
        );
    }
    assert!(!env.data.exists(), "nothing was created on a config error");
}

/// Issue 33: `config check` refuses what `serve` would — an exporting `[telemetry]` whose
/// header variable is not set.
#[test]
fn config_check_refuses_a_telemetry_header_variable_that_is_not_set() {
    let env = Env::with_config(
        "[telemetry]\nenabled = true\nendpoint = \"http://127.0.0.1:4318\"\n\
         headers_from_env = { Authorization = \"TOOLGATE_TEST_OTEL_KEY_UNSET\" }\n",
    );
    let run = env.run(&["config", "check"]);
    run.assert_code(1);
    assert!(
        run.stderr.contains(
            "[telemetry] headers_from_env names TOOLGATE_TEST_OTEL_KEY_UNSET for \
             Authorization, which is not set"
        ),
        "{run:#?}"
    );
    let set = env
        .command()
        .env("TOOLGATE_TEST_OTEL_KEY_UNSET", "key")
        .args(["config", "check"])
        .output()
        .unwrap();
    assert!(set.status.success(), "{set:?}");
}

/// Issue 33: `config check` refuses what `serve` would — a bot or an approval channel whose
/// secret variable is not set (the other commands do not need the secrets).
#[test]
fn config_check_names_the_unset_secrets_of_bots_and_channels() {
    let env = Env::with_config(
        "[[bots]]\nname = \"assistant\"\nkind = \"slack\"\n\
         token_env = \"TOOLGATE_TEST_BOT_TOKEN_UNSET\"\n\
         signing_secret_env = \"TOOLGATE_TEST_BOT_SIGNING_UNSET\"\n\
         [bots.users]\n\"U1\" = \"alice\"\n",
    );
    let run = env.run(&["config", "check"]);
    run.assert_code(1);
    for named in [
        "[[bots]] `assistant` token_env: TOOLGATE_TEST_BOT_TOKEN_UNSET",
        "[[bots]] `assistant` signing_secret_env: TOOLGATE_TEST_BOT_SIGNING_UNSET",
    ] {
        assert!(run.stderr.contains(named), "{run:#?}");
    }
    // Another command does not need them.
    env.run(&["tools", "list"]).assert_code(0);
    let set = env
        .command()
        .env("TOOLGATE_TEST_BOT_TOKEN_UNSET", "xoxb-1")
        .env("TOOLGATE_TEST_BOT_SIGNING_UNSET", "s")
        .args(["config", "check"])
        .output()
        .unwrap();
    assert!(set.status.success(), "{set:?}");
}

#[test]
fn an_unknown_config_key_is_rejected() {
    let env = Env::with_config("[limits]\ncall_timeout = 5\n");
    let run = env.run(&["config", "check"]);
    run.assert_code(1);
    let config = env.ws.join("toolgate.toml");
    assert!(
        run.stderr.starts_with(&format!(
            "toolgate: error: {}: TOML parse error at line 2, column 1\n",
            config.display()
        )),
        "{run:#?}"
    );
    assert!(
        run.stderr
            .contains("unknown field `call_timeout`, expected one of `call_timeout_secs`"),
        "{run:#?}"
    );
}

#[test]
fn an_unknown_role_is_fatal() {
    let env = Env::with_config("[roles.dev]\n");
    for args in [
        &["--role", "nobody", "call", "read_file", "--no-prompt"][..],
        &["--role", "nobody", "tools", "list"],
        &["--role", "nobody", "config", "check"],
    ] {
        let run = env.run(args);
        run.assert_code(1);
        assert_eq!(
            run.stderr,
            "toolgate: error: unknown role `nobody` (configured roles: default, dev, readonly)\n"
        );
    }
}

/// Whether this process can write into a 0555 directory (root can).
fn chmod_stops_writes(dir: &std::path::Path) -> bool {
    std::fs::write(dir.join("probe"), b"").is_err()
}

#[test]
fn an_unwritable_data_dir_says_what_to_do() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    let advice = "(choose a writable one with --data-dir or data_dir in toolgate.toml)";
    // Under a regular file: fails for every user, root included.
    let file = env.root().join("plain-file");
    std::fs::write(&file, b"").unwrap();
    let under_file = file.join("data");
    let out = env
        .command_for(&under_file)
        .args([
            "call",
            "read_file",
            "--args",
            "{\"path\":\"a\"}",
            "--no-prompt",
        ])
        .output()
        .unwrap();
    let run = super::harness::Run::from_output(out);
    run.assert_code(1);
    assert_eq!(
        run.stderr,
        format!(
            "toolgate: error: cannot create the data directory {} {advice}: Not a directory (os error 20)\n",
            under_file.display()
        )
    );

    // A read-only directory: only meaningful when permissions bind this user (not root).
    let locked = env.root().join("locked");
    std::fs::create_dir(&locked).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).unwrap();
    if chmod_stops_writes(&locked) {
        let inside = locked.join("data");
        let out = env
            .command_for(&inside)
            .args(["audit", "tail"])
            .output()
            .unwrap();
        let run = super::harness::Run::from_output(out);
        run.assert_code(1);
        assert!(
            run.stderr.starts_with(&format!(
                "toolgate: error: cannot create the data directory {} {advice}",
                inside.display()
            )),
            "{run:#?}"
        );
    }
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn binary_and_non_utf8_files_are_read_not_crashed_on() {
    let env = Env::with_config("[roles.editor]\nwrite = \"allow\"\n");
    let bytes = b"ab\0cd\xff";
    env.write("bin.dat", bytes);
    env.write("latin1.txt", b"caf\xe9 ok\n");
    let run = env.call("read_file", &json!({"path": "bin.dat"}));
    run.assert_code(0);
    assert_eq!(
        run.envelope(),
        success(json!({"binary": true, "path": "bin.dat", "size": 6,
                       "sha256": hex::encode(Sha256::digest(bytes))}))
    );
    let run = env.call("read_file", &json!({"path": "latin1.txt"}));
    run.assert_code(0);
    assert_eq!(
        run.envelope(),
        success(
            json!({"content": "caf\u{fffd} ok\n", "encoding": "lossy-utf8",
                       "lines_returned": 1, "path": "latin1.txt", "start_line": 1,
                       "total_lines": 1, "truncated": false})
        )
    );
    // Editing either is refused with a reason, and neither file changes.
    for (path, message) in [
        (
            "bin.dat",
            "`bin.dat` is a binary file; edit_file only edits UTF-8 text",
        ),
        (
            "latin1.txt",
            "`latin1.txt` is not valid UTF-8; edit_file only edits UTF-8 text \
             (use write_file to replace it whole)",
        ),
    ] {
        let run = env.call_with(
            &["--role", "editor"],
            "edit_file",
            &json!({"path": path, "old_string": "ab", "new_string": "xy"}),
            &[],
        );
        run.assert_code(2);
        assert_eq!(
            run.envelope(),
            failure(json!({"code": "invalid_arguments", "message": message, "retryable": false}))
        );
    }
    assert_eq!(std::fs::read(env.ws.join("bin.dat")).unwrap(), bytes);
    assert_eq!(
        std::fs::read(env.ws.join("latin1.txt")).unwrap(),
        b"caf\xe9 ok\n"
    );
}

#[test]
fn symlink_loops_and_symlinks_out_of_the_workspace_are_policy_denied() {
    let env = Env::new();
    let outside = env.root().join("outside.txt");
    std::fs::write(&outside, "secret\n").unwrap();
    std::os::unix::fs::symlink("loop2", env.ws.join("loop1")).unwrap();
    std::os::unix::fs::symlink("loop1", env.ws.join("loop2")).unwrap();
    std::os::unix::fs::symlink(&outside, env.ws.join("out")).unwrap();
    std::os::unix::fs::symlink(env.root(), env.ws.join("up")).unwrap();
    for (tool, path, message) in [
        (
            "read_file",
            "loop1",
            "path `loop1` runs into a symlink loop",
        ),
        (
            "read_file",
            "out",
            "path `out` resolves outside the workspace through a symlink",
        ),
        (
            "read_file",
            "up/outside.txt",
            "path `up/outside.txt` resolves outside the workspace through a symlink",
        ),
        (
            "list_dir",
            "up",
            "path `up` resolves outside the workspace through a symlink",
        ),
    ] {
        let run = env.call(tool, &json!({"path": path}));
        run.assert_code(2);
        assert_eq!(
            run.envelope(),
            failure(json!({"code": "policy_denied", "message": message, "retryable": false})),
            "{tool} {path}"
        );
    }
    // A write through the symlink is refused before anyone is asked to approve it.
    let run = env.call("write_file", &json!({"path": "out", "content": "pwned"}));
    run.assert_code(2);
    assert_eq!(run.json()["error"]["code"], json!("policy_denied"));
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "secret\n");
}

#[test]
fn bad_flags_are_a_fatal_error_not_a_failed_call() {
    let env = Env::new();
    // Exit 2 means "the call failed" (the envelope says why); a typo in a flag is not that.
    let run = env.run(&["tools", "list", "--no-such-flag"]);
    run.assert_code(1);
    assert!(run.stderr.contains("--no-such-flag"), "{run:#?}");
    let run = env.run(&["call"]);
    run.assert_code(1);
    let help = env.run(&["--help"]);
    help.assert_code(0);
    assert!(help.stdout.contains("Usage"), "{help:#?}");
}
