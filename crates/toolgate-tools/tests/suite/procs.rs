//! Finding a sandboxed command's processes from outside. Inside the sandbox's PID namespace
//! `$!` is a number only that namespace knows, so a test marks its process with a `sleep`
//! argument no other process has and looks for it in the host's `/proc`.

use std::time::Duration;

/// A `sleep` duration (about 1000 s) unique to this call: `sleep <marker>`.
pub fn marker() -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!(
        "1000.{}{:09}{}",
        std::process::id(),
        nanos,
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// Host process ids of live processes with `arg` among their arguments.
pub fn running(arg: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok()?.parse::<u32>().ok())
        .filter(|pid| alive(*pid))
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| c.split(|&b| b == 0).any(|a| a == arg.as_bytes()))
        })
        .collect()
}

/// Waits until a process with `arg` runs; its host pid.
pub async fn started(arg: &str) -> u32 {
    for _ in 0..400 {
        if let Some(&pid) = running(arg).first() {
            return pid;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("no process with argument {arg} started");
}

/// Whether `pid` is a live process (a zombie counts as dead: PID 1 may never reap it).
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => false,
        Ok(stat) => {
            let state = stat.rsplit(')').next().unwrap_or("").trim_start();
            !state.starts_with('Z') && !state.starts_with('X')
        }
    }
}

/// Polls until `pid` is gone; false if it still lives after a generous wait.
pub async fn gone(pid: u32) -> bool {
    for _ in 0..200 {
        if !alive(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}
