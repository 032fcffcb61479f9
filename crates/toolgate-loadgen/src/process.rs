//! What a process costs, from `/proc`: memory from `/proc/<pid>/status` (`VmRSS`, resident
//! now; `VmHWM`, the resident peak since it started) and CPU time (user + system, every
//! thread) from `/proc/<pid>/stat`.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// `/proc/<pid>/stat` counts CPU time in USER_HZ ticks, which Linux fixes at 100 per second
/// for user space whatever the kernel's own tick rate.
const TICKS_PER_SECOND: u64 = 100;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Memory {
    pub rss_kib: u64,
    pub hwm_kib: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum ProcError {
    #[error("cannot read /proc/{pid}/{file} (is the process still running?): {source}")]
    Read {
        pid: u32,
        file: &'static str,
        source: std::io::Error,
    },
    #[error("/proc/{pid}/{file} is not in the expected format")]
    Format { pid: u32, file: &'static str },
}

fn read_proc(pid: u32, file: &'static str) -> Result<String, ProcError> {
    std::fs::read_to_string(format!("/proc/{pid}/{file}")).map_err(|source| ProcError::Read {
        pid,
        file,
        source,
    })
}

pub fn memory(pid: u32) -> Result<Memory, ProcError> {
    let file = "status";
    parse_status(&read_proc(pid, file)?).ok_or(ProcError::Format { pid, file })
}

/// CPU time the process has used so far, all threads, user and system.
pub fn cpu_time(pid: u32) -> Result<Duration, ProcError> {
    let file = "stat";
    parse_stat_cpu(&read_proc(pid, file)?).ok_or(ProcError::Format { pid, file })
}

pub fn parse_status(status: &str) -> Option<Memory> {
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name)?.strip_prefix(':'))
            .and_then(|value| value.trim().strip_suffix("kB"))
            .and_then(|kib| kib.trim().parse().ok())
    };
    Some(Memory {
        rss_kib: field("VmRSS")?,
        hwm_kib: field("VmHWM")?,
    })
}

/// `utime + stime` (fields 14 and 15 of proc(5)); the command name (field 2) may hold
/// spaces and parentheses, so fields are counted after its last `)`.
pub fn parse_stat_cpu(stat: &str) -> Option<Duration> {
    let (_, after_name) = stat.rsplit_once(')')?;
    let mut fields = after_name.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    let ticks = utime + stime;
    Some(Duration::from_millis(ticks * 1000 / TICKS_PER_SECOND))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_rss_and_peak() {
        let status = "Name:\ttoolgate\nVmPeak:\t  900000 kB\nVmHWM:\t   20480 kB\nVmRSS:\t   18432 kB\nThreads:\t3\n";
        assert_eq!(
            parse_status(status),
            Some(Memory {
                rss_kib: 18432,
                hwm_kib: 20480
            })
        );
        assert_eq!(parse_status("Name:\tkthreadd\n"), None);
    }

    #[test]
    fn parses_cpu_ticks_after_a_name_with_spaces_and_parens() {
        let stat = "4242 (tokio (rt) x) S 1 4242 4242 0 -1 4194560 812 0 0 0 150 37 0 0 20 0 9 0 1234 5678 900";
        assert_eq!(parse_stat_cpu(stat), Some(Duration::from_millis(1870)));
        assert_eq!(parse_stat_cpu("4242 (x) S 1"), None);
    }

    #[test]
    fn reads_this_process() {
        let memory = memory(std::process::id()).unwrap();
        assert!(memory.rss_kib > 0 && memory.hwm_kib >= memory.rss_kib);
        cpu_time(std::process::id()).unwrap();
    }
}
