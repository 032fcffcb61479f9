//! Router assembly and the serve loop. The surface, outermost first:
//!
//! ```text
//! host/origin check   DNS-rebinding protection for every route
//! authenticate        bearer token → principal + role; or the anonymous grant; or 401
//! routes              /v1/* (api), /mcp (mcp), /openapi.json, /.well-known/*, / (console)
//! ```

use std::future::Future;
use std::time::Duration;

use axum::Router;
use tokio::net::TcpListener;

use crate::state::AppState;
use crate::{api, auth, console, mcp};

/// Every route of the server, with its guards.
pub fn router(state: AppState) -> Router {
    Router::new()
        .merge(api::routes())
        .merge(mcp::routes())
        .merge(console::routes())
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            auth::authenticate,
        ))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            auth::check_host_and_origin,
        ))
        .with_state(state)
}

/// Serves until `shutdown` resolves, then stops accepting, lets in-flight requests finish
/// (up to the configured grace), and flushes the audit log.
pub async fn serve(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let grace = Duration::from_secs(state.config.shutdown_grace_secs);
    let token = state.shutdown.clone();
    let app = router(state.clone());
    let server = axum::serve(listener, app).with_graceful_shutdown(async move {
        shutdown.await;
        token.cancel();
    });
    let stopping = state.shutdown.clone();
    tokio::select! {
        result = server => result?,
        () = async {
            stopping.cancelled().await;
            tokio::time::sleep(grace).await;
        } => {
            tracing::warn!("in-flight requests did not finish within {grace:?}; stopping anyway");
        }
    }
    if let Err(e) = state.gateway.audit().flush().await {
        tracing::error!(error = %e, "flushing the audit log at shutdown failed");
    }
    Ok(())
}
