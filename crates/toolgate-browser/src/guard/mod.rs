//! The SSRF guard of the browser: one decision ([`RequestGuard`]) enforced at two points.
//!
//! 1. [`intercept`]: CDP `Fetch` interception on the browser target pauses EVERY request of
//!    every page and frame — documents, subresources, and each redirect hop, which Chromium
//!    reports as a new paused request — and continues it only after [`RequestGuard::check`]
//!    passed; otherwise it fails it with `BlockedByClient` and records a [`Refusal`].
//! 2. [`proxy`]: Chromium is launched with `--proxy-server` pointing at a loopback proxy owned
//!    by the session, so Chromium never resolves a name or opens a connection itself. The
//!    proxy resolves each name once through the same guarded lookup, checks every address,
//!    and connects to exactly the checked addresses: a DNS answer cannot change between the
//!    check and the connection (no rebinding window), and what the `Fetch` domain does not
//!    see (WebSocket handshakes, preconnects) still passes the guard.
//!
//! The decision, in order: scheme `http`/`https` only; the `[browser] allow_origins`
//! allowlist when set; [`toolgate_net::check_url`] (plain http, credentials, literal
//! addresses); then for a host name, its addresses from the [`Lookup`], each classified with
//! [`toolgate_net::check_resolved`].

pub mod intercept;
pub mod proxy;
mod refusals;

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use toolgate_net::{EgressError, EgressPolicy, Lookup, check_resolved, check_url};
use url::{Host, Url};

use crate::origin::AllowedOrigin;

pub use refusals::{Refusal, Refusals};

/// Why a request was not allowed to leave.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GuardRefusal {
    #[error("the browser only loads http and https URLs, not `{scheme}:`")]
    Scheme { scheme: String },
    #[error("{origin} is not in [browser] allow_origins; to allow it add \"{origin}\" there")]
    Origin { origin: String },
    #[error("{0}")]
    Egress(#[from] EgressError),
    #[error("{host} did not resolve: {error}")]
    Unresolved { host: String, error: String },
}

impl GuardRefusal {
    /// Whether this is a policy decision (as opposed to a name that does not resolve).
    pub fn is_policy(&self) -> bool {
        !matches!(self, GuardRefusal::Unresolved { .. })
    }
}

/// The one decision both enforcement points make.
#[derive(Clone)]
pub struct RequestGuard {
    policy: Arc<EgressPolicy>,
    lookup: Arc<dyn Lookup>,
    origins: Arc<[AllowedOrigin]>,
}

impl std::fmt::Debug for RequestGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestGuard")
            .field("policy", &self.policy)
            .field("origins", &self.origins)
            .finish_non_exhaustive()
    }
}

impl RequestGuard {
    pub fn new(policy: EgressPolicy, lookup: Arc<dyn Lookup>, origins: Vec<AllowedOrigin>) -> Self {
        RequestGuard {
            policy: Arc::new(policy),
            lookup,
            origins: origins.into(),
        }
    }

    /// The checks that need no DNS: scheme, origin allowlist, [`check_url`].
    pub fn check_static(&self, url: &Url) -> Result<(), GuardRefusal> {
        if url.scheme() != "http" && url.scheme() != "https" {
            return Err(GuardRefusal::Scheme {
                scheme: url.scheme().to_owned(),
            });
        }
        if !self.origin_allowed(url) {
            return Err(GuardRefusal::Origin {
                origin: url.origin().ascii_serialization(),
            });
        }
        check_url(&self.policy, url)?;
        Ok(())
    }

    /// Whether the `allow_origins` list (when set) admits `url`'s origin.
    fn origin_allowed(&self, url: &Url) -> bool {
        self.origins.is_empty() || self.origins.iter().any(|o| o.matches(url))
    }

    /// The whole decision for a request to `url`: [`Self::check_static`], then the name's
    /// addresses. Returns the addresses that may be connected to (empty for a literal).
    pub async fn check(&self, url: &Url) -> Result<Vec<IpAddr>, GuardRefusal> {
        self.check_static(url)?;
        match url.host() {
            Some(Host::Domain(name)) => self.resolve(name, url.port_or_known_default()).await,
            _ => Ok(Vec::new()),
        }
    }

    /// Resolves `name` once and refuses it if any address is forbidden for `port`.
    pub async fn resolve(
        &self,
        name: &str,
        port: Option<u16>,
    ) -> Result<Vec<IpAddr>, GuardRefusal> {
        let addrs = self
            .lookup
            .lookup(name)
            .await
            .map_err(|e| GuardRefusal::Unresolved {
                host: name.to_owned(),
                error: e.to_string(),
            })?;
        if addrs.is_empty() {
            return Err(GuardRefusal::Unresolved {
                host: name.to_owned(),
                error: "no address".to_owned(),
            });
        }
        check_resolved(&self.policy, name, port, &addrs)?;
        Ok(addrs)
    }

    /// Where a connection to `url`'s host may go: the checked addresses with the port.
    pub async fn destinations(&self, url: &Url) -> Result<Vec<SocketAddr>, GuardRefusal> {
        let port = url.port_or_known_default().unwrap_or(80);
        let resolved = self.check(url).await?;
        let addrs = match url.host() {
            Some(Host::Ipv4(v4)) => vec![IpAddr::V4(v4)],
            Some(Host::Ipv6(v6)) => vec![IpAddr::V6(v6)],
            _ => resolved,
        };
        Ok(addrs
            .into_iter()
            .map(|ip| SocketAddr::new(ip, port))
            .collect())
    }
}

impl RequestGuard {
    /// The checked destinations of a proxy `CONNECT host:port` tunnel (https, or a
    /// WebSocket): checked as an https URL to that authority, except that an `allow_origins`
    /// entry of either scheme for that host and port admits it.
    pub async fn tunnel_destinations(
        &self,
        host: &str,
        port: u16,
    ) -> Result<Vec<SocketAddr>, GuardRefusal> {
        let authority = match host.parse::<IpAddr>() {
            Ok(IpAddr::V6(v6)) => format!("[{v6}]:{port}"),
            _ => format!("{host}:{port}"),
        };
        let unusable = |e: url::ParseError| GuardRefusal::Unresolved {
            host: host.to_owned(),
            error: e.to_string(),
        };
        let https = Url::parse(&format!("https://{authority}/")).map_err(unusable)?;
        let http = Url::parse(&format!("http://{authority}/")).map_err(unusable)?;
        if !self.origin_allowed(&https) && !self.origin_allowed(&http) {
            return Err(GuardRefusal::Origin {
                origin: https.origin().ascii_serialization(),
            });
        }
        check_url(&self.policy, &https)?;
        let addrs = match https.host() {
            Some(Host::Domain(name)) => self.resolve(name, Some(port)).await?,
            Some(Host::Ipv4(v4)) => vec![IpAddr::V4(v4)],
            Some(Host::Ipv6(v6)) => vec![IpAddr::V6(v6)],
            None => Vec::new(),
        };
        Ok(addrs
            .into_iter()
            .map(|ip| SocketAddr::new(ip, port))
            .collect())
    }
}

/// `host:port` as the proxy and interception both spell it (IPv6 hosts in brackets, as
/// `Url::host_str` gives them).
pub(crate) fn authority(host: &str, port: u16) -> String {
    match host.parse::<std::net::Ipv6Addr>() {
        Ok(v6) => format!("[{v6}]:{port}"),
        Err(_) => format!("{}:{port}", host.to_ascii_lowercase()),
    }
}

/// A URL as shown to the model and in logs: no credentials, no query, no fragment
/// (queries and fragments often carry tokens), at most 200 characters.
pub fn display_url(url: &Url) -> String {
    let mut shown = url.clone();
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    shown.set_query(None);
    shown.set_fragment(None);
    let mut s = shown.to_string();
    if s.len() > 200 {
        let cut = (0..=200)
            .rev()
            .find(|&i| s.is_char_boundary(i))
            .unwrap_or(0);
        s.truncate(cut);
        s.push('…');
    }
    s
}

#[cfg(test)]
mod tests;
