//! The process group a shell call runs in, killed as a whole.
//!
//! The shell is started as the leader of a new process group, so everything it starts —
//! pipelines, `cmd &` daemons — shares the group id and one `kill(-pgid, SIGKILL)` ends them
//! all. The guard kills on drop too: if the caller drops the call's future, nothing the
//! call started outlives it.

use rustix::process::{Pid, Signal, kill_process_group};

/// Kill switch for one call's process group.
#[derive(Debug)]
pub(super) struct ProcessGroup {
    /// `None` once disarmed (or when the child had no pid).
    pgid: Option<Pid>,
}

impl ProcessGroup {
    /// The group led by the child with process id `leader` (from `Child::id`).
    pub(super) fn led_by(leader: Option<u32>) -> Self {
        let pgid = leader
            .and_then(|id| i32::try_from(id).ok())
            .and_then(Pid::from_raw);
        ProcessGroup { pgid }
    }

    /// SIGKILLs every process left in the group. A group already gone is not an error.
    pub(super) fn kill(&self) {
        if let Some(pgid) = self.pgid {
            let _ = kill_process_group(pgid, Signal::KILL);
        }
    }

    /// Stops the drop guard once the group was killed and its leader reaped, so that a
    /// later drop can never signal an unrelated group that reused the id.
    pub(super) fn disarm(&mut self) {
        self.pgid = None;
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.kill();
    }
}
