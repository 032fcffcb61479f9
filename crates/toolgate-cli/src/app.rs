//! Wiring: settings → stores → catalog → gateway. Nothing here decides policy; it only
//! connects the crates that do.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use toolgate_gateway::approve::Approver;
use toolgate_gateway::{Gateway, GatewayDeps};
use toolgate_mcp::{HubOptions, McpHub, RetryPolicy, SandboxSpec, SandboxedCommand, StdioSandbox};
use toolgate_registry::Catalog;
use toolgate_store::approvals::ApprovalStore;
use toolgate_store::audit::AuditLog;
use toolgate_store::idempotency::IdempotencyStore;
use toolgate_store::redact::Redactor;
use toolgate_store::results::ResultStore;
use toolgate_store::{CredentialStore, PinStore};
use toolgate_tools::{
    BuiltinOptions, ResourceLimits, SandboxLauncher, SandboxPolicy, ShellOptions, Workspace,
    builtin_tools,
};

use crate::settings::Settings;

/// Creates the data directory, with an error that says what to do when it can't.
pub fn ensure_data_dir(settings: &Settings) -> anyhow::Result<()> {
    let logs = settings.data_dir.join("logs");
    std::fs::create_dir_all(&logs).with_context(|| {
        format!(
            "cannot create the data directory {} (choose a writable one with --data-dir or data_dir in toolgate.toml)",
            settings.data_dir.display()
        )
    })?;
    let probe = settings.data_dir.join(".write-test");
    std::fs::write(&probe, b"").with_context(|| {
        format!(
            "the data directory {} is not writable (choose a writable one with --data-dir or data_dir in toolgate.toml)",
            settings.data_dir.display()
        )
    })?;
    let _ = std::fs::remove_file(probe);
    Ok(())
}

pub fn open_approvals(settings: &Settings) -> anyhow::Result<ApprovalStore> {
    ensure_data_dir(settings)?;
    ApprovalStore::open(&settings.db_path()).with_context(|| {
        format!(
            "cannot open the approvals store {}",
            settings.db_path().display()
        )
    })
}

/// The pinned tool definitions (R-REG-5), in the same database as the approvals.
pub fn open_pins(settings: &Settings) -> anyhow::Result<PinStore> {
    ensure_data_dir(settings)?;
    PinStore::open(&settings.db_path()).with_context(|| {
        format!(
            "cannot open the pinned tool definitions in {}",
            settings.db_path().display()
        )
    })
}

pub fn open_audit(settings: &Settings) -> anyhow::Result<AuditLog> {
    ensure_data_dir(settings)?;
    let key = crate::commands::audit::open_key(settings)?;
    AuditLog::open_keyed(
        &settings.audit_path(),
        &settings.db_path(),
        settings.durability(),
        key,
    )
    .with_context(|| {
        format!(
            "cannot open the audit log {}",
            settings.audit_path().display()
        )
    })
}

/// The built-in tools, confined to the workspace, with toolgate's own state protected.
pub fn workspace_tools(settings: &Settings) -> anyhow::Result<Vec<toolgate_core::DynTool>> {
    let protected = steering_paths(settings);
    let protected = protected
        .into_iter()
        .filter(|p| inside(&settings.workspace, p))
        .collect();
    let ws = Workspace::new(&settings.workspace, protected)
        .with_context(|| format!("cannot use workspace {}", settings.workspace.display()))?;
    let s = &settings.file.shell;
    let opts = BuiltinOptions {
        shell: ShellOptions {
            default_timeout: Duration::from_secs(s.default_timeout_secs),
            max_timeout: Duration::from_secs(s.max_timeout_secs),
            output_cap_bytes: s.output_cap_bytes,
            env_allowlist: s.env_allowlist.clone(),
            sandbox: s.sandbox,
            allow_network: s.allow_network,
            limits: s.limits(),
            extra_read_paths: s.extra_read_paths.clone(),
            // `main` turns this binary into the helper when re-executed.
            launcher: Some(SandboxLauncher::current_exe()),
        },
        max_read_bytes: settings.file.files.max_read_bytes,
    };
    Ok(builtin_tools(Arc::new(ws), &opts))
}

/// Everything that steers a `toolgate` started in this workspace, existing or not: the
/// data dir in use, the default one (`.toolgate`, which the next start without flags
/// would use), the config file read and the default one (`toolgate.toml`). The tools and
/// the processes toolgate starts must not reach them.
fn steering_paths(settings: &Settings) -> Vec<std::path::PathBuf> {
    let mut paths = vec![
        settings.data_dir.clone(),
        settings.workspace.join(crate::settings::DEFAULT_DATA_DIR),
        settings.workspace.join(crate::settings::CONFIG_FILE),
    ];
    paths.extend(settings.config_path.clone());
    paths.dedup();
    paths
}

fn inside(root: &Path, p: &Path) -> bool {
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let parent = p.parent().and_then(|d| d.canonicalize().ok());
    match parent {
        Some(d) => d.starts_with(&root),
        None => p.starts_with(&root),
    }
}

/// The whole gateway, ready for calls.
pub fn open_gateway(
    settings: &Settings,
    approver: Option<Arc<dyn Approver>>,
) -> anyhow::Result<Gateway> {
    ensure_data_dir(settings)?;
    // Tools of pinned sources (MCP servers) are checked against their pins on every reload.
    let catalog = Arc::new(Catalog::new().with_pins(Arc::new(open_pins(settings)?)));
    catalog
        .register_many(workspace_tools(settings)?)
        .context("registering the built-in tools")?;
    if settings.file.browser.enabled {
        // No browser starts here: each session launches its own on its first browser call.
        catalog
            .register_many(toolgate_browser::browser_tools(&settings.file.browser))
            .context("registering the browser tools")?;
    }
    let web = toolgate_web::web_tools(&settings.file.web, &settings.file.egress)
        .context("the [web] settings")?;
    catalog
        .register_many(web)
        .context("registering the web tools")?;
    let deps = GatewayDeps {
        catalog,
        audit: Arc::new(open_audit(settings)?),
        approvals: Arc::new(open_approvals(settings)?),
        results: Arc::new(
            ResultStore::open(&settings.results_dir())
                .context("cannot open the result store")?
                .with_retention(settings.file.limits.result_retention()),
        ),
        idempotency: Arc::new(
            IdempotencyStore::open(&settings.db_path())
                .context("cannot open the idempotency store")?,
        ),
        redactor: Arc::new(Redactor::default()),
        approver,
    };
    let gateway = Gateway::new(deps, &settings.gateway())?;
    if gateway.roles().get(&settings.role).is_none() {
        let names: Vec<&str> = gateway.roles().names().collect();
        bail!(
            "unknown role `{}` (configured roles: {})",
            settings.role,
            names.join(", ")
        );
    }
    Ok(gateway)
}

/// Which configured MCP servers a command starts.
#[derive(Debug, Clone, Copy)]
pub enum McpServers<'a> {
    /// Every enabled server.
    All,
    /// Only the server whose tools are named `mcp__{server}__…` (a call of a built-in tool
    /// starts none).
    ForTool(&'a str),
    /// The server with this name.
    Named(&'a str),
}

impl McpServers<'_> {
    fn admits(self, server: &str) -> bool {
        match self {
            McpServers::All => true,
            McpServers::ForTool(tool) => tool
                .strip_prefix("mcp__")
                .and_then(|rest| rest.strip_prefix(server))
                .is_some_and(|rest| rest.starts_with("__")),
            McpServers::Named(name) => name == server,
        }
    }
}

/// The hub options every command uses: default backoff, the `[egress]` policy for HTTP
/// servers, the shell tool's sandbox for stdio servers with a `sandbox` table, elicitation
/// routed to the approval channel ([`crate::elicit`]), and — when a
/// server has an `auth` table — the store holding the tokens `toolgate mcp login` saved.
pub fn hub_options(settings: &Settings) -> anyhow::Result<HubOptions> {
    let sandbox = ServerSandbox {
        workspace: settings.workspace.clone(),
        data_dir: settings.data_dir.clone(),
        protected: steering_paths(settings),
    };
    let approvals = &settings.file.approvals;
    let elicitor = crate::elicit::ApprovalElicitor::new(
        Arc::new(open_approvals(settings)?),
        Duration::from_secs(approvals.ttl_secs),
        Duration::from_millis(approvals.poll_millis.max(10)),
    );
    let options = HubOptions::new(RetryPolicy::default(), settings.file.egress.clone())
        .with_stdio_sandbox(Arc::new(sandbox))
        .with_elicitor(Arc::new(elicitor));
    if settings.file.mcp.servers.iter().any(|s| s.auth.is_some()) {
        return Ok(options.with_credentials(open_credentials(settings)?));
    }
    Ok(options)
}

/// The OAuth tokens of MCP servers (`mcp_credentials` in the store; files 0600).
pub fn open_credentials(settings: &Settings) -> anyhow::Result<Arc<CredentialStore>> {
    ensure_data_dir(settings)?;
    let store = CredentialStore::open(&settings.db_path()).with_context(|| {
        format!(
            "cannot open the credential store in {}",
            settings.db_path().display()
        )
    })?;
    Ok(Arc::new(store))
}

/// Runs a stdio MCP server (every one but those with `sandbox = "off"`) through the shell
/// tool's sandbox helper (this binary re-executed): Landlock (system trees and `readable`
/// read-only, `writable` read-write, nothing else), seccomp (no network unless `network =
/// true`), a process limit. No CPU-time or address-space limit: a server lives as long as
/// the gateway, and JavaScript engines reserve large address ranges. Relative paths are
/// relative to the workspace; with no `writable` entry the server gets `<data
/// dir>/mcp/<name>`. The data dir and config files inside a granted tree are covered (see
/// the shell sandbox's masks), but for the server's own state directory.
#[derive(Debug)]
struct ServerSandbox {
    workspace: std::path::PathBuf,
    data_dir: std::path::PathBuf,
    protected: Vec<std::path::PathBuf>,
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

/// Starts the selected `[[mcp.servers]]` on `catalog` (their tools are pinned there) and
/// returns without waiting; `None` when none is selected. Call [`McpHub::shutdown`] before
/// exiting so that stdio children are stopped.
pub fn spawn_mcp(
    settings: &Settings,
    catalog: &Arc<Catalog>,
    which: McpServers<'_>,
) -> anyhow::Result<Option<McpHub>> {
    let servers: Vec<_> = settings
        .file
        .mcp
        .servers
        .iter()
        .filter(|s| which.admits(&s.name))
        .cloned()
        .collect();
    if servers.is_empty() {
        return Ok(None);
    }
    let hub = McpHub::spawn(servers, Arc::clone(catalog), hub_options(settings)?)
        .context("the [[mcp.servers]] settings")?;
    Ok(Some(hub))
}

/// [`spawn_mcp`], then waits until every started server is ready or has failed its first
/// attempt (at most its `startup_timeout`); quarantines lifted by an approval made since
/// the pins were last read are applied.
pub async fn start_mcp(
    settings: &Settings,
    catalog: &Arc<Catalog>,
    which: McpServers<'_>,
) -> anyhow::Result<Option<McpHub>> {
    let hub = spawn_mcp(settings, catalog, which)?;
    if let Some(hub) = &hub {
        hub.settled().await;
        catalog.recheck_quarantined();
    }
    Ok(hub)
}

/// How often a long-running gateway re-reads the pins of quarantined tools, so that a
/// `toolgate tools approve-change` made in another process takes effect without a restart.
const QUARANTINE_RECHECK: Duration = Duration::from_secs(5);

/// For `serve`: after every re-listing of an MCP server's tools, and every few seconds,
/// releases quarantined tools whose changed definition has since been approved.
pub fn watch_quarantine(hub: &McpHub, catalog: Arc<Catalog>) -> tokio::task::JoinHandle<()> {
    let mut events = hub.events();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(QUARANTINE_RECHECK);
        loop {
            tokio::select! {
                event = events.recv() => match event {
                    Ok(toolgate_mcp::McpEvent::ToolsChanged { .. })
                    | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                    Ok(_) => continue,
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
                },
                _ = tick.tick() => {}
            }
            for name in catalog.recheck_quarantined() {
                tracing::info!(tool = %name, "changed definition approved; the tool is callable again");
            }
        }
    })
}
