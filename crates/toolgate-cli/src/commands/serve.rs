//! `toolgate serve`: the gateway behind HTTP (MCP, API, console) until Ctrl-C or SIGTERM.
//! `search_tools` joins the catalog once it exceeds `[rag] threshold` (checked at start and
//! whenever an MCP server's tools change).

use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use toolgate_app::{Runtime, RuntimeOptions};
use toolgate_server::{AppState, Inner};

use crate::cli::ServeArgs;
use crate::output;
use toolgate_app::Config;

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

pub async fn run(settings: &Config, args: ServeArgs) -> anyhow::Result<i32> {
    if args.stdio {
        return run_stdio(settings).await;
    }
    let mut config = settings.file.server.clone();
    if let Some(listen) = args.listen {
        config.listen = listen;
    }
    config.check()?;
    let listener = TcpListener::bind(&config.listen).await.with_context(|| {
        format!(
            "cannot listen on {} (choose another with --listen ADDR:PORT)",
            config.listen
        )
    })?;
    let metrics = match settings.file.telemetry.metrics_listen {
        Some(addr) => {
            if !addr.ip().is_loopback() {
                tracing::warn!(
                    "[telemetry] metrics_listen {addr} serves /metrics without a token beyond loopback: keep it on a private network"
                );
            }
            Some(TcpListener::bind(addr).await.with_context(|| {
                format!("cannot listen on {addr} for /metrics ([telemetry] metrics_listen)")
            })?)
        }
        None => None,
    };
    let runtime = Runtime::open(settings, RuntimeOptions::service()).await?;
    let stop_metrics = CancellationToken::new();
    let metrics = metrics.map(|listener| {
        tokio::spawn(toolgate_server::api::metrics::serve_separately(
            listener,
            settings.file.server.allowed_hosts.clone(),
            stop_metrics.clone(),
        ))
    });
    let served = serve_http(settings, &runtime, config, listener).await;
    stop_metrics.cancel();
    if let Some(task) = metrics {
        let _ = task.await;
    }
    runtime.shutdown().await?;
    served.context("serving")?;
    Ok(0)
}

async fn serve_http(
    settings: &Config,
    runtime: &Runtime,
    config: toolgate_server::ServerConfig,
    listener: TcpListener,
) -> anyhow::Result<()> {
    let local_addr = listener.local_addr()?;
    if !local_addr.ip().is_loopback() && config.tokens.is_empty() && config.anonymous.is_none() {
        tracing::warn!(
            "listening beyond loopback with no [[server.tokens]] and no [server.anonymous]: every request except health, readiness and discovery documents will be refused (401)"
        );
    }
    let book = toolgate_server::auth::TokenBook::open(runtime.tokens().clone())
        .await
        .context("cannot read the issued tokens")?;
    let operators = toolgate_server::hooks::ServerOperators::new(
        &config,
        Some(Arc::clone(&book)),
        settings.file.approvals.operators.clone(),
    );
    let channels = runtime
        .approval_channels(Arc::new(operators), config.public_url.clone())
        .context("cannot start the approval channels ([[approvals.channels]])")?;
    let mut state = AppState::new(Inner {
        gateway: Arc::clone(runtime.gateway()),
        approvals: Arc::clone(runtime.gateway().desk().store()),
        audit_jsonl: settings.audit_path(),
        audit_db: settings.db_path(),
        config,
        local_addr,
        started: Instant::now(),
        shutdown: CancellationToken::new(),
    })
    .with_max_argument_bytes(settings.file.limits.max_argument_bytes)
    .with_mcp_options(runtime.mcp_options())
    .with_tokens(book);
    if let Some(hub) = channels {
        state = state.with_channels(hub);
    }
    if let Some(hub) = runtime.hub() {
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
    toolgate_server::serve(listener, state, shutdown_signal()).await?;
    Ok(())
}

/// `--stdio`: MCP on stdin/stdout for a host that spawned us, acting as `stdio:$USER` (the
/// operator at this terminal) in the configured role. Nothing but protocol goes to stdout;
/// logs go to stderr. Ends when the host closes stdin.
async fn run_stdio(settings: &Config) -> anyhow::Result<i32> {
    let runtime = Runtime::open(settings, RuntimeOptions::service()).await?;
    let caller = toolgate_server::auth::Caller::named(
        format!("stdio:{}", crate::user::local_user()),
        settings.role.clone(),
        true,
    );
    let served = toolgate_server::mcp::serve_stdio(
        Arc::clone(runtime.gateway()),
        caller,
        runtime.mcp_options(),
    )
    .await;
    if let Err(e) = runtime.shutdown().await {
        tracing::error!(error = %format!("{e:#}"), "shutting down");
    }
    served.context("serving MCP on stdin/stdout")?;
    Ok(0)
}
