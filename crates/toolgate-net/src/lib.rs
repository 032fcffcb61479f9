//! The one way toolgate sends HTTP: an SSRF-guarded `reqwest::Client` (R-MCP-4). The MCP
//! client, `url_read`, OAuth discovery and the server's webhook all build their clients here.
//!
//! By default only `https://` to public addresses is allowed. Loopback, private (RFC 1918),
//! link-local and cloud metadata, CGNAT, unique-local, multicast, documentation and reserved
//! addresses — also when spelled as IPv4-mapped, IPv4-compatible, NAT64 or 6to4 IPv6, or as
//! decimal/octal/hex IPv4 — are refused unless `[egress] allow_hosts` names them. Every
//! redirect hop and every connection is checked; names are resolved once and the checked
//! addresses are the ones connected to; proxy environment variables are ignored.
//!
//! # Layout
//! - [`addr`]: [`classify`] an IP into an [`AddrClass`]; [`is_forbidden`].
//! - [`pattern`]: [`HostPattern`], one allowlist entry (`host[:port]`, `*.domain`, IP, CIDR).
//! - [`policy`]: [`EgressPolicy`], the `[egress]` table.
//! - [`check`]: [`check_url`] and [`check_resolved`], the two decisions, as pure functions.
//! - [`resolve`]: [`GuardedResolver`] and the injectable [`Lookup`] ([`StaticLookup`] for tests).
//! - `connect`: the connection guard layer that also catches IP-literal hosts.
//! - [`client`](mod@client): [`client()`] — no proxy, checked redirects, guard, resolver.
//! - [`error`]: [`EgressError`] and [`egress_refusal`] to find it in a `reqwest::Error`.
//! - [`proxy`]: [`EgressProxy`], the HTTP CONNECT / plain-HTTP proxy that is the only way
//!   out of a sandbox's network namespace (per-grant allowlist, the same guard, audited).
//!
//! ```
//! use toolgate_net::{EgressError, EgressPolicy, check_url};
//! let policy = EgressPolicy::default();
//! let url = url::Url::parse("https://0x7f.1/").unwrap();
//! assert!(matches!(check_url(&policy, &url), Err(EgressError::ForbiddenAddress { .. })));
//! let dev = policy.allow_host("127.0.0.1").unwrap();
//! assert_eq!(check_url(&dev, &url), Ok(()));
//! let client = toolgate_net::client(&dev).unwrap(); // a plain reqwest::Client
//! # drop(client);
//! ```

// The one crate that makes HTTP clients (clippy.toml `disallowed-methods`).
#![allow(clippy::disallowed_methods)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

pub mod addr;
pub mod check;
pub mod client;
mod connect;
pub mod error;
pub mod pattern;
pub mod policy;
pub mod proxy;
pub mod resolve;

pub use addr::{AddrClass, classify, embedded_ipv4, is_forbidden};
pub use check::{check_resolved, check_url};
pub use client::{client, client_with_lookup};
pub use error::{EgressError, egress_refusal};
pub use pattern::HostPattern;
pub use policy::EgressPolicy;
pub use proxy::{EgressProxy, ProxyAudit, ProxyEvent, ProxyGrant, ProxyMethod};
pub use resolve::{GuardedResolver, Lookup, LookupFuture, StaticLookup, SystemLookup};
