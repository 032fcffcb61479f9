//! What this machine's kernel offers the sandbox, found by asking it (never by reading
//! securityfs, which is often not mounted).

use serde::Serialize;

use super::{cgroup, mask, view};

/// Entry point of the capability checks.
#[derive(Debug, Clone, Copy)]
pub struct Sandbox;

/// How the command's process count is bounded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProcessLimit {
    /// A pids cgroup per command (works for root too).
    CgroupPids,
    /// `RLIMIT_NPROC` (counts every process of the user; ignored for root).
    Rlimit,
    /// Nothing bounds it: root without a writable pids cgroup.
    Unenforced,
}

/// The kernel's sandboxing features as seen from this process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SandboxSupport {
    /// The Landlock ABI version, `None` when the kernel has no (enabled) Landlock.
    pub landlock_abi: Option<u32>,
    /// Seccomp filters can be installed.
    pub seccomp: bool,
    pub process_limit: ProcessLimit,
    /// A private mount namespace can hide toolgate's data dir and config inside the
    /// workspace (root, or unprivileged user namespaces enabled).
    pub hides_protected_paths: bool,
    /// The namespace view (bubblewrap: private mount, PID, IPC, UTS and network
    /// namespaces, a minimal root) can be built: bubblewrap's version; `None` when not.
    pub namespaces: Option<String>,
    /// Why the view, Landlock or seccomp is missing, and what to do about it.
    pub reason: Option<String>,
}

impl SandboxSupport {
    /// The namespace view, Landlock and seccomp are all there: `SandboxMode::Required`
    /// can run.
    pub fn is_complete(&self) -> bool {
        self.landlock_abi.is_some() && self.seccomp && self.namespaces.is_some()
    }
}

impl Sandbox {
    /// Asks the kernel: the Landlock ABI by the `landlock_create_ruleset` version query,
    /// seccomp by `prctl(PR_GET_SECCOMP)`, the process limit by looking for a writable pids
    /// cgroup. Cheap (a few syscalls and /proc reads); no side effects.
    pub fn probe() -> SandboxSupport {
        let mut reasons = Vec::new();
        let landlock_abi = match landlock_abi() {
            Ok(abi) => Some(abi),
            Err(reason) => {
                reasons.push(reason);
                None
            }
        };
        let seccomp = rustix::thread::secure_computing_mode().is_ok();
        if !seccomp {
            reasons
                .push("the kernel has no seccomp (build it with CONFIG_SECCOMP_FILTER)".to_owned());
        }
        let process_limit = if cgroup::pids_parent().is_some() {
            ProcessLimit::CgroupPids
        } else if rustix::process::getuid().is_root() {
            ProcessLimit::Unenforced
        } else {
            ProcessLimit::Rlimit
        };
        let namespaces = match view::bwrap() {
            view::Bwrap::Ready { version, .. } => Some(version.clone()),
            view::Bwrap::Missing(why) => {
                reasons.push(why.clone());
                None
            }
        };
        // The view covers them; without it, a private mount namespace of the helper's.
        let hides_protected_paths = namespaces.is_some() || mask::can_mask();
        SandboxSupport {
            namespaces,
            landlock_abi,
            seccomp,
            process_limit,
            hides_protected_paths,
            reason: (!reasons.is_empty()).then(|| reasons.join("; ")),
        }
    }
}

/// `landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)`: the ABI version, or
/// why there is none.
#[allow(unsafe_code)]
fn landlock_abi() -> Result<u32, String> {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: with a null attribute pointer, size 0 and the VERSION flag the kernel reads
    // no memory; it only returns the ABI version or an error.
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    if version > 0 {
        return u32::try_from(version).map_err(|_| format!("odd Landlock ABI {version}"));
    }
    Err(match std::io::Error::last_os_error().raw_os_error() {
        Some(libc::EOPNOTSUPP) => "Landlock is built into this kernel but not enabled \
             (add `landlock` to the `lsm=` kernel parameter)"
            .to_owned(),
        Some(libc::ENOSYS) => "this kernel has no Landlock (it needs Linux 5.13 or later \
             built with CONFIG_SECURITY_LANDLOCK)"
            .to_owned(),
        other => format!("the Landlock version query failed (errno {other:?})"),
    })
}
