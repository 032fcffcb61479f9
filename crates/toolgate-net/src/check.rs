//! The two decisions the guard makes, as pure functions:
//!
//! 1. [`check_url`] — before a request, on every redirect hop and on every connection:
//!    scheme `https` (or `http` for `allow_http` hosts), no credentials in the URL, and an
//!    IP-literal host must be public or allowlisted. Host names pass here; their addresses
//!    are judged by (2) once resolved.
//! 2. [`check_resolved`] — in the resolver: a name that is not allowlisted is refused if ANY
//!    of its addresses is non-public and not covered by an address/CIDR entry.
//!
//! Numeric IPv4 spellings (`2130706433`, `0x7f.1`, `0177.0.0.1`) are already normalised to
//! dotted form by the `url` crate, so they reach (1) as literals.

use std::net::IpAddr;

use url::{Host, Url};

use crate::addr::classify;
use crate::error::{EgressError, origin};
use crate::policy::EgressPolicy;

/// Whether `url` may be requested under `policy` (before any DNS lookup).
pub fn check_url(policy: &EgressPolicy, url: &Url) -> Result<(), EgressError> {
    let scheme = url.scheme();
    if scheme != "http" && scheme != "https" {
        return Err(EgressError::Scheme {
            origin: origin(url),
            scheme: scheme.to_owned(),
        });
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(EgressError::Userinfo {
            origin: origin(url),
        });
    }
    let Some(host) = url.host() else {
        return Err(EgressError::NoHost { url: origin(url) });
    };
    let port = url.port_or_known_default();
    if scheme == "http" && !policy.allows_http(&host, port) {
        return Err(EgressError::PlainHttp {
            host: host.to_string(),
        });
    }
    let ip = match host {
        Host::Domain(_) => return Ok(()),
        Host::Ipv4(v4) => IpAddr::V4(v4),
        Host::Ipv6(v6) => IpAddr::V6(v6),
    };
    let class = classify(ip);
    if class.is_forbidden() && !policy.allows_host(&host, port) {
        return Err(EgressError::ForbiddenAddress {
            addr: ip,
            port: url.port(),
            class,
        });
    }
    Ok(())
}

/// Whether a name's resolved addresses may be connected to; `port` is the port being
/// connected to when known (entries restricted to a port match only then).
pub fn check_resolved(
    policy: &EgressPolicy,
    name: &str,
    port: Option<u16>,
    addrs: &[IpAddr],
) -> Result<(), EgressError> {
    if policy.allows_host(&Host::Domain(name), port) {
        return Ok(());
    }
    for &addr in addrs {
        let class = classify(addr);
        if class.is_forbidden() && !policy.allows_addr(addr, port) {
            return Err(EgressError::ForbiddenResolution {
                host: name.to_owned(),
                addr,
                class,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::addr::AddrClass;

    fn check(policy: &EgressPolicy, url: &str) -> Result<(), EgressError> {
        check_url(policy, &Url::parse(url).unwrap())
    }

    fn literal(addr: &str, port: Option<u16>, class: AddrClass) -> Result<(), EgressError> {
        Err(EgressError::ForbiddenAddress {
            addr: addr.parse().unwrap(),
            port,
            class,
        })
    }

    #[test]
    fn urls_are_refused_for_scheme_credentials_plain_http_and_non_public_literals() {
        let strict = EgressPolicy::default();
        let cases: Vec<(&str, Result<(), EgressError>)> = vec![
            ("https://example.com/x", Ok(())),
            ("https://93.184.216.34/", Ok(())),
            ("https://[2606:4700::1]/", Ok(())),
            (
                "ftp://example.com/",
                Err(EgressError::Scheme {
                    origin: "ftp://example.com".into(),
                    scheme: "ftp".into(),
                }),
            ),
            (
                "file:///etc/passwd",
                Err(EgressError::Scheme {
                    origin: "file:".into(),
                    scheme: "file".into(),
                }),
            ),
            (
                "http://example.com/",
                Err(EgressError::PlainHttp {
                    host: "example.com".into(),
                }),
            ),
            (
                "https://user:pw@example.com/",
                Err(EgressError::Userinfo {
                    origin: "https://example.com".into(),
                }),
            ),
            (
                "https://127.0.0.1:8443/",
                literal("127.0.0.1", Some(8443), AddrClass::Loopback),
            ),
            (
                "https://2130706433/",
                literal("127.0.0.1", None, AddrClass::Loopback),
            ),
            (
                "https://0x7f.1/",
                literal("127.0.0.1", None, AddrClass::Loopback),
            ),
            (
                "https://0177.0.0.1/",
                literal("127.0.0.1", None, AddrClass::Loopback),
            ),
            (
                "https://127.1/",
                literal("127.0.0.1", None, AddrClass::Loopback),
            ),
            (
                "https://0.0.0.0/",
                literal("0.0.0.0", None, AddrClass::Unspecified),
            ),
            ("https://[::1]/", literal("::1", None, AddrClass::Loopback)),
            (
                "https://[::ffff:127.0.0.1]/",
                literal("::ffff:127.0.0.1", None, AddrClass::Loopback),
            ),
            (
                "https://[::127.0.0.1]/",
                literal("::127.0.0.1", None, AddrClass::Loopback),
            ),
            (
                "https://169.254.169.254/latest/meta-data",
                literal("169.254.169.254", None, AddrClass::CloudMetadata),
            ),
            (
                "https://10.0.0.1/",
                literal("10.0.0.1", None, AddrClass::Private),
            ),
            (
                "https://100.64.0.1/",
                literal("100.64.0.1", None, AddrClass::SharedCgnat),
            ),
            (
                "https://[fd00::1]/",
                literal("fd00::1", None, AddrClass::UniqueLocal),
            ),
            (
                "https://[fe80::1]/",
                literal("fe80::1", None, AddrClass::LinkLocal),
            ),
            // Names pass here; the resolver judges their addresses.
            ("https://localhost/", Ok(())),
        ];
        let got: Vec<(&str, Result<(), EgressError>)> =
            cases.iter().map(|(u, _)| (*u, check(&strict, u))).collect();
        assert_eq!(got, cases);
    }

    #[test]
    fn allowlisted_literals_and_http_hosts_pass() {
        let dev = EgressPolicy::default()
            .allow_host("127.0.0.1:8080")
            .unwrap()
            .allow_host("10.0.0.0/8")
            .unwrap()
            .allow_plain_http("127.0.0.1:8080")
            .unwrap()
            .allow_plain_http("localhost")
            .unwrap();
        let got = [
            check(&dev, "http://127.0.0.1:8080/x"),
            check(&dev, "http://0x7f.1:8080/"),
            check(&dev, "https://10.1.2.3/"),
            check(&dev, "http://localhost:9/"),
            check(&dev, "https://127.0.0.1:8081/"),
            check(&dev, "http://127.0.0.1:8081/"),
        ];
        assert_eq!(
            got,
            [
                Ok(()),
                Ok(()),
                Ok(()),
                Ok(()),
                literal("127.0.0.1", Some(8081), AddrClass::Loopback),
                Err(EgressError::PlainHttp {
                    host: "127.0.0.1".into()
                }),
            ]
        );
    }

    #[test]
    fn a_name_is_refused_if_any_address_is_non_public() {
        let ips = |v: &[&str]| {
            v.iter()
                .map(|s| s.parse().unwrap())
                .collect::<Vec<IpAddr>>()
        };
        let strict = EgressPolicy::default();
        let dev = EgressPolicy::default()
            .allow_host("svc.test:8080")
            .unwrap()
            .allow_host("10.0.0.0/8")
            .unwrap();
        let got = [
            check_resolved(&strict, "ok.test", None, &ips(&["93.184.216.34"])),
            check_resolved(
                &strict,
                "evil.test",
                None,
                &ips(&["93.184.216.34", "10.0.0.1"]),
            ),
            check_resolved(&strict, "evil.test", None, &ips(&["::ffff:127.0.0.1"])),
            check_resolved(&dev, "svc.test", Some(8080), &ips(&["127.0.0.1"])),
            check_resolved(&dev, "svc.test", None, &ips(&["127.0.0.1"])),
            check_resolved(&dev, "ten.test", None, &ips(&["10.9.8.7"])),
        ];
        let refused = |host: &str, addr: &str, class| {
            Err(EgressError::ForbiddenResolution {
                host: host.into(),
                addr: addr.parse().unwrap(),
                class,
            })
        };
        assert_eq!(
            got,
            [
                Ok(()),
                refused("evil.test", "10.0.0.1", AddrClass::Private),
                refused("evil.test", "::ffff:127.0.0.1", AddrClass::Loopback),
                Ok(()),
                refused("svc.test", "127.0.0.1", AddrClass::Loopback),
                Ok(()),
            ]
        );
    }
}
