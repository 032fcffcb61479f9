//! DNS-rebinding protection: Host and Origin must name this server.

use axum::extract::{Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use toolgate_protocol::ErrorCode;

use crate::error::ApiError;
use crate::state::AppState;

const LOOPBACK_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

/// `host[:port]` → host, keeping IPv6 brackets.
fn host_part(authority: &str) -> &str {
    if authority.starts_with('[') {
        return authority.split_inclusive(']').next().unwrap_or(authority);
    }
    authority.split(':').next().unwrap_or(authority)
}

fn allowed_host(state: &AppState, authority: &str) -> bool {
    let host = host_part(authority).to_ascii_lowercase();
    let listen_ip = state.local_addr.ip();
    let listen = if listen_ip.is_ipv6() {
        format!("[{listen_ip}]")
    } else {
        listen_ip.to_string()
    };
    LOOPBACK_NAMES.contains(&host.as_str())
        || (!listen_ip.is_unspecified() && host == listen)
        || state
            .config
            .allowed_hosts
            .iter()
            .any(|h| h.eq_ignore_ascii_case(authority) || h.eq_ignore_ascii_case(&host))
        || state.config.public_url.as_deref().is_some_and(|u| {
            u.split("://")
                .nth(1)
                .map(|rest| rest.split('/').next().unwrap_or(rest))
                .is_some_and(|a| host_part(a).eq_ignore_ascii_case(&host))
        })
}

fn allowed_origin(state: &AppState, origin: &str) -> bool {
    if state
        .config
        .allowed_origins
        .iter()
        .any(|o| o.eq_ignore_ascii_case(origin))
    {
        return true;
    }
    match origin.split_once("://") {
        Some(("http" | "https", authority)) => allowed_host(state, authority),
        _ => false,
    }
}

/// Middleware: refuses (403) a request whose Host or Origin is not ours.
pub async fn check_host_and_origin(
    State(state): State<AppState>,
    req: Request,
    next: Next,
) -> Response {
    let headers = req.headers();
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    if !allowed_host(&state, host) {
        return ApiError::new(ErrorCode::Forbidden, format!("Host `{host}` is not allowed"))
            .with_hint("add it to [server] allowed_hosts in toolgate.toml if this server is reached by that name")
            .into_response();
    }
    if let Some(origin) = headers.get(header::ORIGIN).and_then(|o| o.to_str().ok())
        && !allowed_origin(&state, origin)
    {
        return ApiError::new(
            ErrorCode::Forbidden,
            format!("Origin `{origin}` is not allowed"),
        )
        .with_hint("add it to [server] allowed_origins in toolgate.toml")
        .into_response();
    }
    next.run(req).await
}

#[cfg(test)]
mod tests {
    use super::host_part;

    #[test]
    fn host_part_keeps_ipv6_brackets() {
        assert_eq!(host_part("localhost:8765"), "localhost");
        assert_eq!(host_part("[::1]:80"), "[::1]");
        assert_eq!(host_part("evil.example"), "evil.example");
    }
}
