//! `toolgate serve`: the gateway behind HTTP (MCP, API, console) until Ctrl-C or SIGTERM.
//! `search_tools` joins the catalog once it exceeds `[rag] threshold` (checked at start and
//! whenever an MCP server's tools change).

use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, bail};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use toolgate_server::{AppState, Inner};

use crate::app::{McpServers, open_approvals, open_gateway, spawn_mcp, watch_quarantine};
use crate::cli::ServeArgs;
use crate::output;
use crate::settings::Settings;

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(s) => s,
                Err(_) => {
                    let _ = ctrl_c.await;
                    return;
                }
            };
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
}

pub async fn run(settings: &Settings, args: ServeArgs) -> anyhow::Result<i32> {
    if args.stdio {
        return run_stdio(settings).await;
    }
    let mut config = settings.file.server.clone();
    if let Some(listen) = args.listen {
        config.listen = listen;
    }
    config.check()?;
    let gateway = Arc::new(open_gateway(settings, None)?);
    for role in config.granted_roles() {
        if gateway.roles().get(role).is_none() {
            let names: Vec<&str> = gateway.roles().names().collect();
            bail!(
                "[server] grants role `{role}`, which is not configured (configured roles: {})",
                names.join(", ")
            );
        }
    }
    let approvals = Arc::new(open_approvals(settings)?);
    let listener = TcpListener::bind(&config.listen).await.with_context(|| {
        format!(
            "cannot listen on {} (choose another with --listen ADDR:PORT)",
            config.listen
        )
    })?;
    let local_addr = listener.local_addr()?;
    // MCP servers come up in the background: one that is slow or down never delays serving.
    let hub = spawn_mcp(settings, gateway.catalog(), McpServers::All)?.map(Arc::new);
    let watcher = hub
        .as_ref()
        .map(|h| watch_quarantine(h, Arc::clone(gateway.catalog())));
    let rag = crate::rag::watch(settings, &gateway, hub.as_deref());
    if !local_addr.ip().is_loopback() && config.tokens.is_empty() && config.anonymous.is_none() {
        tracing::warn!(
            "listening beyond loopback with no [[server.tokens]] and no [server.anonymous]: every request except health, readiness and discovery documents will be refused (401)"
        );
    }
    let mut state = AppState::new(Inner {
        gateway,
        approvals,
        audit_jsonl: settings.audit_path(),
        audit_db: settings.db_path(),
        config,
        local_addr,
        started: Instant::now(),
        shutdown: CancellationToken::new(),
    })
    .with_max_argument_bytes(settings.file.limits.max_argument_bytes);
    if let Some(hub) = &hub {
        // Operators see the servers' state in `/v1/ready` (the console's Health page).
        let hub = Arc::clone(hub);
        state = state.with_mcp_status(Arc::new(move || {
            hub.status()
                .iter()
                .filter_map(|s| serde_json::to_value(s).ok())
                .collect()
        }));
    }
    output::line(&format!(
        "toolgate serving at http://{local_addr}/  (MCP: http://{local_addr}/mcp · API: http://{local_addr}/v1 · workspace: {})",
        settings.workspace.display()
    ));
    let served = toolgate_server::serve(listener, state, shutdown_signal()).await;
    if let Some(rag) = rag {
        rag.abort();
    }
    stop_mcp(hub.as_deref(), watcher).await;
    served.context("serving")?;
    Ok(0)
}

/// `--stdio`: MCP on stdin/stdout for a host that spawned us, acting as `stdio:$USER` (the
/// operator at this terminal) in the configured role. Nothing but protocol goes to stdout;
/// logs go to stderr. Ends when the host closes stdin.
async fn run_stdio(settings: &Settings) -> anyhow::Result<i32> {
    let gateway = Arc::new(open_gateway(settings, None)?);
    let hub = spawn_mcp(settings, gateway.catalog(), McpServers::All)?;
    let watcher = hub
        .as_ref()
        .map(|h| watch_quarantine(h, Arc::clone(gateway.catalog())));
    let rag = crate::rag::watch(settings, &gateway, hub.as_ref());
    let caller = toolgate_server::auth::Caller {
        principal: format!("stdio:{}", crate::commands::local_user()),
        role: settings.role.clone(),
        operator: true,
    };
    let served = toolgate_server::mcp::serve_stdio(
        Arc::clone(&gateway),
        caller,
        toolgate_server::mcp::McpOptions::default(),
    )
    .await;
    if let Some(rag) = rag {
        rag.abort();
    }
    stop_mcp(hub.as_ref(), watcher).await;
    if let Err(e) = gateway.audit().flush().await {
        tracing::error!(error = %e, "flushing the audit log failed");
    }
    served.context("serving MCP on stdin/stdout")?;
    Ok(0)
}

/// Stops the MCP servers (stdio children included) and the quarantine watcher.
async fn stop_mcp(
    hub: Option<&toolgate_mcp::McpHub>,
    watcher: Option<tokio::task::JoinHandle<()>>,
) {
    if let Some(w) = watcher {
        w.abort();
    }
    if let Some(hub) = hub {
        hub.shutdown().await;
    }
}
