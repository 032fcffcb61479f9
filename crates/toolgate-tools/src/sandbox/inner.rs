//! The inner stage (`<binary> __sandbox-inner REQUEST PROGRAM ARGS…`): the first process
//! inside the namespace view. It enters the command's working directory by descriptor
//! beneath the workspace, confines itself (capabilities, `no_new_privs`, Landlock,
//! seccomp), starts the command, which inherits every wall, relays the egress proxy when
//! the policy has one, waits, and reports exactly how the command ended on the status
//! descriptor the helper gave it (bubblewrap's own exit status folds a signal death into
//! `128 + n`).
//!
//! A failure before the command runs is one `toolgate sandbox: …` line on stderr and exit
//! status [`HELPER_FAILURE`](super::HELPER_FAILURE).

use std::ffi::OsString;
use std::io::Write;
use std::os::fd::{AsFd, FromRawFd, OwnedFd};
use std::os::unix::process::ExitStatusExt;
use std::path::{Component, Path, PathBuf};
use std::process::Command;

use landlock::RulesetStatus;
use rustix::fs::{Mode, OFlags, ResolveFlags};
use serde::{Deserialize, Serialize};

use super::confine::{FAILURE_PREFIX, drop_capabilities};
use super::error::SandboxError;
use super::{SandboxPolicy, egress_relay, rules, seccomp};

/// The argument that selects the inner stage.
pub(crate) const INNER_ARG: &str = "__sandbox-inner";

/// What the helper asks of the inner stage (its first argument, as JSON). Paths are as the
/// inner stage sees them (inside the view, when there is one).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct InnerRequest {
    pub policy: SandboxPolicy,
    /// The command's private temporary directory.
    pub tmp: PathBuf,
    /// Apply Landlock; `require_landlock`: fail unless the kernel enforced some of it.
    pub landlock: bool,
    pub require_landlock: bool,
    /// The working directory, relative to the workspace, opened beneath it.
    pub cwd: Option<PathBuf>,
    /// Where the command's ending is reported (`E<code>` or `S<signal>`).
    pub status_fd: i32,
    /// Process ids the command must not signal (outside a PID namespace: the helper and
    /// the gateway).
    pub protected: Vec<i32>,
    /// Relay `127.0.0.1:EGRESS_PORT` to the egress proxy's socket.
    pub egress: Option<PathBuf>,
}

/// Runs the inner stage with the arguments after [`INNER_ARG`]; never returns.
pub(crate) fn main(args: Vec<OsString>) -> ! {
    let code = match run(args) {
        Ok(()) => 0,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "{FAILURE_PREFIX}{e}");
            super::HELPER_FAILURE
        }
    };
    std::process::exit(code)
}

fn run(args: Vec<OsString>) -> Result<(), SandboxError> {
    let mut args = args.into_iter();
    let request = args
        .next()
        .and_then(|a| a.into_string().ok())
        .ok_or_else(|| SandboxError::Usage("expected REQUEST PROGRAM ARGS…".to_owned()))?;
    let request: InnerRequest =
        serde_json::from_str(&request).map_err(|e| SandboxError::Usage(format!("request: {e}")))?;
    let program = args
        .next()
        .ok_or_else(|| SandboxError::Usage("no program to run".to_owned()))?;
    // SAFETY: the helper passed this descriptor open (and only this process uses it); it
    // is owned from here on and closed on exec like every other inherited one.
    #[allow(unsafe_code)]
    let status = unsafe { OwnedFd::from_raw_fd(request.status_fd) };
    super::close_inherited_descriptors();

    if let Some(rel) = &request.cwd {
        enter_beneath(&request.policy.workspace, rel)?;
    }
    let relay = match &request.egress {
        Some(socket) => Some(egress_relay::Relay::listen(socket.clone())?),
        None => None,
    };
    confine(&request)?;

    let mut command = Command::new(&program);
    command.args(args);
    let mut child = command.spawn().map_err(SandboxError::io(format!(
        "start {}",
        Path::new(&program).display()
    )))?;
    if let Some(relay) = relay {
        relay.serve_in_background();
    }
    let ended = child
        .wait()
        .map_err(SandboxError::io("wait for the command"))?;
    let report = match (ended.code(), ended.signal()) {
        (Some(code), _) => format!("E{code}\n"),
        (None, Some(signal)) => format!("S{signal}\n"),
        (None, None) => "E1\n".to_owned(),
    };
    let _ = rustix::io::write(status.as_fd(), report.as_bytes());
    Ok(())
}

/// Capabilities, `no_new_privs`, Landlock, seccomp — each needs what the next one takes
/// away.
fn confine(request: &InnerRequest) -> Result<(), SandboxError> {
    let seccomp = seccomp::programs(
        request.policy.allow_network || request.egress.is_some(),
        &request.protected,
    )?;
    let landlock = if request.landlock {
        Some(rules::ruleset(
            &request.policy,
            &request.tmp,
            request.egress.as_deref(),
        )?)
    } else {
        None
    };
    drop_capabilities(last_capability()).map_err(SandboxError::Usage)?;
    rustix::thread::set_no_new_privs(true)
        .map_err(|e| SandboxError::io("set no_new_privs")(e.into()))?;
    if let Some(ruleset) = landlock {
        let status = ruleset
            .restrict_self()
            .map_err(|e| SandboxError::Landlock(e.to_string()))?;
        if request.require_landlock && status.ruleset == RulesetStatus::NotEnforced {
            return Err(SandboxError::NotEnforced(
                "the kernel enforced none of the ruleset".to_owned(),
            ));
        }
    }
    seccomp::install(&seccomp).map_err(|e| SandboxError::Seccomp(e.to_string()))
}

/// Enters `rel` beneath `root` by descriptor: `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`
/// from the workspace's own descriptor, then `fchdir`. A component swapped for a symlink
/// since the gateway checked it is refused, not followed.
fn enter_beneath(root: &Path, rel: &Path) -> Result<(), SandboxError> {
    let what = || format!("enter the working directory `{}`", rel.display());
    let dir_flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let root_fd = rustix::fs::open(root, dir_flags, Mode::empty())
        .map_err(|e| SandboxError::io(what())(e.into()))?;
    let clean: PathBuf = rel
        .components()
        .filter(|c| !matches!(c, Component::CurDir))
        .collect();
    if clean
        .components()
        .any(|c| !matches!(c, Component::Normal(_)))
    {
        return Err(SandboxError::Usage(format!(
            "the working directory `{}` is not a plain path beneath the workspace",
            rel.display()
        )));
    }
    let dir = if clean.as_os_str().is_empty() {
        root_fd
    } else {
        let resolve =
            ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
        match rustix::fs::openat2(&root_fd, &clean, dir_flags, Mode::empty(), resolve) {
            Ok(fd) => fd,
            Err(rustix::io::Errno::NOSYS) => {
                walk_nofollow(root_fd, &clean).map_err(|e| SandboxError::io(what())(e.into()))?
            }
            Err(e) => return Err(SandboxError::io(what())(e.into())),
        }
    };
    rustix::process::fchdir(&dir).map_err(|e| SandboxError::io(what())(e.into()))
}

/// Without `openat2`: one `openat(O_NOFOLLOW)` per component.
fn walk_nofollow(root: OwnedFd, rel: &Path) -> rustix::io::Result<OwnedFd> {
    let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mut dir = root;
    for name in rel.components() {
        dir = rustix::fs::openat(&dir, name.as_os_str(), flags, Mode::empty())?;
    }
    Ok(dir)
}

fn last_capability() -> u32 {
    std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(63)
}
