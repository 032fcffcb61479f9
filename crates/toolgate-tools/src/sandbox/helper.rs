//! The sandbox helper: a single-threaded process (`<binary> __sandbox-exec REQUEST PROGRAM
//! ARGS…`) that prepares the walls, starts the command inside them, supervises it as a
//! subreaper and cleans up.
//!
//! Sequence: decode the request → become a child subreaper → create the private temporary
//! directory and the pids cgroup, open the Landlock paths, compile the seccomp filters →
//! spawn the command (which confines itself before exec, see `confine`) → supervise until
//! it exits or the lifeline closes → kill every descendant → remove the cgroup and the
//! temporary directory → exit as the command did (same code, or the same signal).
//!
//! A failure before the command runs is one `toolgate sandbox: …` line on stderr and exit
//! status [`HELPER_FAILURE`].

use std::ffi::OsString;
use std::io::Write;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use rustix::process::{Pid, Resource};
use serde::{Deserialize, Serialize};

use super::cgroup::{self, PidsCgroup};
use super::confine::{Confinement, FAILURE_PREFIX};
use super::error::SandboxError;
use super::inner::{INNER_ARG, InnerRequest};
use super::reaper::{self, Ending};
use super::{SandboxPolicy, mask, view};

/// Exit status of a helper that could not start the command (as `env` and `timeout` do).
pub const HELPER_FAILURE: i32 = 125;

/// What the gateway asks of the helper (its first argument, as JSON).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct HelperRequest {
    pub policy: SandboxPolicy,
    /// Apply Landlock and fail if it is not enforced; `false`: seccomp, limits and
    /// supervision only (the kernel has no Landlock and the mode allows that).
    pub landlock: bool,
    /// Build the namespace view with this bubblewrap, which the gateway checked once (the
    /// helper is a new process per command: it does not check again); `None`: the host's
    /// view with the protected paths masked (the mode allows less than the full sandbox).
    #[serde(default)]
    pub view: Option<PathBuf>,
    /// `SandboxMode::Required`: also fail when the protected paths cannot be hidden
    /// (otherwise they stay visible, as without a sandbox).
    pub strict: bool,
    /// The command talks over the helper's stdin and stdout (a stdio MCP server). Its stdin
    /// is then passed through instead of being the lifeline; the lifeline becomes the
    /// parent process (gone: the command is swept), and the command stays in the helper's
    /// process group, so killing that group stops both.
    #[serde(default)]
    pub stdio: bool,
    /// The working directory relative to the workspace, entered by descriptor beneath it
    /// inside the view; `None`: the helper's own directory if the view has it.
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// The egress proxy's Unix socket (network only through it).
    #[serde(default)]
    pub egress: Option<PathBuf>,
}

/// Runs the helper with the arguments after [`HELPER_ARG`](super::HELPER_ARG); never returns.
pub(crate) fn main(args: Vec<OsString>) -> ! {
    let code = match run(args) {
        Ok(ending) => exit_like(ending),
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "{FAILURE_PREFIX}{e}");
            HELPER_FAILURE
        }
    };
    std::process::exit(code)
}

fn run(args: Vec<OsString>) -> Result<Ending, SandboxError> {
    let mut args = args.into_iter();
    let request = args
        .next()
        .and_then(|a| a.into_string().ok())
        .ok_or_else(|| SandboxError::Usage("expected REQUEST PROGRAM ARGS…".to_owned()))?;
    let request: HelperRequest =
        serde_json::from_str(&request).map_err(|e| SandboxError::Usage(format!("request: {e}")))?;
    let program = args
        .next()
        .ok_or_else(|| SandboxError::Usage("no program to run".to_owned()))?;

    // Descriptors the gateway inherited from its own caller (`7</etc/shadow`) must not
    // reach the command: only stdio is passed on.
    close_inherited_descriptors();
    rustix::process::set_child_subreaper(Some(rustix::process::getpid()))
        .map_err(|e| SandboxError::io("become a child subreaper")(e.into()))?;
    let bwrap = request.view.clone();
    // A program named by a path through `..` (`a/x/../b`) would pass, in the view, through
    // directories it lacks: it is named by its real directory instead, its own name kept.
    let through_parent = Path::new(&program)
        .components()
        .any(|c| c == std::path::Component::ParentDir);
    let program = match (&bwrap, Path::new(&program).parent()) {
        (Some(_), Some(dir)) if through_parent => match dir.canonicalize() {
            Ok(real) => real
                .join(Path::new(&program).file_name().unwrap_or_default())
                .into_os_string(),
            Err(_) => program,
        },
        _ => program,
    };
    let tmp = PrivateTmp::create()?;
    let exe = std::env::current_exe().map_err(SandboxError::io("locate the running executable"))?;
    let (status_read, status_write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)
        .map_err(|e| SandboxError::io("create the status pipe")(e.into()))?;
    let (mut confinement, held) = prepare(&request, bwrap.is_some())?;
    confinement.pass_fds.push(status_write.as_raw_fd());

    let me = rustix::process::getpid().as_raw_pid();
    let parent = rustix::process::getppid().map(Pid::as_raw_pid);
    let inner = InnerRequest {
        // The view binds every tree at its real path: a path through a symlinked directory
        // (`/srv` → `/mnt/srv`) names nothing inside it.
        policy: match bwrap {
            Some(_) => real_paths(&request.policy),
            None => request.policy.clone(),
        },
        tmp: if bwrap.is_some() {
            PathBuf::from(view::VIEW_TMP)
        } else {
            tmp.path().to_owned()
        },
        landlock: request.landlock,
        require_landlock: request.landlock,
        cwd: request.cwd.clone(),
        status_fd: status_write.as_raw_fd(),
        protected: if bwrap.is_some() {
            Vec::new()
        } else {
            std::iter::once(me).chain(parent).collect()
        },
        egress: request.egress.as_ref().map(|socket| match bwrap {
            Some(_) => PathBuf::from(view::EGRESS_SOCKET),
            None => socket.clone(),
        }),
    };
    let inner = serde_json::to_string(&inner).map_err(|e| SandboxError::Usage(e.to_string()))?;
    let mut command = match &bwrap {
        Some(bwrap) => {
            let spec = view::ViewSpec {
                policy: &request.policy,
                tmp: Some(tmp.path()),
                masks: &held.masks(),
                exe: Some(&exe),
                egress: request.egress.as_deref(),
            };
            let mut command = Command::new(bwrap);
            command.args(view::args(&spec)).arg(view::INNER_EXE);
            command.env("TMPDIR", view::VIEW_TMP);
            command
        }
        None => {
            let mut command = Command::new(&exe);
            command.env("TMPDIR", tmp.path());
            command
        }
    };
    command.arg(INNER_ARG).arg(inner).arg(&program).args(args);
    if !request.stdio {
        command.stdin(Stdio::null());
    }
    let parent = if request.stdio {
        Some(parent_pidfd()?)
    } else {
        None
    };
    // SAFETY: the closure runs between fork and exec. The helper is single-threaded (it
    // is `main` of a fresh process and starts no threads), so no lock can be held by a
    // thread that vanished in the fork; the closure only makes system calls and, on
    // failure, formats one line.
    #[allow(unsafe_code)]
    unsafe {
        command.pre_exec(move || confinement.apply());
    }
    let child = command.spawn().map_err(SandboxError::io(match &bwrap {
        Some(b) => format!("start {}", b.display()),
        None => format!("start {}", exe.display()),
    }))?;
    drop(status_write);
    let pid = Pid::from_raw(i32::try_from(child.id()).unwrap_or(i32::MAX))
        .ok_or_else(|| SandboxError::Usage("the command has no process id".to_owned()))?;
    let stdin = std::io::stdin();
    let lifeline = match &parent {
        Some(fd) => fd.as_fd(),
        None => stdin.as_fd(),
    };
    let ending = reaper::supervise(pid, lifeline);
    reaper::sweep(pid);
    // The confinement (and with it the now empty pids cgroup) goes with the command, then
    // the protected paths' placeholders and the temporary directory.
    drop(command);
    drop(held);
    drop(tmp);
    Ok(reported(ending, &status_read, bwrap.is_some()))
}

/// The policy with its trees named by their real paths (each left as it is when it cannot be
/// resolved).
fn real_paths(policy: &SandboxPolicy) -> SandboxPolicy {
    let real = |p: &PathBuf| p.canonicalize().unwrap_or_else(|_| p.clone());
    SandboxPolicy {
        workspace: real(&policy.workspace),
        extra_read_paths: policy.extra_read_paths.iter().map(real).collect(),
        extra_write_paths: policy.extra_write_paths.iter().map(real).collect(),
        ..policy.clone()
    }
}

/// How the command ended: as the inner stage reported it; else (it never started) the
/// wrapper's own ending — the inner stage's failure, or bubblewrap's, turned into one.
fn reported(ending: Ending, status: &OwnedFd, view: bool) -> Ending {
    let mut buf = [0u8; 32];
    let n = rustix::io::read(status, &mut buf).unwrap_or(0);
    let text = std::str::from_utf8(&buf[..n]).unwrap_or("").trim();
    let parsed = match text.split_at_checked(1) {
        Some(("E", code)) => code.parse().ok().map(Ending::Exited),
        Some(("S", signal)) => signal.parse().ok().map(Ending::Killed),
        _ => None,
    };
    match (parsed, ending) {
        (_, Ending::Abandoned) => Ending::Abandoned,
        (Some(reported), _) => reported,
        (None, Ending::Exited(HELPER_FAILURE)) => Ending::Exited(HELPER_FAILURE),
        (None, other) => {
            let _ = writeln!(
                std::io::stderr(),
                "{FAILURE_PREFIX}{} ended before the command started ({other:?})",
                if view {
                    "bubblewrap"
                } else {
                    "the inner stage"
                }
            );
            Ending::Exited(HELPER_FAILURE)
        }
    }
}

/// The helper's child's steps, and the protected paths held while the command runs.
fn prepare(request: &HelperRequest, view: bool) -> Result<(Confinement, mask::Held), SandboxError> {
    let policy = &request.policy;
    let limits = &policy.limits;
    let mut rlimits: Vec<(Resource, u64)> = [
        (Resource::Cpu, limits.cpu_secs),
        (Resource::As, limits.memory_bytes),
        (Resource::Fsize, limits.max_file_bytes),
    ]
    .into_iter()
    .filter_map(|(r, v)| Some((r, v?)))
    .collect();
    let mut cgroup = None;
    if let Some(max) = limits.max_processes {
        match cgroup::pids_parent().map(|parent| PidsCgroup::create(&parent, max)) {
            Some(Ok(made)) => cgroup = Some(made),
            _ => rlimits.push((Resource::Nproc, tasks_of_this_user().saturating_add(max))),
        }
    }
    let writable: Vec<PathBuf> = std::iter::once(&policy.workspace)
        .chain(&policy.extra_write_paths)
        .filter_map(|p| p.canonicalize().ok())
        .collect();
    let (masks, held) = mask::hold(&policy.protected_paths, &writable);
    let confinement = Confinement {
        own_group: !request.stdio,
        limits: rlimits,
        cgroup,
        pass_fds: if view { held.kept_fds() } else { Vec::new() },
        masks: if view { Vec::new() } else { masks },
        strict: request.strict,
    };
    Ok((confinement, held))
}

/// Marks every descriptor above stderr close-on-exec (`close_range`, Linux 5.11; before
/// that one `fcntl` per possible descriptor). Async-signal-safe: also used between fork
/// and exec.
pub fn close_inherited_descriptors() {
    const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
    #[allow(unsafe_code)]
    // SAFETY: close_range takes no pointers; marking descriptors close-on-exec changes
    // nothing in this process until it execs.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            3,
            libc::c_uint::MAX,
            CLOSE_RANGE_CLOEXEC,
        )
    };
    if rc == 0 {
        return;
    }
    let max = rustix::process::getrlimit(Resource::Nofile)
        .current
        .unwrap_or(1 << 16)
        .min(1 << 20);
    for fd in 3..i32::try_from(max).unwrap_or(i32::MAX) {
        #[allow(unsafe_code)]
        // SAFETY: fcntl on a number that may not be an open descriptor fails with EBADF.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFD);
            if flags >= 0 {
                libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
            }
        }
    }
}

/// A pidfd of the process that started the helper: readable once it has exited.
fn parent_pidfd() -> Result<std::os::fd::OwnedFd, SandboxError> {
    let parent = rustix::process::getppid()
        .ok_or_else(|| SandboxError::Usage("the helper has no parent".to_owned()))?;
    rustix::process::pidfd_open(parent, rustix::process::PidfdFlags::empty())
        .map_err(|e| SandboxError::io("watch the parent process")(e.into()))
}

/// `RLIMIT_NPROC` counts every task of the real user, so the bound is what the user runs
/// now plus the command's allowance.
fn tasks_of_this_user() -> u64 {
    use std::os::unix::fs::MetadataExt;
    let uid = rustix::process::getuid().as_raw();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .filter(|e| e.metadata().is_ok_and(|m| m.uid() == uid))
        .map(|e| std::fs::read_dir(e.path().join("task")).map_or(1, |t| t.count() as u64))
        .sum()
}

/// The exit status that reports `ending` to the gateway; for a signal death, the helper
/// dies from the same signal.
fn exit_like(ending: Ending) -> i32 {
    match ending {
        Ending::Exited(code) => code,
        Ending::Killed(signal) => {
            die_by(signal);
            128 + signal
        }
        Ending::Abandoned => 128 + libc::SIGKILL,
    }
}

/// Restores the default action of `signal` and raises it (no core file: RLIMIT_CORE 0).
#[allow(unsafe_code)]
fn die_by(signal: i32) {
    let _ = rustix::process::setrlimit(
        Resource::Core,
        rustix::process::Rlimit {
            current: Some(0),
            maximum: Some(0),
        },
    );
    // SAFETY: resetting a disposition to SIG_DFL and raising a signal touch no memory of
    // ours; the process is single-threaded and about to end.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        libc::raise(signal);
    }
}

/// The command's `TMPDIR`: a fresh 0700 directory, removed with everything in it.
#[derive(Debug)]
struct PrivateTmp(PathBuf);

impl PrivateTmp {
    fn create() -> Result<Self, SandboxError> {
        use std::os::unix::fs::DirBuilderExt;
        let base = std::env::temp_dir();
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let mut last = None;
        for attempt in 0..16u32 {
            let dir = base.join(format!(
                "toolgate-sandbox-{}-{:x}",
                std::process::id(),
                nanos.wrapping_add(attempt.wrapping_mul(0x9e37_79b9))
            ));
            match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
                Ok(()) => return Ok(PrivateTmp(dir)),
                Err(e) => last = Some(e),
            }
        }
        Err(SandboxError::io(format!(
            "create a private temporary directory in {}",
            base.display()
        ))(last.unwrap_or_else(|| {
            std::io::Error::other("no attempt made")
        })))
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for PrivateTmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
