//! What kind of address an IP is, and whether toolgate may connect to it unasked.
//!
//! Only [`AddrClass::Public`] is allowed by default; every other class needs an explicit
//! `[egress] allow_hosts` entry. IPv6 addresses that carry an IPv4 address (IPv4-mapped
//! `::ffff:a.b.c.d`, IPv4-compatible `::a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) are
//! judged by that IPv4 address, since that is where the packets end up. IPv6 outside the
//! global-unicast block `2000::/3` is never public.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The class of an address, from the IANA special-purpose registries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AddrClass {
    /// Globally routable: allowed.
    Public,
    /// `0.0.0.0`, `::` — connecting to it reaches this host.
    Unspecified,
    /// `0.0.0.0/8`.
    ThisNetwork,
    /// `127.0.0.0/8`, `::1`.
    Loopback,
    /// RFC 1918: `10/8`, `172.16/12`, `192.168/16`.
    Private,
    /// RFC 6598 shared address space `100.64.0.0/10` (carrier-grade NAT).
    SharedCgnat,
    /// `169.254.0.0/16`, `fe80::/10`.
    LinkLocal,
    /// `169.254.169.254`: the cloud instance-metadata service.
    CloudMetadata,
    /// `fc00::/7`.
    UniqueLocal,
    /// `224.0.0.0/4`, `ff00::/8`.
    Multicast,
    /// `255.255.255.255`.
    Broadcast,
    /// `192.0.2/24`, `198.51.100/24`, `203.0.113/24`, `2001:db8::/32`, `3fff::/20`.
    Documentation,
    /// `198.18.0.0/15`.
    Benchmarking,
    /// `192.0.0.0/24`, `2001::/23` (includes Teredo).
    ProtocolAssignments,
    /// Everything else that is not globally routable: `240/4`, `192.88.99/24`, `100::/64`,
    /// `fec0::/10`, `64:ff9b:1::/48`, IPv6 outside `2000::/3`, …
    Reserved,
}

impl AddrClass {
    /// Whether connecting to an address of this class needs an allowlist entry.
    pub fn is_forbidden(self) -> bool {
        self != AddrClass::Public
    }
}

impl fmt::Display for AddrClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AddrClass::Public => "public",
            AddrClass::Unspecified => "unspecified (reaches this host)",
            AddrClass::ThisNetwork => "\"this network\" (0.0.0.0/8)",
            AddrClass::Loopback => "loopback",
            AddrClass::Private => "private (RFC 1918)",
            AddrClass::SharedCgnat => "shared address space (CGNAT, 100.64.0.0/10)",
            AddrClass::LinkLocal => "link-local",
            AddrClass::CloudMetadata => "link-local (cloud metadata)",
            AddrClass::UniqueLocal => "unique-local (fc00::/7)",
            AddrClass::Multicast => "multicast",
            AddrClass::Broadcast => "broadcast",
            AddrClass::Documentation => "a documentation range",
            AddrClass::Benchmarking => "a benchmarking range (198.18.0.0/15)",
            AddrClass::ProtocolAssignments => "an IETF protocol-assignment range",
            AddrClass::Reserved => "reserved (not globally routable)",
        })
    }
}

/// The class of `ip`; embedded IPv4 addresses decide for the IPv6 forms that carry one.
pub fn classify(ip: IpAddr) -> AddrClass {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => match embedded_ipv4(v6) {
            Some(v4) => classify_v4(v4),
            None => classify_v6(v6),
        },
    }
}

/// Whether toolgate refuses to connect to `ip` unless it is allowlisted.
pub fn is_forbidden(ip: IpAddr) -> bool {
    classify(ip).is_forbidden()
}

/// The IPv4 address an IPv6 address carries, for the forms that route to it: IPv4-mapped
/// (`::ffff:0:0/96`), IPv4-compatible (`::/96` but `::` and `::1`), NAT64 (`64:ff9b::/96`)
/// and 6to4 (`2002::/16`, bits 16–48).
pub fn embedded_ipv4(v6: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = v6.segments();
    let join = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    let low = join(s[6], s[7]);
    match s {
        [0, 0, 0, 0, 0, 0xffff, _, _] => Some(low),
        [0, 0, 0, 0, 0, 0, 0, 0 | 1] => None,
        [0, 0, 0, 0, 0, 0, _, _] => Some(low),
        [0x64, 0xff9b, 0, 0, 0, 0, _, _] => Some(low),
        [0x2002, hi, lo, ..] => Some(join(hi, lo)),
        _ => None,
    }
}

fn classify_v4(ip: Ipv4Addr) -> AddrClass {
    let [a, b, c, _] = ip.octets();
    match (a, b, c) {
        _ if ip.is_unspecified() => AddrClass::Unspecified,
        _ if ip.is_broadcast() => AddrClass::Broadcast,
        _ if ip == Ipv4Addr::new(169, 254, 169, 254) => AddrClass::CloudMetadata,
        (0, _, _) => AddrClass::ThisNetwork,
        (10, _, _) | (172, 16..=31, _) | (192, 168, _) => AddrClass::Private,
        (100, 64..=127, _) => AddrClass::SharedCgnat,
        (127, _, _) => AddrClass::Loopback,
        (169, 254, _) => AddrClass::LinkLocal,
        (192, 0, 0) => AddrClass::ProtocolAssignments,
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => AddrClass::Documentation,
        (192, 88, 99) => AddrClass::Reserved,
        (198, 18..=19, _) => AddrClass::Benchmarking,
        (224..=239, _, _) => AddrClass::Multicast,
        (240..=255, _, _) => AddrClass::Reserved,
        _ => AddrClass::Public,
    }
}

fn classify_v6(ip: Ipv6Addr) -> AddrClass {
    let s = ip.segments();
    match s {
        [0, 0, 0, 0, 0, 0, 0, 0] => AddrClass::Unspecified,
        [0, 0, 0, 0, 0, 0, 0, 1] => AddrClass::Loopback,
        [0x2001, 0xdb8, ..] => AddrClass::Documentation,
        [0x2001, 0..=0x1ff, ..] => AddrClass::ProtocolAssignments,
        [0x3fff, 0..=0x0fff, ..] => AddrClass::Documentation,
        [0xfc00..=0xfdff, ..] => AddrClass::UniqueLocal,
        [0xfe80..=0xfebf, ..] => AddrClass::LinkLocal,
        [0xff00..=0xffff, ..] => AddrClass::Multicast,
        [0x5f00, ..] => AddrClass::Reserved,
        [0x2000..=0x3fff, ..] => AddrClass::Public,
        _ => AddrClass::Reserved,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_range_is_classified_as_listed() {
        use AddrClass::*;
        let table: &[(&str, AddrClass)] = &[
            // IPv4
            ("0.0.0.0", Unspecified),
            ("0.1.2.3", ThisNetwork),
            ("10.0.0.1", Private),
            ("10.255.255.255", Private),
            ("100.63.255.255", Public),
            ("100.64.0.1", SharedCgnat),
            ("100.100.100.200", SharedCgnat),
            ("100.127.255.255", SharedCgnat),
            ("100.128.0.0", Public),
            ("127.0.0.1", Loopback),
            ("127.255.0.9", Loopback),
            ("169.254.0.1", LinkLocal),
            ("169.254.169.254", CloudMetadata),
            ("172.15.255.255", Public),
            ("172.16.0.1", Private),
            ("172.31.255.255", Private),
            ("172.32.0.0", Public),
            ("192.0.0.8", ProtocolAssignments),
            ("192.0.2.1", Documentation),
            ("192.88.99.1", Reserved),
            ("192.168.1.1", Private),
            ("198.17.255.255", Public),
            ("198.18.0.1", Benchmarking),
            ("198.19.255.255", Benchmarking),
            ("198.51.100.7", Documentation),
            ("203.0.113.9", Documentation),
            ("224.0.0.1", Multicast),
            ("239.255.255.250", Multicast),
            ("240.0.0.1", Reserved),
            ("255.255.255.255", Broadcast),
            ("1.1.1.1", Public),
            ("93.184.216.34", Public),
            // IPv6
            ("::", Unspecified),
            ("::1", Loopback),
            ("::ffff:127.0.0.1", Loopback),
            ("::ffff:10.1.2.3", Private),
            ("::ffff:169.254.169.254", CloudMetadata),
            ("::ffff:1.1.1.1", Public),
            ("::127.0.0.1", Loopback),
            ("::10.0.0.1", Private),
            ("::0.0.0.2", ThisNetwork),
            ("64:ff9b::7f00:1", Loopback),
            ("64:ff9b::a9fe:a9fe", CloudMetadata),
            ("64:ff9b::101:101", Public),
            ("64:ff9b:1::1", Reserved),
            ("2002:7f00:1::", Loopback),
            ("2002:c0a8:101::1", Private),
            ("2002:101:101::1", Public),
            ("2001:db8::1", Documentation),
            ("2001::1", ProtocolAssignments),
            ("2001:1ff::1", ProtocolAssignments),
            ("3fff::1", Documentation),
            ("fc00::1", UniqueLocal),
            ("fd12:3456::1", UniqueLocal),
            ("fe80::1", LinkLocal),
            ("febf::1", LinkLocal),
            ("fec0::1", Reserved),
            ("ff02::1", Multicast),
            ("100::1", Reserved),
            ("5f00::1", Reserved),
            ("::1:0:0:1", Reserved),
            ("4000::1", Reserved),
            ("2606:4700:4700::1111", Public),
            ("2a00:1450:4001::1", Public),
        ];
        let got: Vec<(&str, AddrClass)> = table
            .iter()
            .map(|(ip, _)| (*ip, classify(ip.parse().unwrap())))
            .collect();
        assert_eq!(got, table);
    }

    #[test]
    fn only_public_is_allowed() {
        assert!(!is_forbidden("8.8.8.8".parse().unwrap()));
        assert!(is_forbidden("::ffff:127.0.0.1".parse().unwrap()));
        assert!(is_forbidden("0.0.0.0".parse().unwrap()));
    }

    #[test]
    fn embedded_ipv4_is_found_in_each_carrying_form() {
        let v4 = |s: &str| embedded_ipv4(s.parse().unwrap());
        let lo = Some(Ipv4Addr::LOCALHOST);
        assert_eq!(
            [
                v4("::ffff:127.0.0.1"),
                v4("::127.0.0.1"),
                v4("64:ff9b::127.0.0.1"),
                v4("2002:7f00:1::5"),
                v4("::1"),
                v4("::"),
                v4("2001:db8::7f00:1"),
            ],
            [lo, lo, lo, lo, None, None, None]
        );
    }
}
