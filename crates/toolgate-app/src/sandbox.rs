//! The confinement of stdio MCP servers: the shell tool's sandbox helper around each one.

use std::path::Path;

use toolgate_mcp::{SandboxSpec, SandboxedCommand, StdioSandbox};
use toolgate_tools::{ResourceLimits, SandboxLauncher, SandboxPolicy};

use crate::assemble::inside;

/// Runs a stdio MCP server (every one but those with `sandbox = "off"`) through the shell
/// tool's sandbox helper (this binary re-executed): Landlock (system trees and `readable`
/// read-only, `writable` read-write, nothing else), seccomp (no network unless `network =
/// true`), a process limit. No CPU-time or address-space limit: a server lives as long as
/// the gateway, and JavaScript engines reserve large address ranges. Relative paths are
/// relative to the workspace; with no `writable` entry the server gets `<data
/// dir>/mcp/<name>`. The data dir and config files inside a granted tree are covered (see
/// the shell sandbox's masks), but for the server's own state directory.
#[derive(Debug)]
pub(crate) struct ServerSandbox {
    pub(crate) workspace: std::path::PathBuf,
    pub(crate) data_dir: std::path::PathBuf,
    pub(crate) protected: Vec<std::path::PathBuf>,
}

impl StdioSandbox for ServerSandbox {
    fn available(&self) -> Result<(), String> {
        let support = toolgate_tools::Sandbox::probe();
        match support.landlock_abi {
            Some(_) => Ok(()),
            None => Err(format!(
                "the kernel offers no Landlock ({})",
                support.reason.unwrap_or_default()
            )),
        }
    }

    fn wrap(
        &self,
        server: &str,
        spec: &SandboxSpec,
        command: &str,
        args: &[String],
        _cwd: Option<&Path>,
    ) -> Result<SandboxedCommand, String> {
        let support = toolgate_tools::Sandbox::probe();
        if support.landlock_abi.is_none() {
            return Err(format!(
                "the kernel offers no Landlock ({}); `toolgate doctor` explains",
                support.reason.unwrap_or_default()
            ));
        }
        let resolve = |p: &std::path::PathBuf| {
            if p.is_absolute() {
                p.clone()
            } else {
                self.workspace.join(p)
            }
        };
        let mut writable: Vec<_> = spec.writable.iter().map(resolve).collect();
        if writable.is_empty() {
            let state = self.data_dir.join("mcp").join(server);
            std::fs::create_dir_all(&state)
                .map_err(|e| format!("cannot create {}: {e}", state.display()))?;
            writable.push(state);
        }
        if let Some(missing) = writable.iter().find(|p| !p.is_dir()) {
            return Err(format!(
                "`sandbox.writable` entry {} is not a directory",
                missing.display()
            ));
        }
        let mut policy = SandboxPolicy::new(writable[0].clone());
        policy.extra_write_paths = writable[1..].to_vec();
        policy.extra_read_paths = spec.readable.iter().map(resolve).collect();
        policy.allow_network = spec.network;
        policy.limits = ResourceLimits {
            cpu_secs: None,
            memory_bytes: None,
            ..ResourceLimits::default()
        };
        policy.protected_paths = self
            .protected
            .iter()
            .filter(|p| {
                // Inside a granted tree, or a tree granted inside it (but the default
                // state directory, which the mask keeps reachable).
                let canonical = p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
                let chosen = spec
                    .writable
                    .iter()
                    .map(resolve)
                    .chain(policy.extra_read_paths.clone());
                writable
                    .iter()
                    .chain(&policy.extra_read_paths)
                    .any(|g| inside(g, p))
                    || chosen
                        .into_iter()
                        .any(|g| g.canonicalize().unwrap_or(g).starts_with(&canonical))
            })
            .cloned()
            .collect();
        let (program, argv) = toolgate_tools::sandbox::stdio_command(
            &SandboxLauncher::current_exe(),
            &policy,
            command,
            args,
        )
        .map_err(|e| format!("cannot locate the sandbox helper: {e}"))?;
        Ok(SandboxedCommand {
            program: program.to_string_lossy().into_owned(),
            args: argv
                .into_iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect(),
        })
    }
}
