//! A strict parser for the authority of a `Host` header or an `Origin` (RFC 3986 §3.2, cut
//! down to what a browser or an HTTP client sends): `host [":" port]`, where host is
//!
//! - a reg-name: dot-separated labels of ASCII letters, digits, `-` and `_`, each 1–63
//!   characters, not starting or ending with `-`, 253 characters at most, no trailing dot,
//!   and a last label that is not all digits (`127.1` and `2130706433` are numbers, not names);
//! - a dotted-quad IPv4 address in canonical form (no leading zeros, no octal, no hex);
//! - an IPv6 address in brackets, without a zone id;
//!
//! and port is 1–5 ASCII digits with a value of at most 65535. Nothing else: no userinfo,
//! path, query, fragment, percent-encoding, whitespace or second colon. The host is
//! lowercased, so comparisons are plain equality.

use std::net::{Ipv4Addr, Ipv6Addr};

/// A parsed `host[:port]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Authority {
    /// Lowercased; IPv6 keeps its brackets (`[::1]`), in the canonical text of the address.
    pub host: String,
    pub port: Option<u16>,
}

impl Authority {
    /// `None` unless `s` is exactly an authority of the form above.
    pub fn parse(s: &str) -> Option<Authority> {
        if s.is_empty() || s.len() > 300 || !s.bytes().all(|b| b.is_ascii_graphic()) {
            return None;
        }
        let (host, rest) = if let Some(inner) = s.strip_prefix('[') {
            let (addr, rest) = inner.split_once(']')?;
            // Only hex digits, colons and dots: no zone id (`%25eth0`), no IPvFuture.
            if !addr
                .bytes()
                .all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.')
            {
                return None;
            }
            let ip: Ipv6Addr = addr.parse().ok()?;
            (format!("[{ip}]"), rest)
        } else {
            let (host, rest) = match s.find(':') {
                Some(i) => (&s[..i], &s[i..]),
                None => (s, ""),
            };
            (parse_host(host)?, rest)
        };
        let port = match rest {
            "" => None,
            _ => Some(parse_port(rest.strip_prefix(':')?)?),
        };
        Some(Authority { host, port })
    }

    /// The authority as `host` or `host:port`.
    pub fn text(&self) -> String {
        match self.port {
            Some(p) => format!("{}:{p}", self.host),
            None => self.host.clone(),
        }
    }
}

fn parse_port(p: &str) -> Option<u16> {
    if p.is_empty() || p.len() > 5 || !p.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    p.parse::<u16>().ok()
}

/// A reg-name or a canonical IPv4 address, lowercased.
fn parse_host(host: &str) -> Option<String> {
    if host.is_empty() || host.len() > 253 {
        return None;
    }
    let labels: Vec<&str> = host.split('.').collect();
    let numeric = |l: &str| !l.is_empty() && l.bytes().all(|b| b.is_ascii_digit());
    if labels.last().is_some_and(|l| numeric(l)) {
        // Dotted quad only, each part as `Ipv4Addr` prints it (no `010`, no `0x7f`).
        let ip: Ipv4Addr = host.parse().ok()?;
        return (ip.to_string() == host).then(|| host.to_owned());
    }
    let label_ok = |l: &str| {
        (1..=63).contains(&l.len())
            && l.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    labels
        .iter()
        .all(|l| label_ok(l))
        .then(|| host.to_ascii_lowercase())
}

/// An `Origin` header: `scheme "://" authority`, nothing after. Returns the lowercased scheme
/// and the authority.
pub fn parse_origin(origin: &str) -> Option<(String, Authority)> {
    let (scheme, authority) = origin.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return None;
    }
    Some((scheme, Authority::parse(authority)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(s: &str) -> Option<(String, Option<u16>)> {
        Authority::parse(s).map(|a| (a.host, a.port))
    }

    #[test]
    fn accepts_names_addresses_and_ports() {
        let ok = |h: &str, p: Option<u16>| Some((h.to_owned(), p));
        assert_eq!(parsed("localhost"), ok("localhost", None));
        assert_eq!(parsed("LocalHost:8765"), ok("localhost", Some(8765)));
        assert_eq!(parsed("127.0.0.1:1"), ok("127.0.0.1", Some(1)));
        assert_eq!(parsed("[::1]:65535"), ok("[::1]", Some(65535)));
        assert_eq!(parsed("[0:0::1]"), ok("[::1]", None));
        assert_eq!(parsed("my_host.internal"), ok("my_host.internal", None));
        assert_eq!(parsed("a-b.example:080"), ok("a-b.example", Some(80)));
    }

    #[test]
    fn refuses_everything_else() {
        for bad in [
            "",
            "localhost:",
            "localhost:evil",
            "localhost:65536",
            "localhost:123456",
            "localhost:+1",
            "localhost:1:2",
            "127.0.0.1:1@evil.com",
            "user@localhost",
            "localhost.",
            "localhost..x",
            ".localhost",
            "-a.example",
            "a-.example",
            "local host",
            "localhost%2e",
            "127.1",
            "2130706433",
            "0x7f.0.0.1",
            "127.000.0.1",
            "256.0.0.1",
            "1.2.3.4.5",
            "[::1",
            "[::1]x",
            "[::1%25lo]",
            "[fe80::1%eth0]",
            "[v1.x]",
            "::1",
            "[127.0.0.1]",
            "a/b",
            "a?b",
            "a#b",
            "a\\b",
            "é.example",
        ] {
            assert_eq!(parsed(bad), None, "{bad:?}");
        }
        assert_eq!(parsed(&"a".repeat(64)), None);
    }

    #[test]
    fn origins_are_a_scheme_and_an_authority_only() {
        assert_eq!(
            parse_origin("HTTP://LOCALHOST:80").map(|(s, a)| (s, a.text())),
            Some(("http".to_owned(), "localhost:80".to_owned()))
        );
        for bad in [
            "null",
            "localhost:80",
            "http://localhost/",
            "http://localhost:80/x",
            "ws://localhost",
            "http:/localhost",
            "http:///localhost",
            "http://",
        ] {
            assert_eq!(parse_origin(bad), None, "{bad}");
        }
    }
}
