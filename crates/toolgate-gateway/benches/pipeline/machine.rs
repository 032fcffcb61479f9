//! The header of the report: the machine, the commit and where the data directory lives
//! (its filesystem decides what an fsync costs).

use std::path::Path;
use std::process::Command;

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown".to_owned())
}

fn kernel() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_owned())
        .unwrap_or_else(|_| "unknown".to_owned())
}

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

fn commit() -> String {
    let Some(head) = git(&["rev-parse", "--short", "HEAD"]) else {
        return "unknown".to_owned();
    };
    let dirty =
        git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    if dirty {
        format!("{head} (+ uncommitted changes in the work tree)")
    } else {
        head
    }
}

/// The type of the filesystem holding `dir`: the longest mount point that prefixes it.
fn filesystem(dir: &Path) -> String {
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
    mounts
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (_dev, point, fstype) = (f.next()?, f.next()?, f.next()?);
            dir.starts_with(point)
                .then(|| (point.len(), fstype.to_owned()))
        })
        .max()
        .map(|(_, t)| t)
        .unwrap_or_else(|| "unknown".to_owned())
}

/// CPU time (ns) every thread of this process has run so far, from each thread's
/// `/proc/self/task/<tid>/schedstat`; 0 where that is unavailable. Threads that have exited
/// are not counted, so take differences over phases in which none exits.
pub fn process_cpu_ns() -> u64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("schedstat")).ok())
        .filter_map(|stat| stat.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".to_owned())
}

pub fn print_header(data_root: &Path, scale: f64) {
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!("toolgate pipeline benchmark");
    println!("machine: {cpus} CPUs, {}, kernel {}", cpu_model(), kernel());
    println!("commit:  {}", commit());
    println!(
        "load:    {} (1/5/15-min load average when the run started; other work on the machine slows every number)",
        load_average()
    );
    println!(
        "data:    temp dirs on {} (TOOLGATE_BENCH_DIR overrides); runtime: tokio multi-thread, 2 workers; scale {scale}",
        filesystem(data_root)
    );
    println!();
}
