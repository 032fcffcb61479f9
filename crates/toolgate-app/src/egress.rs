//! The egress proxies of sandboxed processes (issue 29): one per grant — the shell of a
//! role, a stdio MCP server — each on its own Unix socket in `<data dir>/egress/` (0700;
//! the data dir does not exist in any sandbox's view, so a process reaches only the socket
//! bound into its own). Every connection the proxies decide is an audit record (`tool` =
//! `egress`, `principal` = `sandbox:<grant>`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use toolgate_audit::AuditLog;
use toolgate_gateway::audit::records::EgressConnection;
use toolgate_net::{
    EgressPolicy, EgressProxy, HostPattern, ProxyAudit, ProxyEvent, ProxyGrant, SystemLookup,
};
use toolgate_tools::ShellEgress;

use crate::config::Config;

/// Writes each decided connection to the audit log.
#[derive(Debug)]
pub(crate) struct AuditedEgress {
    log: Arc<AuditLog>,
}

impl AuditedEgress {
    pub(crate) fn new(log: Arc<AuditLog>) -> Arc<Self> {
        Arc::new(AuditedEgress { log })
    }
}

impl ProxyAudit for AuditedEgress {
    fn record(&self, event: ProxyEvent) {
        let method = match event.method {
            Some(toolgate_net::ProxyMethod::Connect) => "CONNECT",
            Some(toolgate_net::ProxyMethod::Http) => "HTTP",
            None => "-",
        };
        let record = toolgate_gateway::audit::records::egress(&EgressConnection {
            grant: &event.grant,
            method,
            host: &event.host,
            port: event.port,
            refused: event.refused.as_deref(),
            bytes_up: event.bytes_up,
            bytes_down: event.bytes_down,
            duration: event.duration,
        });
        let log = Arc::clone(&self.log);
        tokio::spawn(async move {
            if let Err(e) = log.append(record).await {
                tracing::error!("cannot audit an egress connection: {e}");
            }
        });
    }
}

/// `<data dir>/egress`, private to toolgate.
fn socket_dir(data_dir: &Path) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    let dir = data_dir.join("egress");
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)?;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))?;
    Ok(dir)
}

/// A proxy for one grant, on `<data dir>/egress/<file>.sock`.
pub(crate) fn proxy(
    data_dir: &Path,
    policy: &EgressPolicy,
    file: &str,
    name: String,
    allow: Vec<HostPattern>,
    audit: Arc<dyn ProxyAudit>,
) -> std::io::Result<EgressProxy> {
    let path = socket_dir(data_dir)?.join(format!("{file}-{}.sock", std::process::id()));
    let grant = ProxyGrant {
        name,
        allow,
        policy: Arc::new(policy.clone()),
        lookup: Arc::new(SystemLookup),
    };
    EgressProxy::bind(path, grant, audit)
}

/// The shell's proxies: one per role with an allowlist (`[shell] egress` for every role,
/// `[shell.role_egress]` per role).
#[derive(Debug)]
pub(crate) struct ShellProxies {
    /// `None`: the role's own list is empty (no network for it).
    by_role: BTreeMap<String, Option<EgressProxy>>,
    default: Option<EgressProxy>,
}

impl ShellEgress for ShellProxies {
    fn socket_for(&self, role: &str) -> Option<PathBuf> {
        let proxy = match self.by_role.get(role) {
            Some(own) => own.as_ref(),
            None => self.default.as_ref(),
        };
        proxy.map(|p| p.path().to_owned())
    }
}

impl ShellProxies {
    /// The proxies `[shell]` asks for, or `None` when no role has network.
    pub(crate) fn start(
        config: &Config,
        audit: Arc<dyn ProxyAudit>,
    ) -> anyhow::Result<Option<Arc<Self>>> {
        let shell = &config.file.shell;
        if shell.egress.is_empty() && shell.role_egress.values().all(Vec::is_empty) {
            return Ok(None);
        }
        let mut by_role = BTreeMap::new();
        for (role, allow) in &shell.role_egress {
            let own = (!allow.is_empty())
                .then(|| {
                    proxy(
                        &config.data_dir,
                        &config.file.egress,
                        &format!("shell-{}", sanitize(role)),
                        format!("shell:{role}"),
                        allow.clone(),
                        Arc::clone(&audit),
                    )
                })
                .transpose()?;
            by_role.insert(role.clone(), own);
        }
        let default = (!shell.egress.is_empty())
            .then(|| {
                proxy(
                    &config.data_dir,
                    &config.file.egress,
                    "shell",
                    "shell".to_owned(),
                    shell.egress.clone(),
                    Arc::clone(&audit),
                )
            })
            .transpose()?;
        Ok(Some(Arc::new(ShellProxies { by_role, default })))
    }
}

/// A role or server name as a file name.
pub(crate) fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}
