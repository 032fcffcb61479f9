//! Running a stdio server inside an OS sandbox (R-ACT-2 for servers the gateway spawns).
//!
//! This crate has no sandbox of its own: a server's `sandbox` table ([`SandboxSpec`]) says
//! what the server may touch, and the program embedding the hub supplies a
//! [`StdioSandbox`] that turns the server's command into one that runs it confined (the
//! `toolgate` binary: the shell tool's Landlock + seccomp helper). A server with `sandbox`
//! set is never started unconfined: without a [`StdioSandbox`], or when the wrapper fails,
//! the attempt fails with the reason.
//!
//! A sandboxed server does not inherit toolgate's environment: it gets `PATH`, `LANG` and
//! `LC_ALL` (when set) and its own `env` table, so no secret of the gateway leaks into it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The `sandbox` table of a stdio server: `sandbox = { writable = ["/srv/data"] }`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SandboxSpec {
    /// Trees the server may read and write. None: only a private temporary directory (and a
    /// state directory the embedding program may add).
    pub writable: Vec<PathBuf>,
    /// More read-only (and executable) trees besides the system directories: the server's
    /// program and its libraries when they live elsewhere (a `node_modules`, a venv).
    pub readable: Vec<PathBuf>,
    /// Let the server open TCP connections and resolve names (off: no network at all).
    pub network: bool,
}

/// The command line that runs one stdio server confined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxedCommand {
    pub program: String,
    pub args: Vec<String>,
}

/// Supplied by the embedding program; see the module docs.
pub trait StdioSandbox: Send + Sync + std::fmt::Debug {
    /// The command that runs `command args…` (in `cwd`, if given) for server `server`,
    /// confined as `spec` says; `Err` says why it cannot be.
    fn wrap(
        &self,
        server: &str,
        spec: &SandboxSpec,
        command: &str,
        args: &[String],
        cwd: Option<&Path>,
    ) -> Result<SandboxedCommand, String>;
}

/// The variables a sandboxed server gets from toolgate's environment.
pub(crate) const PASSED_ENV: &[&str] = &["PATH", "LANG", "LC_ALL"];
