use std::time::Duration;

use serde_json::{Value, json};
use toolgate_core::{ToolContext, ToolError};
use toolgate_tools::{BuiltinOptions, ShellOptions};

use super::fixture::{Fixture, invalid};
use super::procs::{gone, marker, started};

/// The result without `duration_ms` (which varies), after checking it is a number.
fn settled(out: Result<Value, ToolError>) -> Value {
    let mut out = out.unwrap();
    let duration = out.as_object_mut().unwrap().remove("duration_ms");
    assert!(duration.as_ref().is_some_and(Value::is_u64), "{duration:?}");
    out
}

/// Guards against a hang (a group left alive keeps `sleep 1000` running): not a speed
/// check, the calls under test take about a second.
async fn within_a_minute<T>(call: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(60), call)
        .await
        .expect("the call hung: its process group was not killed")
}

#[tokio::test]
async fn reports_exit_code_stdout_and_stderr() {
    let fx = Fixture::new();
    let out = fx
        .run(
            "shell",
            json!({"command": "echo out; echo err >&2; exit 3"}),
        )
        .await;
    assert_eq!(
        settled(out),
        json!({
            "exit_code": 3,
            "stdout": "out\n",
            "stderr": "err\n",
            "stdout_truncated": false,
            "stderr_truncated": false,
            "stdout_bytes": 4,
            "stderr_bytes": 4,
            "sandbox": "namespaces+landlock+seccomp"
        })
    );
}

#[tokio::test]
async fn a_signal_death_has_no_exit_code() {
    let fx = Fixture::new();
    let out = fx.run("shell", json!({"command": "kill -9 $$"})).await;
    assert_eq!(
        settled(out),
        json!({
            "exit_code": null,
            "signal": 9,
            "stdout": "",
            "stderr": "",
            "stdout_truncated": false,
            "stderr_truncated": false,
            "stdout_bytes": 0,
            "stderr_bytes": 0,
            "sandbox": "namespaces+landlock+seccomp"
        })
    );
}

#[tokio::test]
async fn runs_in_the_given_directory() {
    let fx = Fixture::new();
    fx.put("sub/marker", "");
    let out = fx
        .run("shell", json!({"command": "pwd; ls", "cwd": "sub"}))
        .await;
    let expected = format!("{}\nmarker\n", fx.root().join("sub").display());
    assert_eq!(settled(out)["stdout"], json!(expected));
}

#[tokio::test]
async fn output_is_capped_but_fully_drained() {
    let fx = Fixture::new();
    let out = fx
        .run(
            "shell",
            json!({"command": "yes | head -c 1000000; yes e | head -c 100 >&2"}),
        )
        .await;
    let cap = 64 * 1024;
    assert_eq!(
        settled(out),
        json!({
            "exit_code": 0,
            "stdout": "y\n".repeat(cap / 2),
            "stderr": "e\n".repeat(50),
            "stdout_truncated": true,
            "stderr_truncated": false,
            "stdout_bytes": 1_000_000,
            "stderr_bytes": 100,
            "sandbox": "namespaces+landlock+seccomp"
        })
    );
}

#[tokio::test]
async fn the_environment_is_rebuilt_from_the_allowlist() {
    // SAFETY: std serialises its own environment access, and nothing in this test binary
    // reads the environment through libc directly.
    #[allow(unsafe_code)]
    unsafe {
        std::env::set_var("TOOLGATE_TEST_SECRET", "hunter2");
        std::env::set_var("TOOLGATE_TEST_ALLOWED", "visible");
    }
    let fx = Fixture::with_options(BuiltinOptions {
        shell: ShellOptions {
            env_allowlist: vec!["TOOLGATE_TEST_ALLOWED".to_owned()],
            ..ShellOptions::default()
        },
        ..BuiltinOptions::default()
    });
    let out = settled(fx.run("shell", json!({"command": "env"})).await);
    let stdout = out["stdout"].as_str().unwrap();
    assert!(!stdout.contains("hunter2"), "{stdout}");
    let mut names: Vec<&str> = stdout.lines().filter_map(|l| l.split('=').next()).collect();
    names.sort_unstable();
    // TMPDIR: the sandbox's private temporary directory.
    let mut expected = vec![
        "HOME",
        "PATH",
        "PWD",
        "TERM",
        "TMPDIR",
        "TOOLGATE_TEST_ALLOWED",
    ];
    expected.extend(
        ["LANG", "LC_ALL", "TZ"]
            .into_iter()
            .filter(|n| std::env::var_os(n).is_some()),
    );
    expected.sort_unstable();
    assert_eq!(names, expected);
    let home = format!("HOME={}", fx.root().display());
    for line in [home.as_str(), "TERM=dumb", "TOOLGATE_TEST_ALLOWED=visible"] {
        assert!(
            stdout.lines().any(|l| l == line),
            "{line} missing from {stdout}"
        );
    }
}

#[tokio::test]
async fn a_timeout_kills_the_whole_process_group() {
    let fx = Fixture::new();
    let m = marker();
    let command = format!("(sleep {m} &); sleep 1000");
    let (out, pid) = tokio::join!(
        within_a_minute(fx.run("shell", json!({"command": command, "timeout_secs": 1}))),
        started(&m)
    );
    assert_eq!(out, Err(ToolError::Timeout));
    assert!(
        gone(pid).await,
        "daemonised grandchild {pid} survived the timeout"
    );
}

#[tokio::test]
async fn cancellation_kills_the_whole_process_group() {
    let fx = Fixture::new();
    let ctx = ToolContext::for_test();
    let cancel = ctx.cancel.clone();
    let m = marker();
    let command = format!("sleep {m} & wait");
    let (out, pid) = tokio::join!(
        within_a_minute(fx.run_with("shell", json!({"command": command}), ctx)),
        async {
            let pid = started(&m).await;
            cancel.cancel();
            pid
        }
    );
    assert_eq!(out, Err(ToolError::Cancelled));
    assert!(
        gone(pid).await,
        "background process {pid} survived cancellation"
    );
}

#[tokio::test]
async fn background_processes_do_not_outlive_the_call_nor_hold_it_open() {
    let fx = Fixture::new();
    // The background sleep keeps stdout open; the call must still return, and kill it.
    let m = marker();
    let command = format!("sleep {m} & sleep 0.5; echo started");
    let (out, pid) = tokio::join!(
        within_a_minute(fx.run("shell", json!({"command": command}))),
        started(&m)
    );
    assert_eq!(settled(out)["stdout"], json!("started\n"));
    assert!(
        gone(pid).await,
        "background process {pid} outlived the call"
    );
}

#[tokio::test]
async fn a_timeout_beyond_the_maximum_is_invalid() {
    let fx = Fixture::new();
    assert_eq!(
        fx.run("shell", json!({"command": "true", "timeout_secs": 601}))
            .await,
        Err(invalid("timeout_secs must be between 1 and 600, got 601"))
    );
    assert_eq!(
        fx.run("shell", json!({"command": "true", "cwd": "missing"}))
            .await,
        Err(invalid(
            "`missing` does not exist (paths are relative to the workspace root)"
        ))
    );
}
