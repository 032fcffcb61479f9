//! [`EgressError`]: why a request was refused before it left, each message saying what to
//! change; and [`egress_refusal`], which finds one inside a `reqwest::Error`.
//!
//! URLs in messages are shown as their origin (`scheme://host:port`): paths and queries often
//! carry secrets (webhook tokens, signed links), and credentials are never shown.

use std::net::IpAddr;

use crate::addr::AddrClass;

/// A request toolgate refused to send, or an `[egress]` setting that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EgressError {
    #[error(
        "refused: {origin} uses scheme `{scheme}`; only https (and http for [egress] allow_http hosts) is allowed"
    )]
    Scheme { origin: String, scheme: String },
    #[error(
        "refused: plain http to {host}; use https, or to allow it add \"{host}\" to [egress] allow_http"
    )]
    PlainHttp { host: String },
    #[error(
        "refused: the URL for {origin} carries credentials (user:password@); send them in a header instead"
    )]
    Userinfo { origin: String },
    #[error("refused: `{url}` has no host")]
    NoHost { url: String },
    #[error(
        "refused: {addr} is {class}; to allow it add \"{suggest}\" to [egress] allow_hosts",
        suggest = allow_entry(.addr, .port)
    )]
    ForbiddenAddress {
        addr: IpAddr,
        port: Option<u16>,
        class: AddrClass,
    },
    #[error(
        "refused: {host} resolves to {addr}, which is {class}; to allow it add \"{host}\" to [egress] allow_hosts"
    )]
    ForbiddenResolution {
        host: String,
        addr: IpAddr,
        class: AddrClass,
    },
    #[error(
        "refused: more than {max} redirects (the next was to {next}); raise [egress] max_redirects to follow more"
    )]
    TooManyRedirects { max: usize, next: String },
    #[error("refused: cannot tell where a connection goes (`{0}`); nothing was sent")]
    UnknownDestination(String),
    #[error(
        "[egress] entry `{entry}` is not a host name, host:port, IP address, IP:port, CIDR block or *.domain: {reason}"
    )]
    InvalidEntry { entry: String, reason: String },
    #[error("cannot build the HTTP client: {0}")]
    Client(String),
}

impl EgressError {
    /// Whether this refuses a request (a policy decision) rather than reporting a bad setting.
    pub fn is_refusal(&self) -> bool {
        !matches!(
            self,
            EgressError::InvalidEntry { .. } | EgressError::Client(_)
        )
    }
}

/// The allowlist entry that would let `addr` through: IPv6 bracketed when a port follows.
fn allow_entry(addr: &IpAddr, port: &Option<u16>) -> String {
    match (addr, port) {
        (IpAddr::V4(v4), Some(p)) => format!("{v4}:{p}"),
        (IpAddr::V6(v6), Some(p)) => format!("[{v6}]:{p}"),
        (ip, None) => ip.to_string(),
    }
}

/// The [`EgressError`] behind a failed request, if the guard refused it (at the URL check,
/// the resolver, a redirect hop or the connection itself). `None` means an ordinary network
/// or HTTP failure.
pub fn egress_refusal(err: &reqwest::Error) -> Option<&EgressError> {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(e) = cause {
        if let Some(refusal) = e.downcast_ref::<EgressError>() {
            return Some(refusal);
        }
        cause = e.source();
    }
    None
}

/// `scheme://host[:port]` of a URL, without credentials, path or query.
pub(crate) fn origin(url: &url::Url) -> String {
    match url.origin() {
        o @ url::Origin::Tuple(..) => o.ascii_serialization(),
        url::Origin::Opaque(_) => format!("{}:", url.scheme()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_say_what_to_add() {
        let metadata = EgressError::ForbiddenAddress {
            addr: "169.254.169.254".parse().unwrap(),
            port: None,
            class: AddrClass::CloudMetadata,
        };
        let loopback6 = EgressError::ForbiddenAddress {
            addr: "::1".parse().unwrap(),
            port: Some(8080),
            class: AddrClass::Loopback,
        };
        let resolved = EgressError::ForbiddenResolution {
            host: "evil.test".into(),
            addr: "10.0.0.1".parse().unwrap(),
            class: AddrClass::Private,
        };
        assert_eq!(
            [metadata, loopback6, resolved].map(|e| e.to_string()),
            [
                "refused: 169.254.169.254 is link-local (cloud metadata); to allow it add \"169.254.169.254\" to [egress] allow_hosts",
                "refused: ::1 is loopback; to allow it add \"[::1]:8080\" to [egress] allow_hosts",
                "refused: evil.test resolves to 10.0.0.1, which is private (RFC 1918); to allow it add \"evil.test\" to [egress] allow_hosts",
            ]
        );
    }

    #[test]
    fn origins_hide_credentials_paths_and_queries() {
        let url = url::Url::parse("https://u:secret@hooks.example:8443/T0K3N?sig=x").unwrap();
        assert_eq!(origin(&url), "https://hooks.example:8443");
    }
}
