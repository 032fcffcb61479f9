//! The egress oracle: is an address public, and does an allowlist entry cover it?
//!
//! Written from the IANA IPv4/IPv6 special-purpose address registries as a table of
//! prefixes, without `toolgate_net`, so `egress_check` compares the guard with a second
//! opinion. IPv6 forms that carry an IPv4 address (mapped `::ffff:0:0/96`, compatible
//! `::/96`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) are judged by that IPv4 address, as the
//! guard documents; everything outside `2000::/3` is not public.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// IPv4 blocks that are not globally reachable (or reach this host).
const V4_NOT_PUBLIC: &[(u32, u8)] = &[
    (0x0000_0000, 8),  // 0.0.0.0/8 this network (incl. 0.0.0.0)
    (0x0a00_0000, 8),  // 10/8
    (0x6440_0000, 10), // 100.64/10 CGNAT
    (0x7f00_0000, 8),  // 127/8
    (0xa9fe_0000, 16), // 169.254/16 link-local, cloud metadata
    (0xac10_0000, 12), // 172.16/12
    (0xc000_0000, 24), // 192.0.0/24 protocol assignments
    (0xc000_0200, 24), // 192.0.2/24 TEST-NET-1
    (0xc058_6300, 24), // 192.88.99/24 6to4 relay anycast (deprecated)
    (0xc0a8_0000, 16), // 192.168/16
    (0xc612_0000, 15), // 198.18/15 benchmarking
    (0xc633_6400, 24), // 198.51.100/24 TEST-NET-2
    (0xcb00_7100, 24), // 203.0.113/24 TEST-NET-3
    (0xe000_0000, 4),  // 224/4 multicast
    (0xf000_0000, 4),  // 240/4 reserved, incl. 255.255.255.255
];

/// IPv6 blocks inside 2000::/3 that are not globally reachable.
const V6_NOT_PUBLIC_IN_GLOBAL: &[(u128, u8)] = &[
    (0x2001_0000 << 96, 23), // 2001::/23 IETF protocol assignments (Teredo, ORCHID, …)
    (0x2001_0db8 << 96, 32), // 2001:db8::/32 documentation
    (0x3fff_0000 << 96, 20), // 3fff::/20 documentation
];

fn in_v4(ip: u32, (net, len): (u32, u8)) -> bool {
    let mask = if len == 0 { 0 } else { u32::MAX << (32 - len) };
    ip & mask == net & mask
}

fn in_v6(ip: u128, (net, len): (u128, u8)) -> bool {
    let mask = if len == 0 {
        0
    } else {
        u128::MAX << (128 - len)
    };
    ip & mask == net & mask
}

/// The IPv4 address an IPv6 address routes to, for the forms that carry one.
pub fn carried_v4(v6: Ipv6Addr) -> Option<Ipv4Addr> {
    let x = u128::from(v6);
    let low = Ipv4Addr::from(x as u32);
    if in_v6(x, (0xffff << 32, 96)) {
        return Some(low);
    }
    if in_v6(x, (0, 96)) {
        // `::` and `::1` are the unspecified and loopback addresses themselves.
        return (x > 1).then_some(low);
    }
    if in_v6(x, (0x0064_ff9b << 96, 96)) {
        return Some(low);
    }
    if in_v6(x, (0x2002 << 112, 16)) {
        return Some(Ipv4Addr::from((x >> 80) as u32));
    }
    None
}

/// Whether `ip` is globally reachable, i.e. may be connected to without an allowlist entry.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let x = u32::from(v4);
            !V4_NOT_PUBLIC.iter().any(|&b| in_v4(x, b))
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = carried_v4(v6) {
                return is_public(IpAddr::V4(v4));
            }
            let x = u128::from(v6);
            in_v6(x, (0x2000 << 112, 3)) && !V6_NOT_PUBLIC_IN_GLOBAL.iter().any(|&b| in_v6(x, b))
        }
    }
}

/// An allowlist entry as the oracle understands it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Allowed {
    /// A host name (lowercase, no trailing dot), optionally on one port.
    Name { name: String, port: Option<u16> },
    /// `*.suffix`.
    Subdomains(String),
    /// One address, optionally on one port.
    Ip { ip: IpAddr, port: Option<u16> },
    /// A block.
    Block { net: IpAddr, len: u8 },
}

/// The address as an IPv4 one when it is IPv4-mapped.
fn unmapped(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => ip,
        },
        v4 => v4,
    }
}

impl Allowed {
    /// Whether this entry covers a connection to `ip` on `port` (`None`: unknown port).
    pub fn covers_addr(&self, ip: IpAddr, port: Option<u16>) -> bool {
        let ip = unmapped(ip);
        match self {
            Allowed::Ip { ip: mine, port: p } => {
                unmapped(*mine) == ip && (p.is_none() || *p == port)
            }
            Allowed::Block { net, len } => match (unmapped(*net), ip) {
                (IpAddr::V4(n), IpAddr::V4(a)) => in_v4(u32::from(a), (u32::from(n), *len)),
                (IpAddr::V6(n), IpAddr::V6(a)) => in_v6(u128::from(a), (u128::from(n), *len)),
                _ => false,
            },
            Allowed::Name { .. } | Allowed::Subdomains(_) => false,
        }
    }

    /// Whether this entry names `host` (a URL host name, as the `url` crate spells it).
    pub fn covers_name(&self, host: &str, port: Option<u16>) -> bool {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        match self {
            Allowed::Name { name, port: p } => *name == host && (p.is_none() || *p == port),
            Allowed::Subdomains(suffix) => {
                host.len() > suffix.len() + 1
                    && host.ends_with(suffix.as_str())
                    && host[..host.len() - suffix.len()].ends_with('.')
            }
            Allowed::Ip { .. } | Allowed::Block { .. } => false,
        }
    }
}

/// The oracle's reading of an allowlist entry, from the standard library's and the `url`
/// crate's parsers only; `None` for text it does not understand (such entries are then
/// given no power by the oracle, so anything they let through is reported).
pub fn parse_entry(text: &str) -> Option<Allowed> {
    let text = text.trim();
    if let Some((net, len)) = text.split_once('/') {
        let net = block_address(net)?;
        let len: u8 = len.parse().ok()?;
        return Some(Allowed::Block { net, len });
    }
    if let Some(suffix) = text.strip_prefix("*.") {
        return match url::Host::parse(suffix).ok()? {
            url::Host::Domain(d) => Some(Allowed::Subdomains(d.trim_end_matches('.').to_owned())),
            _ => None,
        };
    }
    if let Ok(ip) = text.parse::<IpAddr>() {
        return Some(Allowed::Ip { ip, port: None });
    }
    if let Ok(sa) = text.parse::<std::net::SocketAddr>() {
        return Some(Allowed::Ip {
            ip: sa.ip(),
            port: Some(sa.port()),
        });
    }
    let (host, port) = match text.rsplit_once(':') {
        Some((h, p)) if !h.starts_with('[') || h.ends_with(']') => (h, Some(p.parse().ok()?)),
        _ => (text, None),
    };
    match url::Host::parse(host).ok()? {
        url::Host::Domain(d) => Some(Allowed::Name {
            name: d.trim_end_matches('.').to_owned(),
            port,
        }),
        url::Host::Ipv4(v4) => Some(Allowed::Ip {
            ip: IpAddr::V4(v4),
            port,
        }),
        url::Host::Ipv6(v6) => Some(Allowed::Ip {
            ip: IpAddr::V6(v6),
            port,
        }),
    }
}

/// The address of a CIDR entry. The standard parser, and for dotted quads also the reading
/// CIDR parsers (`ipnet`) give octets with leading zeros: decimal (`010` is 10). The URL
/// parser reads such octets as octal instead (`https://010.0.0.1/` is 8.0.0.1): an entry and
/// a URL spelt alike can name different addresses, but each is judged as it was read.
fn block_address(text: &str) -> Option<IpAddr> {
    if let Ok(ip) = text.parse() {
        return Some(ip);
    }
    let (head, quad) = match text.rfind(':') {
        Some(at) => text.split_at(at + 1),
        None => ("", text),
    };
    let octets: Vec<u8> = quad
        .split('.')
        .map(|o| {
            if o.is_empty() || o.len() > 3 {
                None
            } else {
                o.parse().ok()
            }
        })
        .collect::<Option<_>>()?;
    let [a, b, c, d] = octets[..] else {
        return None;
    };
    format!("{head}{a}.{b}.{c}.{d}").parse().ok()
}

/// Checks the table against addresses whose class is not in doubt; the fuzz target calls it
/// once, so a broken oracle fails loudly instead of passing everything.
pub fn self_check() {
    let public = [
        "8.8.8.8",
        "1.1.1.1",
        "2606:4700::1",
        "::ffff:8.8.8.8",
        "2002:808:808::1",
    ];
    let private = [
        "127.0.0.1",
        "10.1.2.3",
        "169.254.169.254",
        "::1",
        "::",
        "fe80::1",
        "fd00::1",
        "::ffff:127.0.0.1",
        "::127.0.0.1",
        "64:ff9b::a00:1",
        "2002:7f00:1::",
        "2001:db8::1",
        "ff02::1",
        "255.255.255.255",
        "100.64.0.1",
        "192.0.0.8",
        "0.1.2.3",
    ];
    for (list, want) in [(&public[..], true), (&private[..], false)] {
        for text in list {
            let ip: IpAddr = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(is_public(ip), want, "oracle self-check: {text}");
        }
    }
}
