//! `GET /metrics`: this process's metrics as Prometheus text (format 0.0.4) — the same
//! collection the OTLP export sends. Operators only on the main listener; `[telemetry]
//! metrics_listen` serves it without a token on a separate address for a scraper.

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};

use crate::auth::Operator;
use crate::auth::authority::Authority;
use crate::error::ApiError;
use crate::state::AppState;

/// The Prometheus text format's content type.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

pub async fn scrape(State(_): State<AppState>, Operator(_): Operator) -> Response {
    exposition()
}

/// Serves `GET /metrics` alone, without a token, on `listener` (`[telemetry]
/// metrics_listen`) until `stop` fires. Anything else there is 404.
///
/// Against DNS rebinding (a web page reading a loopback port through a name it controls),
/// the request's Host must be an IP address, `localhost`, or one of `allowed_hosts`
/// (`[server] allowed_hosts`): a scraper names its target one of those ways.
pub async fn serve_separately(
    listener: tokio::net::TcpListener,
    allowed_hosts: Vec<String>,
    stop: tokio_util::sync::CancellationToken,
) -> std::io::Result<()> {
    let app = axum::Router::new().route(
        "/metrics",
        axum::routing::get(move |headers: axum::http::HeaderMap| {
            let allowed = host_allowed(&headers, &allowed_hosts);
            async move {
                if allowed {
                    exposition()
                } else {
                    ApiError::new(
                        toolgate_protocol::ErrorCode::Forbidden,
                        "this Host is not allowed on the metrics listener".to_owned(),
                    )
                    .with_hint("scrape it by IP address or localhost, or add the name to [server] allowed_hosts")
                    .into_response()
                }
            }
        }),
    );
    axum::serve(listener, app)
        .with_graceful_shutdown(async move { stop.cancelled().await })
        .await
}

/// Whether the one `Host` header names an IP address, `localhost` or an allowed host.
fn host_allowed(headers: &axum::http::HeaderMap, allowed_hosts: &[String]) -> bool {
    let mut hosts = headers.get_all(header::HOST).iter();
    let (Some(host), None) = (hosts.next(), hosts.next()) else {
        return false;
    };
    let Some(a) = host.to_str().ok().and_then(Authority::parse) else {
        return false;
    };
    let bare = a.host.trim_start_matches('[').trim_end_matches(']');
    a.host == "localhost"
        || bare.parse::<std::net::IpAddr>().is_ok()
        || allowed_hosts.iter().any(|entry| {
            Authority::parse(entry.trim())
                .is_some_and(|e| e.host == a.host && e.port.is_none_or(|p| a.port == Some(p)))
        })
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

#[cfg(test)]
mod tests {
    use axum::http::{HeaderMap, HeaderValue};

    use super::*;

    fn with_host(h: &str) -> HeaderMap {
        let mut m = HeaderMap::new();
        m.insert(header::HOST, HeaderValue::from_str(h).unwrap());
        m
    }

    #[test]
    fn only_addresses_localhost_and_allowed_names_may_scrape() {
        let allowed = vec!["metrics.internal".to_owned()];
        for ok in [
            "127.0.0.1:9464",
            "10.0.0.5:9464",
            "[::1]:9464",
            "localhost:9464",
            "metrics.internal:9464",
        ] {
            assert!(host_allowed(&with_host(ok), &allowed), "{ok}");
        }
        for refused in ["attacker.example:9464", "127.0.0.1.nip.io:9464", ""] {
            assert!(!host_allowed(&with_host(refused), &allowed), "{refused}");
        }
        assert!(!host_allowed(&HeaderMap::new(), &allowed), "no Host");
    }
}
