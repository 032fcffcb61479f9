//! A process's memory from `/proc/<pid>/status`: `VmRSS` (resident now) and `VmHWM` (the
//! resident peak since it started).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Memory {
    pub rss_kib: u64,
    pub hwm_kib: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    #[error("cannot read /proc/{pid}/status (is the server still running?): {source}")]
    Read { pid: u32, source: std::io::Error },
    #[error("/proc/{pid}/status has no VmRSS/VmHWM lines")]
    Missing { pid: u32 },
}

pub fn read(pid: u32) -> Result<Memory, MemoryError> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .map_err(|source| MemoryError::Read { pid, source })?;
    parse_status(&status).ok_or(MemoryError::Missing { pid })
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
    fn reads_this_process() {
        let memory = read(std::process::id()).unwrap();
        assert!(memory.rss_kib > 0 && memory.hwm_kib >= memory.rss_kib);
    }
}
