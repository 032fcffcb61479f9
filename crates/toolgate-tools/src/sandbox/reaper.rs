//! The helper as supervisor: it is a child subreaper, so every process the command starts —
//! including daemons that left its process group or session with `setsid` and double
//! forks — stays its descendant, and none outlives the call.
//!
//! Sequence: wait for the command to exit or for the lifeline (the helper's stdin, a pipe
//! whose other end the gateway holds) to close → kill the command's process group → kill
//! every remaining child, again and again as orphans are reparented to the helper, until
//! no child is left.

use std::os::fd::BorrowedFd;
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec, poll};
use rustix::process::{
    Pid, PidfdFlags, Signal, WaitId, WaitIdOptions, WaitOptions, kill_process, kill_process_group,
    pidfd_open, wait, waitid, waitpid,
};

/// How a supervised command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    /// The command exited with this code.
    Exited(i32),
    /// The command died from this signal.
    Killed(i32),
    /// The gateway let go (timeout, cancellation, or it died itself).
    Abandoned,
}

/// How often orphans are reaped while the command runs.
const REAP_EVERY: Duration = Duration::from_millis(200);
/// The sweep gives up after this long (only reachable if processes cannot be killed).
const SWEEP_LIMIT: Duration = Duration::from_secs(10);

/// Waits for `command` to end or `lifeline` to close, reaping reparented orphans meanwhile.
/// The command's process group is killed before its own status is collected, while its
/// zombie still reserves the group id.
pub(crate) fn supervise(command: Pid, lifeline: BorrowedFd<'_>) -> Ending {
    let pidfd = pidfd_open(command, PidfdFlags::empty()).ok();
    let tick = match pidfd {
        Some(_) => REAP_EVERY,
        None => Duration::from_millis(10),
    };
    let timeout = Timespec {
        tv_sec: 0,
        tv_nsec: i64::from(u32::try_from(tick.as_nanos()).unwrap_or(u32::MAX)),
    };
    loop {
        let mut fds = vec![PollFd::from_borrowed_fd(lifeline, PollFlags::IN)];
        if let Some(fd) = &pidfd {
            fds.push(PollFd::new(fd, PollFlags::IN));
        }
        if poll(&mut fds, Some(&timeout)).is_ok() && lifeline_closed(&fds[0], lifeline) {
            return Ending::Abandoned;
        }
        if let Some(ending) = peek_exit(command) {
            let _ = kill_process_group(command, Signal::KILL);
            let _ = waitpid(Some(command), WaitOptions::empty());
            return ending;
        }
        for orphan in children().into_iter().filter(|&pid| pid != command) {
            let _ = waitpid(Some(orphan), WaitOptions::NOHANG);
        }
    }
}

/// How the command ended, if it has, without reaping it.
fn peek_exit(command: Pid) -> Option<Ending> {
    let status = waitid(
        WaitId::Pid(command),
        WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT,
    )
    .ok()??;
    match (status.exit_status(), status.terminating_signal()) {
        (Some(code), _) => Some(Ending::Exited(code)),
        (None, Some(signal)) => Some(Ending::Killed(signal)),
        (None, None) => None,
    }
}

/// The gateway closed its end (or something went wrong with the pipe).
fn lifeline_closed(polled: &PollFd<'_>, lifeline: BorrowedFd<'_>) -> bool {
    let events = polled.revents();
    if events.intersects(PollFlags::HUP | PollFlags::ERR | PollFlags::NVAL) {
        return true;
    }
    if events.contains(PollFlags::IN) {
        let mut byte = [0u8; 64];
        return !matches!(rustix::io::read(lifeline, &mut byte), Ok(n) if n > 0);
    }
    false
}

/// Kills the command's group, then every child of the helper until none is left.
pub(crate) fn sweep(command: Pid) {
    let _ = kill_process_group(command, Signal::KILL);
    let deadline = Instant::now() + SWEEP_LIMIT;
    loop {
        for pid in children() {
            let _ = kill_process_group(pid, Signal::KILL);
            let _ = kill_process(pid, Signal::KILL);
        }
        loop {
            // `wait`, not `waitpid(None)`: the latter waits for the helper's own group only.
            match wait(WaitOptions::NOHANG) {
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(_) => return,
            }
        }
        if Instant::now() > deadline {
            return;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// The helper's children (it is single-threaded, so its one task lists them all), from
/// `/proc/self/task/<pid>/children`, else by scanning `/proc` for the parent id.
fn children() -> Vec<Pid> {
    let me = std::process::id();
    let parse = |text: &str| -> Vec<Pid> {
        text.split_whitespace()
            .filter_map(|t| t.parse().ok())
            .filter_map(Pid::from_raw)
            .collect()
    };
    if let Ok(text) = std::fs::read_to_string(format!("/proc/self/task/{me}/children")) {
        return parse(&text);
    }
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|name| name.bytes().all(|b| b.is_ascii_digit()))
        .filter(|pid| parent_of(pid) == Some(me))
        .filter_map(|pid| Pid::from_raw(pid.parse().ok()?))
        .collect()
}

fn parent_of(pid: &str) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}
