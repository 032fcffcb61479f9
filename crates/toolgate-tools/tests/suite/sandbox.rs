//! The sandbox escape tests (R-ACT-2): each way out must be refused or contained. Where it
//! is safe, the same command is also run with the sandbox off, to show the command really
//! would escape — so a passing test cannot be a broken command.
//!
//! These tests need Landlock and seccomp; on a machine without them they fail and say so
//! (nothing is skipped).

use std::io::ErrorKind;
use std::net::{TcpListener, UdpSocket};
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};
use toolgate_core::ToolError;
use toolgate_tools::{BuiltinOptions, ResourceLimits, Sandbox, SandboxMode, ShellOptions};

use super::fixture::Fixture;

pub fn require_full_sandbox() {
    let support = Sandbox::probe();
    assert!(
        support.is_complete(),
        "the sandbox tests need Landlock and seccomp, and this machine lacks them: {}",
        support.reason.unwrap_or_default()
    );
}

/// A fixture whose shell runs in the sandbox with these options.
pub fn sandboxed(shell: ShellOptions) -> Fixture {
    require_full_sandbox();
    Fixture::with_options(BuiltinOptions {
        shell: ShellOptions {
            sandbox: SandboxMode::Required,
            ..shell
        },
        ..BuiltinOptions::default()
    })
}

/// The control: the same shell with the sandbox off.
pub fn unsandboxed() -> Fixture {
    Fixture::with_options(BuiltinOptions {
        shell: ShellOptions {
            sandbox: SandboxMode::Off,
            ..ShellOptions::default()
        },
        ..BuiltinOptions::default()
    })
}

/// Runs `command`; the result without `duration_ms`.
pub async fn sh(fx: &Fixture, command: &str) -> Value {
    let mut out = fx
        .run("shell", json!({ "command": command }))
        .await
        .unwrap();
    out.as_object_mut().unwrap().remove("duration_ms");
    out
}

/// The whole result of a sandboxed command that wrote `stdout` and `stderr`.
pub fn result(exit_code: i32, stdout: &str, stderr: &str) -> Value {
    json!({
        "exit_code": exit_code,
        "stdout": stdout,
        "stderr": stderr,
        "stdout_truncated": false,
        "stderr_truncated": false,
        "stdout_bytes": stdout.len(),
        "stderr_bytes": stderr.len(),
        "sandbox": "namespaces+landlock+seccomp"
    })
}

/// A path in the system temp dir no one else uses (the sandbox's own TMPDIR is elsewhere).
fn unique_outside_path() -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    std::env::temp_dir().join(format!("outside-{}-{nanos}", std::process::id()))
}

#[tokio::test]
async fn writing_outside_the_workspace_is_refused() {
    // The system temp dir of the sandbox's view is its private one: the host's stays
    // untouched whatever the command believes it wrote.
    let target = unique_outside_path();
    let command = format!("echo x > {}", target.display());
    let fx = sandboxed(ShellOptions::default());
    sh(&fx, &command).await;
    assert!(!target.exists());
    // The system trees are read-only.
    assert_eq!(
        sh(&fx, "echo x > /usr/toolgate-probe").await,
        result(
            2,
            "",
            "/bin/sh: 1: cannot create /usr/toolgate-probe: Read-only file system\n"
        )
    );

    let control = sh(&unsandboxed(), &command).await;
    assert_eq!(control["exit_code"], json!(0));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "x\n");
    std::fs::remove_file(&target).unwrap();
}

#[tokio::test]
async fn files_outside_the_workspace_and_root_home_are_unreadable() {
    let fx = sandboxed(ShellOptions::default());
    let canary = fx.outside().join("canary.txt");
    std::fs::write(&canary, "secret-canary").unwrap();
    let command = format!("cat {}", canary.display());
    // Outside the workspace and the system trees, nothing exists in the sandbox's view.
    let stderr = format!("cat: {}: No such file or directory\n", canary.display());
    assert_eq!(sh(&fx, &command).await, result(1, "", &stderr));
    assert_eq!(
        sh(&fx, "ls /root").await,
        result(
            2,
            "",
            "ls: cannot access '/root': No such file or directory\n"
        )
    );
    assert_eq!(
        sh(&fx, "cat /etc/shadow").await,
        result(1, "", "cat: /etc/shadow: Permission denied\n")
    );

    assert_eq!(
        sh(&unsandboxed(), &command).await["stdout"],
        json!("secret-canary")
    );
}

#[tokio::test]
async fn a_symlink_out_of_the_workspace_leads_nowhere() {
    let fx = sandboxed(ShellOptions::default());
    let canary = fx.outside().join("canary.txt");
    std::fs::write(&canary, "secret-canary").unwrap();
    fx.symlink(&canary, "link");
    assert_eq!(
        sh(&fx, "cat link").await,
        result(1, "", "cat: link: No such file or directory\n")
    );
    assert_ne!(
        sh(&fx, "echo overwritten > link").await["exit_code"],
        json!(0)
    );
    assert_eq!(std::fs::read_to_string(&canary).unwrap(), "secret-canary");
}

/// Whether `listener` has a connection waiting.
fn was_connected(listener: &TcpListener) -> bool {
    listener.set_nonblocking(true).unwrap();
    match listener.accept() {
        Ok(_) => true,
        Err(e) if e.kind() == ErrorKind::WouldBlock => false,
        Err(e) => panic!("accept: {e}"),
    }
}

#[tokio::test]
async fn tcp_connections_are_refused_without_network() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let command = format!("bash -c 'exec 3<>/dev/tcp/127.0.0.1/{port}'");
    let out = sh(&sandboxed(ShellOptions::default()), &command).await;
    let stderr = format!(
        "bash: socket: Operation not permitted\nbash: line 1: /dev/tcp/127.0.0.1/{port}: Operation not permitted\n"
    );
    assert_eq!(out, result(1, "", &stderr));
    assert!(!was_connected(&listener), "the sandboxed command connected");

    let allowed = sandboxed(ShellOptions {
        allow_network: true,
        ..ShellOptions::default()
    });
    assert_eq!(sh(&allowed, &command).await, result(0, "", ""));
    assert!(was_connected(&listener), "allow_network did not allow TCP");
}

#[tokio::test]
async fn udp_and_so_dns_are_refused_without_network() {
    let server = UdpSocket::bind("127.0.0.1:0").unwrap();
    server
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let port = server.local_addr().unwrap().port();
    let command = format!("bash -c 'echo ping > /dev/udp/127.0.0.1/{port}'");
    let out = sh(&sandboxed(ShellOptions::default()), &command).await;
    let stderr = format!(
        "bash: socket: Operation not permitted\nbash: line 1: /dev/udp/127.0.0.1/{port}: Operation not permitted\n"
    );
    assert_eq!(out, result(1, "", &stderr));

    let allowed = sandboxed(ShellOptions {
        allow_network: true,
        ..ShellOptions::default()
    });
    assert_eq!(sh(&allowed, &command).await, result(0, "", ""));
    let mut buf = [0u8; 16];
    let (n, _) = server.recv_from(&mut buf).unwrap();
    // Only the allowed command's datagram arrived.
    assert_eq!(&buf[..n], b"ping\n");
    server.set_nonblocking(true).unwrap();
    assert_eq!(
        server.recv_from(&mut buf).unwrap_err().kind(),
        ErrorKind::WouldBlock
    );
}

#[tokio::test]
async fn the_gateway_environment_is_neither_inherited_nor_readable() {
    // SAFETY: std serialises its own environment access; nothing here reads it via libc.
    #[allow(unsafe_code)]
    unsafe {
        std::env::set_var("TOOLGATE_SANDBOX_TEST_SECRET", "hunter2");
    }
    let fx = sandboxed(ShellOptions::default());
    let out = sh(&fx, "env").await;
    assert!(
        !out["stdout"].as_str().unwrap().contains("hunter2"),
        "{out}"
    );
    // The gateway's (this process's) environment block, and the helper's.
    let me = std::process::id();
    let command = format!("cat /proc/{me}/environ > /dev/null");
    // Not even there: the sandbox has its own PID namespace.
    let stderr = format!("cat: /proc/{me}/environ: No such file or directory\n");
    assert_eq!(sh(&fx, &command).await, result(1, "", &stderr));
    assert_eq!(
        sh(&fx, "cat /proc/1/environ > /dev/null").await["exit_code"],
        json!(1)
    );

    assert_eq!(sh(&unsandboxed(), &command).await["exit_code"], json!(0));
}

#[tokio::test]
async fn namespaces_and_other_kernel_doors_are_shut() {
    let fx = sandboxed(ShellOptions::default());
    assert_eq!(
        sh(&fx, "unshare --user true").await,
        result(1, "", "unshare: unshare failed: Operation not permitted\n")
    );
    // Capabilities: root keeps only dac_override (files of other users in the workspace);
    // no chown, fowner or fsetid; nothing may be gained by exec.
    assert_eq!(
        sh(
            &fx,
            "grep -E '^(CapBnd|CapAmb|NoNewPrivs|Seccomp):' /proc/self/status"
        )
        .await["stdout"],
        json!(if rustix_is_root() {
            "CapBnd:\t0000000000000002\nCapAmb:\t0000000000000000\nNoNewPrivs:\t1\nSeccomp:\t2\n"
        } else {
            "CapBnd:\t0000000000000000\nCapAmb:\t0000000000000000\nNoNewPrivs:\t1\nSeccomp:\t2\n"
        })
    );
}

fn rustix_is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"))
}

#[tokio::test]
async fn the_private_tmpdir_works_and_is_removed() {
    let fx = sandboxed(ShellOptions::default());
    let name = format!("private-{}", std::process::id());
    let out = sh(
        &fx,
        &format!("echo t > \"$TMPDIR/{name}\" && cat \"$TMPDIR/{name}\" && echo \"$TMPDIR\""),
    )
    .await;
    assert_eq!(out, result(0, "t\n/tmp\n", ""));
    // On the host it was one toolgate-sandbox-* directory of the system temp dir, gone now.
    let left: Vec<_> = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("toolgate-sandbox-")
        })
        .filter(|e| e.path().join(&name).exists())
        .collect();
    assert!(left.is_empty(), "{left:?} was left behind");
}

#[tokio::test]
async fn limits_bound_cpu_and_file_size() {
    let fx = sandboxed(ShellOptions {
        limits: ResourceLimits {
            cpu_secs: Some(1),
            max_file_bytes: Some(1 << 20),
            ..ResourceLimits::default()
        },
        ..ShellOptions::default()
    });
    let out = sh(&fx, "head -c 2000000 /dev/zero > big; echo $?").await;
    assert_eq!(out, result(0, "153\n", "File size limit exceeded\n"));
    assert_eq!(
        std::fs::metadata(fx.root().join("big")).unwrap().len(),
        1 << 20
    );

    // SIGXCPU (24) after one CPU second.
    let mut out = sh(&fx, "while :; do :; done").await;
    assert_eq!(
        out.as_object_mut().unwrap().remove("signal"),
        Some(json!(24))
    );
    assert_eq!(out["exit_code"], Value::Null);
}

#[tokio::test]
async fn a_missing_helper_is_unavailable_not_a_silent_downgrade() {
    let fx = Fixture::with_options(BuiltinOptions {
        shell: ShellOptions {
            launcher: Some(toolgate_tools::SandboxLauncher::program(
                "/nonexistent/toolgate-sandbox",
            )),
            ..ShellOptions::default()
        },
        ..BuiltinOptions::default()
    });
    require_full_sandbox();
    assert_eq!(
        fx.run("shell", json!({"command": "true"})).await,
        Err(ToolError::Unavailable(
            "cannot start the sandbox helper /nonexistent/toolgate-sandbox: No such file or directory (os error 2)"
                .to_owned()
        ))
    );
}

#[tokio::test]
async fn toolgate_state_inside_the_workspace_is_hidden_and_read_only() {
    let fx = sandboxed(ShellOptions::default());
    assert_eq!(
        sh(&fx, "ls -A .toolgate").await,
        result(0, "", ""),
        "the data dir should look empty"
    );
    assert_eq!(
        sh(&fx, "echo forged > .toolgate/audit.jsonl").await,
        result(
            2,
            "",
            "/bin/sh: 1: cannot create .toolgate/audit.jsonl: Read-only file system\n"
        )
    );
    assert_eq!(
        sh(
            &fx,
            "rm -rf .toolgate 2>/dev/null; mv .toolgate gone 2>/dev/null; ls -d .toolgate"
        )
        .await,
        result(0, ".toolgate\n", "")
    );
    assert_eq!(fx.get(".toolgate/audit.jsonl"), "{}\n");
}
