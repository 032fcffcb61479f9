//! `toolgate serve`: the gateway behind HTTP (MCP, API, console) until Ctrl-C or SIGTERM —
//! flags turned into listeners and a signal; the runtime owns the serving and its shutdown
//! (`Runtime::serve`). `search_tools` joins the catalog once it exceeds `[rag] threshold`
//! (checked at start and whenever an MCP server's tools change).

use toolgate_app::{Listeners, Runtime, RuntimeOptions};

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
    let listeners = Listeners::bind(&config, settings.file.telemetry.metrics_listen).await?;
    let runtime = Runtime::open(settings, RuntimeOptions::service()).await?;
    let local_addr = listeners.main.local_addr()?;
    output::line(&format!(
        "toolgate serving at http://{local_addr}/  (MCP: http://{local_addr}/mcp · API: http://{local_addr}/v1 · workspace: {})",
        settings.workspace.display()
    ));
    runtime.serve(config, listeners, shutdown_signal()).await?;
    Ok(0)
}

/// `--stdio`: MCP on stdin/stdout for a host that spawned us, acting as `stdio:$USER` (the
/// operator at this terminal) in the configured role. Nothing but protocol goes to stdout;
/// logs go to stderr. Ends when the host closes stdin.
async fn run_stdio(settings: &Config) -> anyhow::Result<i32> {
    let runtime = Runtime::open(settings, RuntimeOptions::service()).await?;
    let caller = toolgate_gateway::Caller::named(
        format!("stdio:{}", crate::user::local_user()),
        settings.role.clone(),
        true,
    );
    runtime.serve_stdio(caller).await?;
    Ok(0)
}
