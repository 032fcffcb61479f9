//! Wiring: configuration → stores → catalog → gateway. Nothing here decides policy; it only
//! connects the crates that do.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use toolgate_gateway::approve::Approver;
use toolgate_gateway::{Gateway, GatewayDeps};
use toolgate_registry::Catalog;
use toolgate_store::redact::Redactor;
use toolgate_tools::{BuiltinOptions, SandboxLauncher, ShellOptions, Workspace, builtin_tools};

use crate::config::Config;
use crate::stores::Stores;

/// The built-in tools, confined to the workspace, with toolgate's own state protected.
pub fn workspace_tools(config: &Config) -> anyhow::Result<Vec<toolgate_core::DynTool>> {
    workspace_tools_with(config, None)
}

fn workspace_tools_with(
    config: &Config,
    egress: Option<Arc<dyn toolgate_tools::ShellEgress>>,
) -> anyhow::Result<Vec<toolgate_core::DynTool>> {
    let protected = steering_paths(config);
    let protected = protected
        .into_iter()
        .filter(|p| inside(&config.workspace, p))
        .collect();
    let ws = Workspace::new(&config.workspace, protected)
        .with_context(|| format!("cannot use workspace {}", config.workspace.display()))?;
    let s = &config.file.shell;
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
            egress,
        },
        max_read_bytes: config.file.files.max_read_bytes,
    };
    Ok(builtin_tools(Arc::new(ws), &opts))
}

/// Every tool toolgate itself provides, as configured: the workspace tools, the browser
/// tools when `[browser]` is enabled, the web tools `[web]` turns on. Nothing starts here
/// (each browser session launches its own browser on its first call).
pub fn local_tools(config: &Config) -> anyhow::Result<Vec<toolgate_core::DynTool>> {
    local_tools_with(config, None)
}

/// The built-in tools; with `egress_audit`, the shell's egress proxies run (network for the
/// roles `[shell] egress` / `role_egress` name), every connection recorded there.
pub(crate) fn local_tools_with(
    config: &Config,
    egress_audit: Option<Arc<dyn toolgate_net::ProxyAudit>>,
) -> anyhow::Result<Vec<toolgate_core::DynTool>> {
    let egress = match egress_audit {
        Some(audit) => crate::egress::ShellProxies::start(config, audit)
            .context("starting the shell's egress proxies")?
            .map(|p| p as Arc<dyn toolgate_tools::ShellEgress>),
        None => None,
    };
    let mut tools = workspace_tools_with(config, egress)?;
    if config.file.browser.enabled {
        tools.extend(toolgate_browser::browser_tools(&config.file.browser));
    }
    tools.extend(
        toolgate_web::web_tools(&config.file.web, &config.file.egress)
            .context("the [web] settings")?,
    );
    Ok(tools)
}

/// Everything that steers a `toolgate` started in this workspace, existing or not: the
/// data dir in use, the default one (`.toolgate`, which the next start without flags
/// would use), the config file read and the default one (`toolgate.toml`). The tools and
/// the processes toolgate starts must not reach them.
pub(crate) fn steering_paths(config: &Config) -> Vec<std::path::PathBuf> {
    let mut paths = vec![
        config.data_dir.clone(),
        config.workspace.join(crate::config::DEFAULT_DATA_DIR),
        config.workspace.join(crate::config::CONFIG_FILE),
    ];
    paths.extend(config.config_path.clone());
    // The audit key: a server granted a tree holding it (an argument naming $HOME) must
    // still not read it, or it could forge the log.
    paths.extend(crate::stores::key_dir(config).ok());
    paths.dedup();
    paths
}

pub(crate) fn inside(root: &Path, p: &Path) -> bool {
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let parent = p.parent().and_then(|d| d.canonicalize().ok());
    match parent {
        Some(d) => d.starts_with(&root),
        None => p.starts_with(&root),
    }
}

/// The whole gateway over `stores`, ready for calls.
pub async fn open_gateway(
    config: &Config,
    stores: &Stores,
    approver: Option<Arc<dyn Approver>>,
) -> anyhow::Result<Gateway> {
    // Tools of pinned sources (MCP servers) are checked against their pins on every reload.
    let catalog = Arc::new(Catalog::new().with_pins(stores.pins()));
    let audit = Arc::new(stores.audit().await?);
    let egress_audit = crate::egress::AuditedEgress::new(Arc::clone(&audit));
    catalog
        .register_many(local_tools_with(config, Some(egress_audit))?)
        .context("registering the built-in tools")?;
    let deps = GatewayDeps {
        catalog,
        audit,
        approvals: Arc::new(stores.approvals()),
        results: Arc::new(stores.results()?),
        idempotency: Arc::new(stores.idempotency().with_lease(Duration::from_secs(
            config.file.limits.reservation_lease_secs,
        ))),
        redactor: Arc::new(Redactor::default()),
        approver,
        quota_buckets: stores.quotas(),
    };
    let gateway = Gateway::new(deps, &config.gateway())?;
    if gateway.roles().get(&config.role).is_none() {
        let names: Vec<&str> = gateway.roles().names().collect();
        bail!(
            "unknown role `{}` (configured roles: {})",
            config.role,
            names.join(", ")
        );
    }
    Ok(gateway)
}
