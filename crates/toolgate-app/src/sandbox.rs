//! The confinement of stdio MCP servers: the shell tool's sandbox helper around each one,
//! inside the same namespace view (bubblewrap) as shell commands.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use toolgate_mcp_client::{SandboxError, SandboxSpec, SandboxedCommand, StdioSandbox};
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
    /// `[egress]`: the SSRF guard's rules, which the servers' proxies apply too.
    pub(crate) egress: toolgate_net::EgressPolicy,
    /// Where the proxies record each connection.
    pub(crate) audit: Arc<dyn toolgate_net::ProxyAudit>,
    /// One proxy per server with an `egress` list, kept across its restarts.
    pub(crate) proxies: Mutex<HashMap<String, toolgate_net::EgressProxy>>,
}

impl StdioSandbox for ServerSandbox {
    fn available(&self) -> Result<(), SandboxError> {
        let support = toolgate_tools::Sandbox::probe();
        match support.is_complete() {
            true => Ok(()),
            false => Err(SandboxError::Unavailable(
                support
                    .reason
                    .unwrap_or_else(|| "the sandbox is incomplete".to_owned()),
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
    ) -> Result<SandboxedCommand, SandboxError> {
        self.available().map_err(|why| {
            SandboxError::Unavailable(format!("{why}; `toolgate doctor` explains"))
        })?;
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
            std::fs::create_dir_all(&state).map_err(|e| {
                SandboxError::Grant(format!("cannot create {}: {e}", state.display()))
            })?;
            writable.push(state);
        }
        if let Some(missing) = writable.iter().find(|p| !p.is_dir()) {
            return Err(SandboxError::Grant(format!(
                "`sandbox.writable` entry {} is not a directory",
                missing.display()
            )));
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
        // The server's own state directory is its home (npm's and uv's caches land there).
        let mut env = vec![(
            "HOME".to_owned(),
            writable[0].to_string_lossy().into_owned(),
        )];
        let socket = match spec.egress.is_empty() {
            true => None,
            false => Some(self.proxy_for(server, &spec.egress)?),
        };
        if socket.is_some() {
            let proxy = format!("http://127.0.0.1:{}", toolgate_tools::sandbox::EGRESS_PORT);
            for name in ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"] {
                env.push((name.to_owned(), proxy.clone()));
            }
            // Node's own fetch honours the variables only when asked to.
            env.push(("NODE_USE_ENV_PROXY".to_owned(), "1".to_owned()));
        }
        let args: Vec<String> = args.iter().map(|a| without_dot_dot(a)).collect();
        let (program, argv) = toolgate_tools::sandbox::stdio_command(
            &SandboxLauncher::current_exe(),
            &policy,
            socket.as_deref(),
            command,
            &args,
        )
        .map_err(|e| SandboxError::Helper(e.to_string()))?;
        Ok(SandboxedCommand {
            program: program.to_string_lossy().into_owned(),
            args: argv
                .into_iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect(),
            env,
        })
    }
}

impl ServerSandbox {
    /// The socket of `server`'s egress proxy, started on first use.
    fn proxy_for(
        &self,
        server: &str,
        allow: &[toolgate_net::HostPattern],
    ) -> Result<std::path::PathBuf, SandboxError> {
        let mut proxies = self
            .proxies
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(proxy) = proxies.get(server) {
            return Ok(proxy.path().to_owned());
        }
        let proxy = crate::egress::proxy(
            &self.data_dir,
            &self.egress,
            &format!("mcp-{}", crate::egress::sanitize(server)),
            format!("mcp:{server}"),
            allow.to_vec(),
            Arc::clone(&self.audit),
        )
        .map_err(|e| SandboxError::Proxy {
            server: server.to_owned(),
            why: e.to_string(),
        })?;
        let path = proxy.path().to_owned();
        proxies.insert(server.to_owned(), proxy);
        Ok(path)
    }
}

/// An absolute path argument through `..` (`/repo/crates/x/../../peer.py`) names, in the
/// sandbox's view, directories the server was never granted: it is passed with its real
/// directory instead (the same file the kernel would open; its own name kept). Anything
/// else is passed as it is.
fn without_dot_dot(arg: &str) -> String {
    let path = Path::new(arg);
    let through_parent = path
        .components()
        .any(|c| c == std::path::Component::ParentDir);
    if !path.is_absolute() || !through_parent {
        return arg.to_owned();
    }
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return arg.to_owned();
    };
    match dir.canonicalize() {
        Ok(real) => real.join(name).to_string_lossy().into_owned(),
        Err(_) => arg.to_owned(),
    }
}
