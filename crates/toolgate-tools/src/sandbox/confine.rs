//! The last steps before exec, run by the command's own process: new process group,
//! pids cgroup, resource limits, masks over protected paths, capabilities, `no_new_privs`,
//! Landlock, seccomp — in that order (each step needs the privileges the next one takes
//! away).
//!
//! Everything that can fail for a reason worth explaining (opening paths, compiling the
//! filters, creating the cgroup) happens earlier, in the helper; here are only system calls.
//! Only the helper forks this process, and the helper is single-threaded, so allocating
//! between fork and exec is safe.

use std::io::Write;

use landlock::{RulesetCreated, RulesetStatus};
use rustix::process::{Resource, Rlimit, setpgid, setrlimit};
use seccompiler::BpfProgram;

use super::cgroup::PidsCgroup;
use super::mask::{self, Mask};
use super::seccomp;

/// Capabilities a root command keeps: acting on files it does not own inside the paths
/// Landlock grants. Everything else (admin, network admin, kill, ptrace, raw I/O, …) goes.
const KEPT_CAPABILITIES: &[u32] = &[
    0, // CAP_CHOWN
    1, // CAP_DAC_OVERRIDE
    3, // CAP_FOWNER
    4, // CAP_FSETID
];

/// Prefix of every line the helper writes about its own failures.
pub const FAILURE_PREFIX: &str = "toolgate sandbox: ";

/// What the command applies to itself.
#[derive(Debug)]
pub(crate) struct Confinement {
    /// Lead a process group of its own (not for a stdio server, which stays in the
    /// helper's group so that the client's group kill reaches it).
    pub own_group: bool,
    pub limits: Vec<(Resource, u64)>,
    pub cgroup: Option<PidsCgroup>,
    /// Protected paths to cover.
    pub masks: Vec<Mask>,
    /// Fail when they cannot be covered (else run with them visible).
    pub strict: bool,
    /// Taken on use.
    pub landlock: Option<RulesetCreated>,
    /// Fail unless the kernel enforced (part of) the ruleset.
    pub require_landlock: bool,
    pub seccomp: Vec<BpfProgram>,
    /// `/proc/sys/kernel/cap_last_cap`.
    pub last_capability: u32,
}

impl Confinement {
    /// Called in the child just before exec; on failure, writes why to stderr (the
    /// gateway's pipe) and makes the spawn fail.
    pub(crate) fn apply(&mut self) -> std::io::Result<()> {
        self.steps().map_err(|message| {
            let _ = writeln!(std::io::stderr(), "{FAILURE_PREFIX}{message}");
            std::io::Error::from_raw_os_error(libc::EPERM)
        })
    }

    fn steps(&mut self) -> Result<(), String> {
        if self.own_group {
            setpgid(None, None).map_err(|e| format!("setpgid: {e}"))?;
        }
        if let Some(cgroup) = &self.cgroup {
            cgroup
                .join()
                .map_err(|e| format!("cannot join the pids cgroup: {e}"))?;
        }
        let core = (Resource::Core, 0);
        for &(resource, value) in self.limits.iter().chain([&core]) {
            let limit = Rlimit {
                current: Some(value),
                maximum: Some(if resource == Resource::Cpu {
                    value + 1
                } else {
                    value
                }),
            };
            setrlimit(resource, limit).map_err(|e| format!("setrlimit {resource:?}: {e}"))?;
        }
        match mask::apply(&self.masks) {
            Err(why) if self.strict => return Err(why),
            _ => {}
        }
        drop_capabilities(self.last_capability)?;
        rustix::thread::set_no_new_privs(true).map_err(|e| format!("no_new_privs: {e}"))?;
        if let Some(ruleset) = self.landlock.take() {
            let status = ruleset
                .restrict_self()
                .map_err(|e| format!("Landlock: {e}"))?;
            if self.require_landlock && status.ruleset == RulesetStatus::NotEnforced {
                return Err("Landlock is required but the kernel enforced none of it".to_owned());
            }
        }
        seccomp::install(&self.seccomp).map_err(|e| format!("seccomp: {e}"))
    }
}

/// Empties the bounding and ambient sets but for [`KEPT_CAPABILITIES`] and clears the
/// inheritable set, so the exec'd command holds no other capability even as root. Without
/// the right to change the bounding set (not root) there is nothing to drop.
fn drop_capabilities(last: u32) -> Result<(), String> {
    for cap in (0..=last).filter(|c| !KEPT_CAPABILITIES.contains(c)) {
        match bounding_drop(cap) {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(libc::EPERM) => return Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => break,
            Err(e) => return Err(format!("cannot drop capability {cap}: {e}")),
        }
    }
    let mut sets = rustix::thread::capabilities(None).map_err(|e| format!("capget: {e}"))?;
    sets.inheritable = rustix::thread::CapabilitySet::empty();
    rustix::thread::set_capabilities(None, sets).map_err(|e| format!("capset: {e}"))?;
    clear_ambient().map_err(|e| format!("cannot clear ambient capabilities: {e}"))
}

#[allow(unsafe_code)]
fn bounding_drop(cap: u32) -> std::io::Result<()> {
    // SAFETY: PR_CAPBSET_DROP takes a capability number and touches no memory of ours.
    let rc = unsafe { libc::prctl(libc::PR_CAPBSET_DROP, libc::c_ulong::from(cap), 0, 0, 0) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[allow(unsafe_code)]
fn clear_ambient() -> std::io::Result<()> {
    // SAFETY: PR_CAP_AMBIENT_CLEAR_ALL takes no pointers.
    let rc = unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
            0,
            0,
            0,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}
