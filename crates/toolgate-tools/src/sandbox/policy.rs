//! What a sandboxed command may do: the policy, its resource limits, how strictly the shell
//! insists on the sandbox, and how the helper process is started.

use std::ffi::OsString;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// The argument that turns a binary into the sandbox helper (see
/// [`run_helper_if_invoked`](super::run_helper_if_invoked)).
pub const HELPER_ARG: &str = "__sandbox-exec";

/// How the shell tool uses the OS sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Refuse to run commands unless the namespace view, Landlock and seccomp are all
    /// enforced (the default).
    #[default]
    Required,
    /// The operator's opt-out: sandbox with what the machine offers (the view, Landlock,
    /// seccomp, limits — or nothing), and say so loudly.
    IfAvailable,
    /// No sandbox: the command runs with the gateway's own access (only `cwd` is confined).
    Off,
}

impl SandboxMode {
    /// The configuration spelling: `required`, `if-available`, `off`.
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::Required => "required",
            SandboxMode::IfAvailable => "if-available",
            SandboxMode::Off => "off",
        }
    }
}

/// Per-command resource limits. `None` leaves a limit unset.
///
/// `memory_bytes` bounds each process's address space (`RLIMIT_AS`), not the sum over
/// processes; `max_processes` bounds the command's processes and threads together (a pids
/// cgroup where one is writable, else `RLIMIT_NPROC` on top of what the user already runs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResourceLimits {
    /// CPU seconds per process (`RLIMIT_CPU`; SIGXCPU, then SIGKILL one second later).
    pub cpu_secs: Option<u64>,
    /// Address space per process (`RLIMIT_AS`): allocations beyond it fail.
    pub memory_bytes: Option<u64>,
    /// Processes and threads the command may have alive at once.
    pub max_processes: Option<u64>,
    /// Largest file a process may write (`RLIMIT_FSIZE`; SIGXFSZ beyond it).
    pub max_file_bytes: Option<u64>,
}

impl Default for ResourceLimits {
    fn default() -> Self {
        ResourceLimits {
            cpu_secs: Some(600),
            memory_bytes: Some(8 << 30),
            max_processes: Some(512),
            max_file_bytes: Some(1 << 30),
        }
    }
}

/// The walls around one command.
///
/// File system (Landlock): read and execute the system directories (`/usr`, `/bin`,
/// `/sbin`, `/lib*`, `/opt`), `/proc`, `/sys`, `/etc` minus its secrets (shadow files,
/// sudoers, SSH host keys, TLS private keys, stored network credentials) and
/// `extra_read_paths`; read and write the `workspace`, a private temporary directory (the
/// command's `TMPDIR`, removed afterwards) and the harmless devices (`/dev/null`, `/dev/zero`,
/// `/dev/full`, `/dev/random`, `/dev/urandom`). Nothing else — home directories and `/tmp`
/// itself are neither readable nor writable.
///
/// Protected paths (toolgate's own state inside the workspace) are covered by empty,
/// read-only mounts in a private mount namespace.
///
/// Network: unless `allow_network`, no TCP connect or bind (Landlock) and no socket but a
/// Unix stream socket that cannot connect anywhere (seccomp) — which also rules out DNS.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SandboxPolicy {
    /// Read-write root of the command (absolute).
    pub workspace: PathBuf,
    pub allow_network: bool,
    pub limits: ResourceLimits,
    /// More read-only (and executable) trees, e.g. a toolchain outside the system dirs.
    pub extra_read_paths: Vec<PathBuf>,
    /// More read-write trees besides the workspace (each must exist).
    #[serde(default)]
    pub extra_write_paths: Vec<PathBuf>,
    /// Paths inside the workspace the command must neither see nor change (toolgate's data
    /// dir and config): covered in a private mount namespace.
    pub protected_paths: Vec<PathBuf>,
}

impl SandboxPolicy {
    /// No network, default limits, no extra paths.
    pub fn new(workspace: impl Into<PathBuf>) -> Self {
        SandboxPolicy {
            workspace: workspace.into(),
            allow_network: false,
            limits: ResourceLimits::default(),
            extra_read_paths: Vec::new(),
            extra_write_paths: Vec::new(),
            protected_paths: Vec::new(),
        }
    }
}

/// How the shell starts the sandbox helper: a program run with [`HELPER_ARG`] first.
///
/// The `toolgate` binary re-executes itself ([`SandboxLauncher::current_exe`]); a program
/// that embeds the shell tool either calls
/// [`run_helper_if_invoked`](super::run_helper_if_invoked) at the top of its `main` and
/// does the same, or points at a `toolgate-sandbox` binary ([`SandboxLauncher::program`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxLauncher {
    /// `None`: the running executable.
    program: Option<PathBuf>,
}

impl SandboxLauncher {
    /// The running executable, which must call `run_helper_if_invoked` first thing.
    pub fn current_exe() -> Self {
        SandboxLauncher { program: None }
    }

    /// A separate helper binary (such as `toolgate-sandbox`).
    pub fn program(path: impl Into<PathBuf>) -> Self {
        SandboxLauncher {
            program: Some(path.into()),
        }
    }

    /// The program and its leading arguments.
    pub(crate) fn argv(&self) -> std::io::Result<(PathBuf, Vec<OsString>)> {
        let program = match &self.program {
            Some(p) => p.clone(),
            None => std::env::current_exe()?,
        };
        Ok((program, vec![HELPER_ARG.into()]))
    }
}
