//! DNS-rebinding protection: Host and Origin must name this server.
//!
//! Both are parsed strictly ([`Authority`]): anything that is not exactly `host[:port]` —
//! userinfo, a bad port, a trailing dot, percent-encoding, whitespace, a zone id — is refused
//! before it is compared, so a lenient split can never turn `localhost:80@evil.com` into
//! `localhost`. A request must carry at most one `Host` and one `Origin`; a request target in
//! absolute form (`GET http://host/…`) must name the same authority as its `Host`.
//!
//! - Host: a loopback name (`localhost`, `127.0.0.1`, `[::1]`), the listen address, the host
//!   of `public_url`, or an `allowed_hosts` entry (`name`, or `name:port` for that port only).
//!   Its port is not compared: a proxy in front may listen elsewhere.
//! - Origin: an `allowed_origins` entry (the whole origin), or one of this server's own
//!   origins: `http://` a loopback name or the listen address with the listen port, the
//!   scheme, host and port of `public_url`, or an `allowed_hosts` name. Another port on
//!   localhost is another web application, and is refused.

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use toolgate_protocol::ErrorCode;

use super::authority::{Authority, parse_origin};
use crate::error::ApiError;
use crate::state::AppState;

const LOOPBACK_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

/// The listen address as a Host names it (`[…]` for IPv6), unless it is unspecified.
fn listen_host(state: &AppState) -> Option<String> {
    let ip = state.local_addr.ip();
    if ip.is_unspecified() {
        return None;
    }
    Some(if ip.is_ipv6() {
        format!("[{ip}]")
    } else {
        ip.to_string()
    })
}

/// `public_url` as (scheme, authority with its default port filled in).
fn public_origin(state: &AppState) -> Option<(String, Authority)> {
    let url = state.config.public_url.as_deref()?;
    let (scheme, rest) = url.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or(rest);
    let (scheme, mut a) = parse_origin(&format!("{scheme}://{authority}"))?;
    a.port = a.port.or(Some(default_port(&scheme)));
    Some((scheme, a))
}

fn default_port(scheme: &str) -> u16 {
    if scheme == "https" { 443 } else { 80 }
}

/// An `allowed_hosts` entry admits this authority: same host, and same port if it names one.
fn allowed_hosts_admit(state: &AppState, a: &Authority) -> bool {
    state.config.allowed_hosts.iter().any(|entry| {
        Authority::parse(entry.trim())
            .is_some_and(|e| e.host == a.host && e.port.is_none_or(|p| a.port == Some(p)))
    })
}

fn allowed_host(state: &AppState, a: &Authority) -> bool {
    LOOPBACK_NAMES.contains(&a.host.as_str())
        || listen_host(state).is_some_and(|h| h == a.host)
        || allowed_hosts_admit(state, a)
        || public_origin(state).is_some_and(|(_, p)| p.host == a.host)
}

fn allowed_origin(state: &AppState, origin: &str) -> bool {
    if state
        .config
        .allowed_origins
        .iter()
        .any(|o| o.trim_end_matches('/').eq_ignore_ascii_case(origin))
    {
        return true;
    }
    let Some((scheme, a)) = parse_origin(origin) else {
        return false;
    };
    let port = a.port.unwrap_or(default_port(&scheme));
    let own_listener = LOOPBACK_NAMES.contains(&a.host.as_str())
        || listen_host(state).is_some_and(|h| h == a.host);
    (own_listener && scheme == "http" && port == state.local_addr.port())
        || public_origin(state)
            .is_some_and(|(s, p)| s == scheme && p.host == a.host && p.port == Some(port))
        || allowed_hosts_admit(state, &a)
}

/// The one value of a header that must not repeat: `Ok(None)` when absent, `Err` when
/// repeated or not text.
fn single<'h>(headers: &'h HeaderMap, name: &HeaderName) -> Result<Option<&'h str>, String> {
    let mut values = headers.get_all(name).iter();
    let Some(first) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(format!("more than one {name} header"));
    }
    first
        .to_str()
        .map(Some)
        .map_err(|_| format!("{name} is not ASCII text"))
}

fn forbidden(message: String, hint: &str) -> Response {
    ApiError::new(ErrorCode::Forbidden, message)
        .with_hint(hint)
        .into_response()
}

const HOST_HINT: &str =
    "add it to [server] allowed_hosts in toolgate.toml if this server is reached by that name";
const ORIGIN_HINT: &str = "add it to [server] allowed_origins in toolgate.toml";

/// Which authority the request names (its Host, and the target's authority in absolute
/// form, which must agree), or why it is refused.
fn requested_authority(req: &Request) -> Result<Authority, String> {
    let host = single(req.headers(), &header::HOST)?;
    let target = req.uri().authority().map(|a| a.as_str());
    let text = match (host, target) {
        (Some(h), Some(t)) if !h.eq_ignore_ascii_case(t) => {
            return Err(format!("the request target names `{t}` but Host is `{h}`"));
        }
        (Some(h), _) => h,
        (None, Some(t)) => t,
        (None, None) => return Err("no Host header".to_owned()),
    };
    Authority::parse(text).ok_or_else(|| format!("Host `{text}` is not allowed"))
}

/// Middleware: refuses (403) a request whose Host or Origin is not ours.
pub async fn check_host_and_origin(
    State(state): State<AppState>,
    req: Request,
    next: Next,
) -> Response {
    match requested_authority(&req) {
        Ok(a) if allowed_host(&state, &a) => {}
        Ok(a) => return forbidden(format!("Host `{}` is not allowed", a.text()), HOST_HINT),
        Err(message) => return forbidden(message, HOST_HINT),
    }
    match single(req.headers(), &header::ORIGIN) {
        Ok(None) => {}
        Ok(Some(origin)) if allowed_origin(&state, origin) => {}
        Ok(Some(origin)) => {
            return forbidden(format!("Origin `{origin}` is not allowed"), ORIGIN_HINT);
        }
        Err(message) => return forbidden(message, ORIGIN_HINT),
    }
    next.run(req).await
}
