//! The last steps before the helper's child execs bubblewrap (or, without a namespace view,
//! the inner stage directly): new process group, pids cgroup, resource limits, the
//! descriptors passed on, and — only without a view — the masks over protected paths in a
//! private mount namespace. Everything after (capabilities, `no_new_privs`, Landlock,
//! seccomp) is the inner stage's, inside the view.
//!
//! Everything that can fail for a reason worth explaining (opening paths, creating the
//! cgroup) happens earlier, in the helper; here are only system calls. Only the helper
//! forks this process, and the helper is single-threaded, so allocating between fork and
//! exec is safe.

use std::io::Write;

use rustix::process::{Resource, Rlimit, setpgid, setrlimit};

use super::cgroup::PidsCgroup;
use super::mask::{self, Mask};

/// Capabilities a root command keeps: acting on files of other users inside the paths it
/// is granted. CAP_CHOWN, CAP_FOWNER and CAP_FSETID go with the rest: no chown to another
/// user, no chmod or utime of another user's file, no set-id bit kept on a write.
const KEPT_CAPABILITIES: &[u32] = &[
    1, // CAP_DAC_OVERRIDE
];

/// Prefix of every line the helper writes about its own failures.
pub const FAILURE_PREFIX: &str = "toolgate sandbox: ";

/// What the helper's child applies to itself before exec.
#[derive(Debug)]
pub(crate) struct Confinement {
    /// Lead a process group of its own (not for a stdio server, which stays in the
    /// helper's group so that the client's group kill reaches it).
    pub own_group: bool,
    pub limits: Vec<(Resource, u64)>,
    pub cgroup: Option<PidsCgroup>,
    /// Descriptors passed on across exec (the status pipe, the kept trees' `O_PATH`s).
    pub pass_fds: Vec<i32>,
    /// Protected paths to cover here (only without a namespace view).
    pub masks: Vec<Mask>,
    /// Fail when they cannot be covered (else run with them visible).
    pub strict: bool,
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
        for &fd in &self.pass_fds {
            pass_on(fd).map_err(|e| format!("cannot pass descriptor {fd} on: {e}"))?;
        }
        match mask::apply(&self.masks) {
            Err(why) if self.strict => Err(why),
            _ => Ok(()),
        }
    }
}

/// Clears close-on-exec of `fd`.
#[allow(unsafe_code)]
fn pass_on(fd: i32) -> std::io::Result<()> {
    // SAFETY: fcntl on a descriptor number; it fails with EBADF if it is not open.
    let rc = unsafe { libc::fcntl(fd, libc::F_SETFD, 0) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Empties the bounding, permitted and effective sets but for [`KEPT_CAPABILITIES`] and
/// clears the inheritable and ambient sets, so the exec'd command holds no other capability even as root. Without
/// the right to change the bounding set (not root) there is nothing to drop.
pub(crate) fn drop_capabilities(last: u32) -> Result<(), String> {
    for cap in (0..=last).filter(|c| !KEPT_CAPABILITIES.contains(c)) {
        match bounding_drop(cap) {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(libc::EPERM) => return Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => break,
            Err(e) => return Err(format!("cannot drop capability {cap}: {e}")),
        }
    }
    let mut sets = rustix::thread::capabilities(None).map_err(|e| format!("capget: {e}"))?;
    let kept = KEPT_CAPABILITIES
        .iter()
        .fold(0u64, |bits, &cap| bits | (1 << cap));
    let kept = rustix::thread::CapabilitySet::from_bits_retain(kept);
    sets.effective &= kept;
    sets.permitted &= kept;
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
