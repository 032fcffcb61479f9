//! [`AllowedOrigin`]: one `[browser] allow_origins` entry, parsed when the config is read.
//!
//! An entry is an origin, `scheme://host[:port]` (`http://127.0.0.1:8080`,
//! `https://docs.example`), or `scheme://*.domain` for every subdomain of `domain` on the
//! scheme's default port. Paths, queries and credentials are rejected: the allowlist is
//! about where the browser connects, not which pages it reads.

use std::fmt;
use std::str::FromStr;

use url::Url;

use crate::error::ConfigError;

/// One allowed origin. Parse with [`str::parse`]; serialises back to its canonical text.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct AllowedOrigin {
    scheme: String,
    host: HostMatch,
    port: u16,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum HostMatch {
    /// Exactly this (normalised) host; IPv6 in brackets, as `Url::host_str` gives it.
    Exact(String),
    /// Names ending in this suffix (stored with its leading dot).
    Subdomains(String),
}

impl AllowedOrigin {
    /// Whether `url` is on this origin (scheme, host and effective port all equal).
    pub fn matches(&self, url: &Url) -> bool {
        let Some(host) = url.host_str() else {
            return false;
        };
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        let host_ok = match &self.host {
            HostMatch::Exact(h) => *h == host,
            HostMatch::Subdomains(suffix) => host
                .strip_suffix(suffix.as_str())
                .is_some_and(|head| !head.is_empty()),
        };
        url.scheme() == self.scheme && host_ok && url.port_or_known_default() == Some(self.port)
    }
}

impl FromStr for AllowedOrigin {
    type Err = ConfigError;

    fn from_str(entry: &str) -> Result<Self, Self::Err> {
        let bad = |reason: &str| ConfigError::InvalidOrigin {
            entry: entry.to_owned(),
            reason: reason.to_owned(),
        };
        let (wildcard, parse_text) = match entry.split_once("://*.") {
            Some((scheme, rest)) => (true, format!("{scheme}://{rest}")),
            None => (false, entry.to_owned()),
        };
        let url = Url::parse(&parse_text).map_err(|e| bad(&e.to_string()))?;
        if url.scheme() != "http" && url.scheme() != "https" {
            return Err(bad("the scheme must be http or https"));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(bad("an origin carries no credentials"));
        }
        if url.path() != "/" || url.query().is_some() || url.fragment().is_some() {
            return Err(bad(
                "an origin has no path, query or fragment (write scheme://host[:port])",
            ));
        }
        let Some(host) = url.host_str() else {
            return Err(bad("it has no host"));
        };
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        let Some(port) = url.port_or_known_default() else {
            return Err(bad("it has no port"));
        };
        let host = if wildcard {
            if url.port().is_some() {
                return Err(bad("a *.domain entry takes the scheme's default port only"));
            }
            HostMatch::Subdomains(format!(".{host}"))
        } else {
            HostMatch::Exact(host)
        };
        Ok(AllowedOrigin {
            scheme: url.scheme().to_owned(),
            host,
            port,
        })
    }
}

impl TryFrom<String> for AllowedOrigin {
    type Error = ConfigError;

    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl From<AllowedOrigin> for String {
    fn from(o: AllowedOrigin) -> String {
        o.to_string()
    }
}

impl fmt::Display for AllowedOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let default = if self.scheme == "https" { 443 } else { 80 };
        match &self.host {
            HostMatch::Exact(h) => write!(f, "{}://{h}", self.scheme)?,
            HostMatch::Subdomains(s) => write!(f, "{}://*{s}", self.scheme)?,
        }
        if self.port != default {
            write!(f, ":{}", self.port)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn o(s: &str) -> AllowedOrigin {
        s.parse().unwrap()
    }

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn entries_round_trip_to_their_canonical_text() {
        let entries = [
            ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
            ("https://Docs.Example/", "https://docs.example"),
            ("https://docs.example:443", "https://docs.example"),
            ("http://[::1]:9000", "http://[::1]:9000"),
            ("https://*.corp.example", "https://*.corp.example"),
        ];
        let got: Vec<String> = entries.iter().map(|(e, _)| o(e).to_string()).collect();
        let want: Vec<String> = entries.iter().map(|(_, w)| (*w).to_owned()).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn bad_entries_say_why() {
        let err = |s: &str| s.parse::<AllowedOrigin>().unwrap_err().to_string();
        assert_eq!(
            [
                err("ftp://example.com"),
                err("https://example.com/docs"),
                err("https://u:p@example.com"),
                err("https://*.corp.example:8443"),
                err("example.com"),
            ],
            [
                "[browser] allow_origins entry `ftp://example.com` is not an origin (scheme://host[:port]): the scheme must be http or https",
                "[browser] allow_origins entry `https://example.com/docs` is not an origin (scheme://host[:port]): an origin has no path, query or fragment (write scheme://host[:port])",
                "[browser] allow_origins entry `https://u:p@example.com` is not an origin (scheme://host[:port]): an origin carries no credentials",
                "[browser] allow_origins entry `https://*.corp.example:8443` is not an origin (scheme://host[:port]): a *.domain entry takes the scheme's default port only",
                "[browser] allow_origins entry `example.com` is not an origin (scheme://host[:port]): relative URL without a base",
            ]
        );
    }

    #[test]
    fn matching_compares_scheme_host_and_effective_port() {
        let cases = [
            (
                o("http://127.0.0.1:8080"),
                "http://127.0.0.1:8080/form?x=1",
                true,
            ),
            (o("http://127.0.0.1:8080"), "http://127.0.0.1:8081/", false),
            (o("http://127.0.0.1:8080"), "https://127.0.0.1:8080/", false),
            (o("https://docs.example"), "https://DOCS.example./a", true),
            (
                o("https://docs.example"),
                "https://docs.example:8443/",
                false,
            ),
            (
                o("https://*.corp.example"),
                "https://a.b.corp.example/",
                true,
            ),
            (o("https://*.corp.example"), "https://corp.example/", false),
            (
                o("https://*.corp.example"),
                "https://evilcorp.example/",
                false,
            ),
            (o("http://[::1]:9000"), "http://[::1]:9000/", true),
        ];
        let got: Vec<bool> = cases.iter().map(|(p, u, _)| p.matches(&url(u))).collect();
        let want: Vec<bool> = cases.iter().map(|c| c.2).collect();
        assert_eq!(got, want);
    }
}
