//! The guarded resolver: reqwest asks it for a name's addresses, it looks them up through a
//! [`Lookup`], refuses the name if any address is forbidden ([`check_resolved`]), and hands
//! back exactly the checked addresses — reqwest connects to those, with no second lookup,
//! so a DNS answer cannot change between the check and the connection.
//!
//! reqwest passes the resolver a bare name, not the port. The connection guard
//! (`connect.rs`) runs each connection inside the task-local `CONNECT_PORT`, so `host:port`
//! allowlist entries can be honoured here; outside it only port-less entries match.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use crate::check::check_resolved;
use crate::policy::EgressPolicy;

tokio::task_local! {
    /// The port of the connection being made, set by the connection guard.
    pub(crate) static CONNECT_PORT: Option<u16>;
}

/// What a [`Lookup`] returns.
pub type LookupFuture = Pin<Box<dyn Future<Output = io::Result<Vec<IpAddr>>> + Send>>;

/// Name → addresses. [`SystemLookup`] in production; [`StaticLookup`] in tests, so that
/// `evil.test` can resolve to whatever a test needs.
pub trait Lookup: Send + Sync + 'static {
    fn lookup(&self, host: &str) -> LookupFuture;
}

/// The operating system's resolver (`getaddrinfo`, via tokio).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemLookup;

impl Lookup for SystemLookup {
    fn lookup(&self, host: &str) -> LookupFuture {
        let host = host.to_owned();
        Box::pin(async move {
            let addrs = tokio::net::lookup_host((host.as_str(), 0)).await?;
            Ok(addrs.map(|a| a.ip()).collect())
        })
    }
}

/// A fixed table of names; any other name fails to resolve.
#[derive(Debug, Clone, Default)]
pub struct StaticLookup {
    names: HashMap<String, Vec<IpAddr>>,
}

impl StaticLookup {
    pub fn new() -> Self {
        StaticLookup::default()
    }

    /// `host` (case-insensitive) resolves to `addrs`.
    pub fn with(mut self, host: &str, addrs: &[IpAddr]) -> Self {
        self.names.insert(host.to_ascii_lowercase(), addrs.to_vec());
        self
    }
}

impl Lookup for StaticLookup {
    fn lookup(&self, host: &str) -> LookupFuture {
        let found = self.names.get(&host.to_ascii_lowercase()).cloned();
        let host = host.to_owned();
        Box::pin(async move {
            found.ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::NotFound,
                    format!("{host} is not in the static lookup table"),
                )
            })
        })
    }
}

/// A `reqwest::dns::Resolve` that only returns addresses the policy allows.
#[derive(Clone)]
pub struct GuardedResolver {
    policy: Arc<EgressPolicy>,
    lookup: Arc<dyn Lookup>,
}

impl GuardedResolver {
    pub fn new(policy: Arc<EgressPolicy>, lookup: Arc<dyn Lookup>) -> Self {
        GuardedResolver { policy, lookup }
    }
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let port = CONNECT_PORT.try_with(|p| *p).ok().flatten();
        let host = name.as_str().to_owned();
        let policy = Arc::clone(&self.policy);
        let lookup = Arc::clone(&self.lookup);
        Box::pin(async move {
            let addrs = lookup.lookup(&host).await?;
            if addrs.is_empty() {
                return Err(io::Error::new(
                    io::ErrorKind::NotFound,
                    format!("{host} resolved to no address"),
                )
                .into());
            }
            if let Err(refusal) = check_resolved(&policy, &host, port, &addrs) {
                tracing::warn!("egress: {refusal}");
                return Err(refusal.into());
            }
            let checked: Addrs = Box::new(addrs.into_iter().map(|ip| SocketAddr::new(ip, 0)));
            Ok(checked)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::addr::AddrClass;
    use crate::error::EgressError;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    async fn resolve(
        resolver: &GuardedResolver,
        name: &str,
    ) -> Result<Vec<SocketAddr>, Option<EgressError>> {
        match resolver.resolve(name.parse().unwrap()).await {
            Ok(addrs) => Ok(addrs.collect()),
            Err(e) => Err(e.downcast_ref::<EgressError>().cloned()),
        }
    }

    #[tokio::test]
    async fn forbidden_answers_are_refused_and_allowed_ones_returned_as_is() {
        let lookup = StaticLookup::new()
            .with("evil.test", &[ip("10.0.0.1")])
            .with("mixed.test", &[ip("93.184.216.34"), ip("127.0.0.1")])
            .with("public.test", &[ip("93.184.216.34"), ip("2606:4700::1")])
            .with("dev.test", &[ip("10.0.0.1")]);
        let policy = EgressPolicy::default().allow_host("dev.test").unwrap();
        let resolver = GuardedResolver::new(Arc::new(policy), Arc::new(lookup));
        let got = [
            resolve(&resolver, "evil.test").await,
            resolve(&resolver, "mixed.test").await,
            resolve(&resolver, "public.test").await,
            resolve(&resolver, "dev.test").await,
            resolve(&resolver, "unknown.test").await,
        ];
        let sock = |s: &str| SocketAddr::new(ip(s), 0);
        assert_eq!(
            got,
            [
                Err(Some(EgressError::ForbiddenResolution {
                    host: "evil.test".into(),
                    addr: ip("10.0.0.1"),
                    class: AddrClass::Private
                })),
                Err(Some(EgressError::ForbiddenResolution {
                    host: "mixed.test".into(),
                    addr: ip("127.0.0.1"),
                    class: AddrClass::Loopback
                })),
                Ok(vec![sock("93.184.216.34"), sock("2606:4700::1")]),
                Ok(vec![sock("10.0.0.1")]),
                Err(None),
            ]
        );
    }

    #[tokio::test]
    async fn port_entries_match_only_inside_a_guarded_connection() {
        let lookup = StaticLookup::new().with("svc.test", &[ip("127.0.0.1")]);
        let policy = EgressPolicy::default().allow_host("svc.test:8080").unwrap();
        let resolver = GuardedResolver::new(Arc::new(policy), Arc::new(lookup));
        let outside = resolve(&resolver, "svc.test").await.is_ok();
        let on_8080 = CONNECT_PORT
            .scope(Some(8080), resolve(&resolver, "svc.test"))
            .await
            .is_ok();
        let on_9 = CONNECT_PORT
            .scope(Some(9), resolve(&resolver, "svc.test"))
            .await
            .is_ok();
        assert_eq!([outside, on_8080, on_9], [false, true, false]);
    }
}
