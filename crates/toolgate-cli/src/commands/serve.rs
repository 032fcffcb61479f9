//! `toolgate serve`: the gateway behind HTTP (MCP, API, console) until Ctrl-C or SIGTERM.

use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, bail};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use toolgate_server::{AppState, Inner};

use crate::app::{open_approvals, open_gateway};
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
        bail!("`toolgate serve --stdio` is not available yet");
    }
    let mut config = settings.file.server.clone();
    if let Some(listen) = args.listen {
        config.listen = listen;
    }
    let gateway = Arc::new(open_gateway(settings, None)?);
    let approvals = Arc::new(open_approvals(settings)?);
    let listener = TcpListener::bind(&config.listen).await.with_context(|| {
        format!(
            "cannot listen on {} (choose another with --listen ADDR:PORT)",
            config.listen
        )
    })?;
    let local_addr = listener.local_addr()?;
    if !local_addr.ip().is_loopback() && config.tokens.is_empty() && config.anonymous.is_none() {
        tracing::warn!(
            "listening beyond loopback with no [[server.tokens]] and no [server.anonymous]: every request will be refused"
        );
    }
    let state = AppState::new(Inner {
        gateway,
        approvals,
        audit_jsonl: settings.audit_path(),
        audit_db: settings.db_path(),
        config,
        local_addr,
        started: Instant::now(),
        shutdown: CancellationToken::new(),
    });
    output::line(&format!(
        "toolgate serving at http://{local_addr}/  (MCP: http://{local_addr}/mcp · API: http://{local_addr}/v1 · workspace: {})",
        settings.workspace.display()
    ));
    toolgate_server::serve(listener, state, shutdown_signal())
        .await
        .context("serving")?;
    Ok(0)
}
