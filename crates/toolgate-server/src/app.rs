//! Router assembly and the serve loop. The surface, outermost first:
//!
//! ```text
//! host/origin check   DNS-rebinding protection for every route
//! authenticate        bearer token (configured or issued) → principal + role; or the
//!                     anonymous grant; or 401
//!   routes            /v1/* (api), /mcp (mcp), /openapi.json, /.well-known/*
//! routes              / and /assets/* (console): public
//! routes              /hooks/* (Slack, Telegram): each verified by its service's proof
//! fallbacks           404 / 405 with the one error body
//! ```
//!
//! Connections are accepted by [`accept`]: a header read timeout and a connection cap.

use std::future::Future;
use std::time::Duration;

use axum::Router;
use tokio::net::TcpListener;

use crate::accept::{self, ConnectionLimits};
use crate::api::webhook::WebhookError;
use crate::state::AppState;
use crate::{api, auth, console, hooks, mcp};

/// How long calls still running when the grace period ends get to record their
/// cancellation before the audit is flushed.
const CANCEL_GRACE: Duration = Duration::from_secs(5);

/// Every route of the server, with its guards. The console's page and assets are outside
/// authentication (they hold no data; the API they call is guarded), as are the 404/405
/// answers; the API's public routes pass authentication by [`api::is_public`].
pub fn router(state: AppState) -> Router {
    let authenticated = Router::new()
        .merge(api::routes())
        .merge(mcp::routes_with(state.mcp_options().clone()))
        .method_not_allowed_fallback(api::method_not_allowed)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            auth::authenticate,
        ));
    Router::new()
        .merge(authenticated)
        .merge(console::routes())
        .merge(hooks::routes())
        .fallback(api::not_found)
        .method_not_allowed_fallback(api::method_not_allowed)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            auth::check_host_and_origin,
        ))
        .with_state(state)
}

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(transparent)]
    Webhook(#[from] WebhookError),
    #[error("serving: {0}")]
    Io(#[from] std::io::Error),
}

/// Serves until `shutdown` resolves (or `state.shutdown` fires), then (see [`crate::state`])
/// stops accepting, lets in-flight calls finish (up to the configured grace) and cancels
/// what still runs. What outlives the server — the MCP hub, the audit log, the store — is
/// its owner's to stop (`toolgate_app::Runtime::serve`), after this returns.
pub async fn serve(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    api::webhook::start(&state).await?;
    state.feed().start(&state.approvals, &state.shutdown).await;
    if let Some(hub) = state.channels() {
        hub.start(&state.shutdown);
        // The feed also sees requests other processes made (embedded store): each event
        // starts a pass at once instead of at the next tick.
        let mut events = state
            .feed()
            .subscribe(&state.approvals, &state.shutdown)
            .await;
        let (hub, stop) = (std::sync::Arc::clone(hub), state.shutdown.clone());
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = stop.cancelled() => return,
                    event = events.recv() => match event {
                        Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                        _ => hub.wake(),
                    },
                }
            }
        });
    }
    if let Ok(conversations) = state.conversations() {
        // Continues the turns the last run of this process (or a dead replica) left.
        conversations.start(&state.shutdown);
    }
    if let Some(bots) = state.bots() {
        bots.start(&state.shutdown);
    }
    let tokens = state
        .tokens()
        .map(|book| book.spawn(state.shutdown.clone()));
    let grace = Duration::from_secs(state.config.shutdown_grace_secs);
    let token = state.shutdown.clone();
    let app = router(state.clone());
    // Also when something else (a test, an embedding program) fires the token.
    let signal = tokio::spawn(async move {
        tokio::select! {
            () = shutdown => token.cancel(),
            () = token.cancelled() => {}
        }
    });
    let limits = ConnectionLimits::from_config(&state.config);
    let server = accept::run(listener, app, limits, state.shutdown.clone());
    let stopping = state.shutdown.clone();
    tokio::select! {
        () = server => {}
        () = async {
            stopping.cancelled().await;
            tokio::time::sleep(grace).await;
        } => {
            tracing::warn!("in-flight requests did not finish within {grace:?}; cancelling them");
        }
    }
    signal.abort();
    if !state.stop_calls(CANCEL_GRACE).await {
        tracing::error!("calls still running {CANCEL_GRACE:?} after being cancelled; not waiting");
    }
    if let Some(task) = tokens {
        let _ = task.await;
    }
    Ok(())
}
