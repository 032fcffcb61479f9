//! `GET /metrics`: this process's metrics as Prometheus text (format 0.0.4) — the same
//! collection the OTLP export sends. Operators only on the main listener; `[telemetry]
//! metrics_listen` serves it without a token on a separate address for a scraper.

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};

use crate::auth::Operator;
use crate::error::ApiError;
use crate::state::AppState;

/// The Prometheus text format's content type.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

pub async fn scrape(State(_): State<AppState>, Operator(_): Operator) -> Response {
    exposition()
}

/// Serves `GET /metrics` alone, without a token, on `listener` (`[telemetry]
/// metrics_listen`) until `stop` fires. Anything else there is 404.
pub async fn serve_separately(
    listener: tokio::net::TcpListener,
    stop: tokio_util::sync::CancellationToken,
) -> std::io::Result<()> {
    let app = axum::Router::new().route("/metrics", axum::routing::get(|| async { exposition() }));
    axum::serve(listener, app)
        .with_graceful_shutdown(async move { stop.cancelled().await })
        .await
}

/// The exposition, or 503 while telemetry is not installed (an embedding that never
/// installed it).
pub fn exposition() -> Response {
    match toolgate_telemetry::install::installed() {
        Some(t) => ([(header::CONTENT_TYPE, CONTENT_TYPE)], t.prometheus()).into_response(),
        None => ApiError::new(
            toolgate_protocol::ErrorCode::Unavailable,
            "metrics are not collected in this process".to_owned(),
        )
        .into_response(),
    }
}
