//! Sandbox escape tests, part three (issue 29): the second attack on the sandbox, each as
//! a regression test. A sandboxed command sees only what it may touch: a namespace view
//! with the workspace, the system trees read-only and nothing else; its working directory
//! entered by descriptor inside that view; no metadata change outside it, no set-id bit;
//! a PID and an IPC namespace of its own.

use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::json;
use toolgate_core::ToolError;
use toolgate_tools::ShellOptions;

use super::procs::marker;
use super::sandbox::{sandboxed, sh, unsandboxed};

/// The shell's `cwd` raced: `sub` swapped with a symlink to the data dir while calls with
/// `cwd: "sub"` start. Before the view, about 1 in 12 such calls ran inside the real,
/// writable data dir (and hard-linked `toolgate.db` out of it, the first step of a
/// self-approval). Now every call runs in the real `sub` or is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cwd_swapped_for_a_symlink_never_enters_the_data_dir() {
    let fx = Arc::new(sandboxed(ShellOptions::default()));
    fx.put(".toolgate/toolgate.db", "SQLite format 3");
    fx.put("sub/.keep", "");
    fx.symlink(".toolgate", "alt");
    let root = fx.root().to_owned();
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let (root, stop) = (root.clone(), Arc::clone(&stop));
        std::thread::spawn(move || {
            let mut swaps = 0u64;
            while !stop.load(Ordering::Relaxed) {
                // Yield so that the calls get the cores too (2 here).
                std::thread::yield_now();
                rustix::fs::renameat_with(
                    rustix::fs::CWD,
                    root.join("sub"),
                    rustix::fs::CWD,
                    root.join("alt"),
                    rustix::fs::RenameFlags::EXCHANGE,
                )
                .unwrap();
                swaps += 1;
            }
            swaps
        })
    };
    let command = "cat audit.jsonl toolgate.db 2>/dev/null; ln toolgate.db ../stolen.db \
                   2>/dev/null; touch planted 2>/dev/null; ls -A";
    // Most calls see `sub` as the symlink when the gateway checks it and are refused there
    // (`policy_denied`); rounds of calls go on until enough got past that check to race the
    // start of the command itself.
    let (mut in_sub, mut past_check, mut rounds) = (0, 0, 0);
    while past_check < 60 && rounds < 120 {
        rounds += 1;
        let mut calls = tokio::task::JoinSet::new();
        for _ in 0..16 {
            let fx = Arc::clone(&fx);
            calls.spawn(async move {
                fx.run("shell", json!({"command": command, "cwd": "sub"}))
                    .await
            });
        }
        while let Some(done) = calls.join_next().await {
            match done.unwrap() {
                Ok(out) => {
                    let stdout = out["stdout"].as_str().unwrap();
                    assert!(
                        !stdout.contains("SQLite") && !stdout.contains("{}"),
                        "a call read the data dir: {out}"
                    );
                    assert!(stdout.contains(".keep"), "a call ran elsewhere: {out}");
                    in_sub += 1;
                    past_check += 1;
                }
                Err(ToolError::PolicyDenied(_)) => {}
                // Refused when the command started: the directory was no longer the one
                // checked.
                Err(_) => past_check += 1,
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    let _ = writeln!(
        std::io::stderr(),
        "{rounds} rounds: {past_check} calls past the check, {in_sub} ran in sub, {swaps} swaps"
    );
    assert!(swaps > 100, "the race never ran ({swaps} swaps)");
    assert!(
        past_check >= 60 && in_sub > 0,
        "too few calls raced the start ({past_check} past the check, {in_sub} ran, {rounds} rounds)"
    );
    let data = root.join(".toolgate");
    assert!(
        !data.join("planted").exists(),
        "a call wrote in the data dir"
    );
    assert!(
        !root.join("stolen.db").exists(),
        "toolgate.db was hard-linked out"
    );
    let real_sub = [root.join("sub"), root.join("alt")]
        .into_iter()
        .find(|p| p.symlink_metadata().is_ok_and(|m| m.is_dir()))
        .unwrap();
    assert_eq!(std::fs::read_dir(&data).unwrap().count(), 2, "{data:?}");
    assert!(real_sub.join(".keep").exists());
}

/// chmod, chown, utime and setxattr worked on any file of the machine (Landlock does not
/// cover them; root kept CAP_CHOWN/CAP_FOWNER). Now the system trees are read-only in the
/// view, everything else outside the workspace does not exist in it, and the file owner
/// capabilities are gone.
#[tokio::test]
async fn metadata_outside_the_workspace_cannot_change() {
    let fx = sandboxed(ShellOptions::default());
    let system = std::path::Path::new("/etc/hostname");
    let before = std::fs::metadata(system).unwrap();
    for command in [
        "chmod 0666 /etc/hostname",
        "chown 65534 /etc/hostname",
        "touch -m -d @0 /etc/hostname",
        "python3 -c \"import os; os.setxattr('/etc/hostname', 'user.toolgate', b'1')\"",
    ] {
        let out = sh(&fx, command).await;
        assert_ne!(out["exit_code"], json!(0), "{command}: {out}");
        assert!(
            out["stderr"]
                .as_str()
                .unwrap()
                .contains("Read-only file system"),
            "{command}: {out}"
        );
    }
    let after = std::fs::metadata(system).unwrap();
    let changed =
        (before.mode(), before.uid(), before.mtime()) != (after.mode(), after.uid(), after.mtime());
    if changed {
        // On a sandbox that lets this through, put the machine back before failing.
        std::fs::set_permissions(system, std::fs::Permissions::from_mode(before.mode())).unwrap();
        let _ = std::os::unix::fs::chown(system, Some(before.uid()), Some(before.gid()));
        let _ = std::process::Command::new("touch")
            .args(["-m", "-d", &format!("@{}", before.mtime())])
            .arg(system)
            .status();
        let _ = std::process::Command::new("python3")
            .args([
                "-c",
                "import os; os.removexattr('/etc/hostname', 'user.toolgate')",
            ])
            .status();
    }
    assert!(
        !changed,
        "a sandboxed command changed /etc/hostname's metadata"
    );

    // Outside the view: not even there.
    let outside = fx.outside().join("config.toml");
    std::fs::write(&outside, "x").unwrap();
    std::fs::set_permissions(&outside, std::fs::Permissions::from_mode(0o600)).unwrap();
    let out = sh(&fx, &format!("chmod 0666 {0}; stat {0}", outside.display())).await;
    assert!(
        out["stderr"]
            .as_str()
            .unwrap()
            .contains("No such file or directory"),
        "{out}"
    );
    assert_eq!(std::fs::metadata(&outside).unwrap().mode() & 0o777, 0o600);
    // The control: without the sandbox the same chmod goes through.
    sh(&unsandboxed(), &format!("chmod 0666 {}", outside.display())).await;
    assert_eq!(std::fs::metadata(&outside).unwrap().mode() & 0o777, 0o666);
}

/// A set-user-id program left in the workspace would run with the sandbox owner's rights
/// once someone outside executes it: no set-id bit may be set.
#[tokio::test]
async fn no_set_id_bit_can_be_set_in_the_workspace() {
    let fx = sandboxed(ShellOptions::default());
    for command in [
        "cp /bin/sh s && chmod u+s s",
        "chmod 4755 s",
        "chmod g+s s",
        "mkdir -p d && chmod 2755 d",
    ] {
        let out = sh(&fx, command).await;
        assert!(
            out["stderr"]
                .as_str()
                .unwrap()
                .contains("Operation not permitted"),
            "{command}: {out}"
        );
    }
    for path in ["s", "d"] {
        let mode = std::fs::metadata(fx.root().join(path)).unwrap().mode();
        assert_eq!(mode & 0o6000, 0, "{path} has mode {mode:o}");
    }
    if rustix::process::geteuid().is_root() {
        let out = sh(&fx, "chown 65534 s").await;
        assert!(
            out["stderr"]
                .as_str()
                .unwrap()
                .contains("Operation not permitted"),
            "{out}"
        );
        assert_eq!(std::fs::metadata(fx.root().join("s")).unwrap().uid(), 0);
    }
}

/// `/proc/*/cmdline` of every process was readable (another process's
/// `--db-password=…`): the sandbox has its own PID namespace and a fresh `/proc`.
#[tokio::test]
async fn other_processes_are_invisible() {
    let secret = marker();
    let mut other = std::process::Command::new("sleep")
        .arg(&secret)
        .spawn()
        .unwrap();
    // Only the `sleep <marker>` command lines, so that the output stays far below the
    // shell's output cap on a busy machine (the pattern does not match itself).
    let command =
        "cat /proc/[0-9]*/cmdline | tr '\\0' ' ' | grep -o 'sleep 1000\\.[0-9]\\{5,\\}' | sort -u";
    let inside = sh(&sandboxed(ShellOptions::default()), command).await;
    let control = sh(&unsandboxed(), command).await;
    let _ = other.kill();
    let _ = other.wait();
    assert!(
        !inside["stdout"].as_str().unwrap().contains(&secret),
        "{inside}"
    );
    assert!(
        control["stdout"].as_str().unwrap().contains(&secret),
        "the control should see it: {control}"
    );
}

/// SysV IPC objects outlived the command: the sandbox has its own IPC namespace, gone
/// with it.
#[tokio::test]
async fn sysv_ipc_dies_with_the_command() {
    let size = 40_960 + (std::process::id() % 1000) * 4096;
    let segments_of = |size: u32| {
        std::fs::read_to_string("/proc/sysvipc/shm")
            .unwrap()
            .lines()
            .skip(1)
            .filter(|l| l.split_whitespace().nth(3) == Some(&size.to_string()))
            .count()
    };
    let inside = sh(
        &sandboxed(ShellOptions::default()),
        &format!("ipcmk -M {size}"),
    )
    .await;
    assert_eq!(inside["exit_code"], json!(0), "{inside}");
    assert_eq!(segments_of(size), 0, "a segment outlived the command");

    let control = sh(&unsandboxed(), &format!("ipcmk -M {size}")).await;
    let id = control["stdout"]
        .as_str()
        .unwrap()
        .trim()
        .rsplit(' ')
        .next()
        .unwrap()
        .to_owned();
    let outlived = segments_of(size);
    let _ = std::process::Command::new("ipcrm")
        .args(["-m", &id])
        .status();
    assert_eq!(outlived, 1, "the control should leave one: {control}");
}

/// A stdio server's writable tree named through a symlinked directory (`/srv` → `/mnt/srv`):
/// the view binds it at its real path, and the server starts and writes there.
#[test]
fn a_tree_named_through_a_symlink_is_found_in_the_view() {
    super::sandbox::require_full_sandbox();
    let base = tempfile::tempdir().unwrap();
    let real = base.path().join("real");
    std::fs::create_dir(&real).unwrap();
    let alias = base.path().join("alias");
    std::os::unix::fs::symlink(&real, &alias).unwrap();
    let policy = toolgate_tools::SandboxPolicy::new(&alias);
    let (program, args) = toolgate_tools::sandbox::stdio_command(
        &super::fixture::test_launcher(),
        &policy,
        None,
        "/bin/sh",
        &[
            "-c".to_owned(),
            "echo ready; echo x > \"$0\"/written".to_owned(),
            real.display().to_string(),
        ],
    )
    .unwrap();
    let out = std::process::Command::new(program)
        .args(args)
        .current_dir(base.path())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "ready\n",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(real.join("written")).unwrap(),
        "x\n"
    );
}
