//! [`EgressPolicy`]: the `[egress]` table — which non-public destinations and which plain-http
//! hosts are allowed, how many redirects are followed, and the timeouts.
//!
//! The default is strict: https only, public addresses only. Local development is enabled
//! only by explicit entries (`allow_hosts = ["localhost"]`, `allow_http = ["localhost"]`).

use std::net::IpAddr;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use url::Host;

use crate::error::EgressError;
use crate::pattern::HostPattern;

/// Outbound-HTTP rules shared by every client toolgate builds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EgressPolicy {
    /// Destinations that may be non-public (loopback, private, link-local, …). Entries:
    /// `host`, `host:port`, `*.domain`, an IP, `IP:port`, a CIDR block.
    pub allow_hosts: Vec<HostPattern>,
    /// Hosts that may be reached over plain `http://` (everything else: https only). Same
    /// entry forms; this does not by itself allow a non-public address.
    pub allow_http: Vec<HostPattern>,
    /// Redirect hops followed per request (each re-checked); one more is refused. 0: no
    /// redirect is followed and the 3xx answer is returned as it is.
    pub max_redirects: usize,
    /// Deadline for establishing a connection (0: none).
    pub connect_timeout_secs: u64,
    /// Deadline for a whole request, body included (0: none).
    pub request_timeout_secs: u64,
}

impl Default for EgressPolicy {
    fn default() -> Self {
        EgressPolicy {
            allow_hosts: Vec::new(),
            allow_http: Vec::new(),
            max_redirects: 5,
            connect_timeout_secs: 10,
            request_timeout_secs: 30,
        }
    }
}

impl EgressPolicy {
    /// Adds an `allow_hosts` entry (see [`HostPattern`] for the forms).
    pub fn allow_host(mut self, entry: &str) -> Result<Self, EgressError> {
        self.allow_hosts.push(entry.parse()?);
        Ok(self)
    }

    /// Adds an `allow_http` entry.
    pub fn allow_plain_http(mut self, entry: &str) -> Result<Self, EgressError> {
        self.allow_http.push(entry.parse()?);
        Ok(self)
    }

    /// Whether an `allow_hosts` entry names this URL host (`port`: its effective port).
    pub fn allows_host(&self, host: &Host<&str>, port: Option<u16>) -> bool {
        self.allow_hosts.iter().any(|p| p.matches_host(host, port))
    }

    /// Whether an `allow_hosts` address or CIDR entry covers this resolved address.
    pub fn allows_addr(&self, ip: IpAddr, port: Option<u16>) -> bool {
        self.allow_hosts.iter().any(|p| p.matches_addr(ip, port))
    }

    /// Whether plain http is allowed to this URL host.
    pub fn allows_http(&self, host: &Host<&str>, port: Option<u16>) -> bool {
        self.allow_http.iter().any(|p| p.matches_host(host, port))
    }

    pub fn connect_timeout(&self) -> Option<Duration> {
        (self.connect_timeout_secs > 0).then(|| Duration::from_secs(self.connect_timeout_secs))
    }

    pub fn request_timeout(&self) -> Option<Duration> {
        (self.request_timeout_secs > 0).then(|| Duration::from_secs(self.request_timeout_secs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_is_strict() {
        let p = EgressPolicy::default();
        assert_eq!(
            (p.allow_hosts.len(), p.allow_http.len(), p.max_redirects),
            (0, 0, 5)
        );
        assert!(!p.allows_host(&Host::Domain("localhost"), Some(80)));
    }

    #[test]
    fn the_toml_table_parses_and_rejects_bad_entries() {
        let p: EgressPolicy = toml::from_str(
            "allow_hosts = [\"localhost\", \"10.0.0.0/8\", \"*.corp.example\"]\n\
             allow_http = [\"127.0.0.1:8080\"]\nmax_redirects = 2\n",
        )
        .unwrap();
        let want = EgressPolicy {
            max_redirects: 2,
            ..EgressPolicy::default()
        }
        .allow_host("localhost")
        .unwrap()
        .allow_host("10.0.0.0/8")
        .unwrap()
        .allow_host("*.corp.example")
        .unwrap()
        .allow_plain_http("127.0.0.1:8080")
        .unwrap();
        assert_eq!(p, want);
        assert_eq!(
            toml::from_str::<EgressPolicy>(&toml::to_string(&p).unwrap()).unwrap(),
            p
        );

        let err = toml::from_str::<EgressPolicy>("allow_hosts = [\"10.0.0.0/40\"]\n").unwrap_err();
        assert!(
            err.to_string()
                .contains("[egress] entry `10.0.0.0/40` is not a host name"),
            "{err}"
        );
        let err = toml::from_str::<EgressPolicy>("allow_host = []\n").unwrap_err();
        assert!(
            err.to_string().contains("unknown field `allow_host`"),
            "{err}"
        );
    }
}
