//! Sandbox escape tests, part two: what cannot be refused up front is contained — fork
//! bombs, memory hogs, and daemons that try to outlive the call by leaving its process
//! group and session.

use std::time::Duration;

use serde_json::json;
use toolgate_core::ToolError;
use toolgate_tools::{ResourceLimits, ShellOptions};

use super::procs::{alive, gone, marker, started};
use super::sandbox::{result, sandboxed, sh, unsandboxed};

/// Guards against a hang: not a speed check.
async fn within_a_minute<T>(call: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(60), call)
        .await
        .expect("the call hung")
}

/// Leaves the process group and the session, forks again (a `sleep <marker>` daemon), and
/// waits until it runs.
fn daemonise(m: &str) -> String {
    format!(
        "setsid sh -c 'nohup sleep {m} >/dev/null 2>&1 & echo $! > daemon.pid' \
         </dev/null >/dev/null 2>&1 & \
         while [ ! -s daemon.pid ]; do sleep 0.05; done"
    )
}

#[tokio::test]
async fn a_daemon_that_left_the_session_dies_with_the_call() {
    let fx = sandboxed(ShellOptions::default());
    let m = marker();
    // Alive for half a second at least, so that the host sees it before the call ends.
    let command = format!("{}; sleep 0.5; echo started", daemonise(&m));
    let (out, pid) = tokio::join!(within_a_minute(sh(&fx, &command)), started(&m));
    assert_eq!(out, result(0, "started\n", ""));
    assert!(gone(pid).await, "daemon {pid} outlived the sandboxed call");

    // The control: a process-group kill alone misses it.
    let fx = unsandboxed();
    let m = marker();
    within_a_minute(sh(&fx, &format!("{}; echo started", daemonise(&m)))).await;
    let pid = started(&m).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let survived = alive(pid);
    let _ = rustix::process::kill_process(
        rustix::process::Pid::from_raw(pid as i32).unwrap(),
        rustix::process::Signal::KILL,
    );
    assert!(
        survived,
        "the unsandboxed control should have let the daemon escape"
    );
}

#[tokio::test]
async fn a_daemon_cannot_outlive_the_timeout() {
    let fx = sandboxed(ShellOptions::default());
    let m = marker();
    let command = format!("{}; sleep 1000", daemonise(&m));
    let (out, pid) = tokio::join!(
        within_a_minute(fx.run("shell", json!({"command": command, "timeout_secs": 1}))),
        started(&m)
    );
    assert_eq!(out, Err(ToolError::Timeout));
    assert!(gone(pid).await, "daemon {pid} survived the timeout");
}

#[tokio::test]
async fn a_fork_bomb_hits_the_process_limit_and_the_call_ends() {
    let fx = sandboxed(ShellOptions {
        limits: ResourceLimits {
            max_processes: Some(32),
            ..ResourceLimits::default()
        },
        ..ShellOptions::default()
    });
    let command = "f(){ f|f& }; f; sleep 1; echo done";
    let out = within_a_minute(fx.run("shell", json!({"command": command, "timeout_secs": 20})))
        .await
        .unwrap();
    let stderr = out["stderr"].as_str().unwrap();
    assert!(
        stderr.contains("Cannot fork"),
        "the limit was never hit: {out}"
    );
}

#[tokio::test]
async fn allocating_past_the_memory_limit_fails() {
    let fx = sandboxed(ShellOptions {
        limits: ResourceLimits {
            memory_bytes: Some(256 << 20),
            ..ResourceLimits::default()
        },
        ..ShellOptions::default()
    });
    // tail buffers the one 1 GB "line" whole.
    let out = sh(&fx, "head -c 1000000000 /dev/zero | tail -n 1 | wc -c").await;
    assert_eq!(out, result(0, "0\n", "tail: memory exhausted\n"));
}
