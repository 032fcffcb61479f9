//! The SSRF guard's two decisions (`toolgate_net::check_url` before a request,
//! `toolgate_net::check_resolved` on a name's addresses) on fuzzer-built URLs, DNS answers
//! and allowlists.
//!
//! Input, as text lines: the URL; the addresses its host name resolves to (space-separated);
//! then `[egress]` entries, one a line (`allow_hosts`, or `allow_http` when prefixed with
//! `http `). Property: whatever is admitted goes only to a public address or to one an entry
//! covers — judged by an oracle written from the IANA registries ([`crate::addr`]),
//! not by `toolgate_net`. Plain http goes only where an `allow_http` entry names the host,
//! and URLs with credentials or other schemes are never admitted.

use std::net::IpAddr;

use crate::addr::{Allowed, is_public, parse_entry};
use toolgate_net::{EgressPolicy, check_resolved, check_url, classify};
use url::{Host, Url};

static ORACLE_CHECKED: std::sync::LazyLock<()> = std::sync::LazyLock::new(crate::addr::self_check);

/// One input: see the module doc for the properties checked.
pub fn run(data: &[u8]) {
    *ORACLE_CHECKED;
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut lines = text.split('\n');
    let Some(url) = lines.next().and_then(|u| Url::parse(u).ok()) else {
        return;
    };
    let addrs: Vec<IpAddr> = lines
        .next()
        .unwrap_or("")
        .split(' ')
        .filter_map(|a| a.parse().ok())
        .collect();

    for &ip in &addrs {
        assert!(
            classify(ip).is_forbidden() || is_public(ip),
            "classify calls {ip} public"
        );
    }

    let mut policy = EgressPolicy::default();
    let mut hosts: Vec<Allowed> = Vec::new();
    let mut http: Vec<Allowed> = Vec::new();
    for line in lines.take(8) {
        let (entry, plain) = match line.strip_prefix("http ") {
            Some(e) => (e, true),
            None => (line, false),
        };
        let added = if plain {
            policy.clone().allow_plain_http(entry)
        } else {
            policy.clone().allow_host(entry)
        };
        let Ok(added) = added else {
            continue;
        };
        policy = added;
        // An entry the oracle cannot read gets no power: what it admits is reported.
        if let Some(a) = parse_entry(entry) {
            if plain { http.push(a) } else { hosts.push(a) }
        }
    }

    let port = url.port_or_known_default();
    if check_url(&policy, &url).is_ok() {
        assert!(
            matches!(url.scheme(), "http" | "https"),
            "scheme {} admitted",
            url.scheme()
        );
        assert!(
            url.username().is_empty() && url.password().is_none(),
            "credentials admitted in {url}"
        );
        let host = url
            .host()
            .unwrap_or_else(|| panic!("{url} admitted without a host"));
        if url.scheme() == "http" {
            let named = match &host {
                Host::Domain(d) => http.iter().any(|a| a.covers_name(d, port)),
                Host::Ipv4(v4) => http.iter().any(|a| a.covers_addr(IpAddr::V4(*v4), port)),
                Host::Ipv6(v6) => http.iter().any(|a| a.covers_addr(IpAddr::V6(*v6), port)),
            };
            assert!(
                named,
                "plain http admitted to {url} without an allow_http entry"
            );
        }
        let literal = match host {
            Host::Domain(_) => None,
            Host::Ipv4(v4) => Some(IpAddr::V4(v4)),
            Host::Ipv6(v6) => Some(IpAddr::V6(v6)),
        };
        if let Some(ip) = literal {
            assert!(
                is_public(ip) || hosts.iter().any(|a| a.covers_addr(ip, port)),
                "{url} admitted: {ip} is not public and no entry covers it ({hosts:?})"
            );
        }
    }

    // The resolver's decision for a host name (the guard runs it on every connection, with
    // the port when known, and without when reqwest resolves on its own).
    if let Some(Host::Domain(name)) = url.host() {
        for port in [port, None] {
            if check_resolved(&policy, name, port, &addrs).is_err() {
                continue;
            }
            if hosts.iter().any(|a| a.covers_name(name, port)) {
                continue;
            }
            for &ip in &addrs {
                assert!(
                    is_public(ip) || hosts.iter().any(|a| a.covers_addr(ip, port)),
                    "{name} (port {port:?}) admitted resolving to {ip}, not public and not \
                     covered by {hosts:?}"
                );
            }
        }
    }
}
