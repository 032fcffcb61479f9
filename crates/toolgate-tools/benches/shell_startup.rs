//! Shell start-up cost: `true` through the shell tool with the sandbox off (`/bin/sh`
//! directly) and with the full sandbox (the `toolgate-sandbox` helper: Landlock, seccomp,
//! limits, pids cgroup, mount namespace, subreaper). Prints p50/p99/mean per mode.
//!
//! `cargo bench -p toolgate-tools --bench shell_startup` (`SHELL_BENCH_RUNS=N`, default 300).

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use toolgate_core::{Tool, ToolContext};
use toolgate_tools::{Sandbox, SandboxLauncher, SandboxMode, ShellOptions, ShellTool, Workspace};

fn shell(root: &std::path::Path, sandbox: SandboxMode) -> ShellTool {
    let ws = Workspace::new(root, vec![PathBuf::from(".toolgate")]).unwrap();
    ShellTool::new(
        Arc::new(ws),
        ShellOptions {
            sandbox,
            launcher: Some(SandboxLauncher::program(env!(
                "CARGO_BIN_EXE_toolgate-sandbox"
            ))),
            ..ShellOptions::default()
        },
    )
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1000.0)
}

fn main() {
    let runs: usize = std::env::var("SHELL_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let support = Sandbox::probe();
    assert!(
        support.is_complete(),
        "the sandboxed mode needs Landlock and seccomp: {:?}",
        support.reason
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".toolgate")).unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    println!(
        "shell start-up, `true`, {runs} calls per mode (Landlock ABI {:?}, process limit {:?})",
        support.landlock_abi.unwrap_or(0),
        support.process_limit
    );
    println!(
        "{:<28} {:>9} {:>9} {:>9}",
        "mode", "p50 ms", "p99 ms", "mean ms"
    );
    for (name, mode) in [
        ("off (/bin/sh)", SandboxMode::Off),
        ("namespaces+landlock+seccomp", SandboxMode::Required),
    ] {
        let tool = shell(dir.path(), mode);
        let mut times: Vec<Duration> = runtime.block_on(async {
            let mut times = Vec::with_capacity(runs);
            for i in 0..runs + 10 {
                let started = Instant::now();
                let out = tool
                    .call(json!({"command": "true"}), ToolContext::for_test())
                    .await
                    .expect("shell call");
                assert_eq!(out.data["exit_code"], json!(0));
                if i >= 10 {
                    times.push(started.elapsed());
                }
            }
            times
        });
        times.sort();
        let mean = times.iter().sum::<Duration>() / times.len() as u32;
        println!(
            "{:<28} {:>9} {:>9} {:>9}",
            name,
            ms(percentile(&times, 0.50)),
            ms(percentile(&times, 0.99)),
            ms(mean)
        );
    }
}
