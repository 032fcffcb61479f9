//! The connection guard: a tower layer reqwest puts around its connector
//! (`ClientBuilder::connector_layer`), so it sees the destination of EVERY connection — the
//! first request, each redirect hop, names and IP literals alike — before a socket is opened.
//!
//! Why it exists: reqwest (hyper-util's `HttpConnector`) never calls the resolver for an
//! IP-literal host, so a resolver-only guard lets `http://127.0.0.1/` through. Here each
//! destination goes through [`check_url`]; a refused one never reaches the inner connector,
//! so nothing — not even a TCP handshake — leaves. Allowed connections run inside
//! [`CONNECT_PORT`] so the resolver knows the port.
//!
//! reqwest hands layers its destination in a sealed type whose only window is `Debug`
//! (`Unnameable(http://host:port/)`); the URL is read from that. If a reqwest upgrade changes
//! that text, every connection is refused ([`EgressError::UnknownDestination`]) — the guard
//! fails closed, and the tests fail loudly.

use std::fmt::Debug;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tower::{Layer, Service};
use url::Url;

use crate::check::check_url;
use crate::error::EgressError;
use crate::policy::EgressPolicy;
use crate::resolve::CONNECT_PORT;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Wraps reqwest's connector in a [`ConnectGuard`].
#[derive(Clone)]
pub(crate) struct ConnectGuardLayer {
    policy: Arc<EgressPolicy>,
}

impl ConnectGuardLayer {
    pub(crate) fn new(policy: Arc<EgressPolicy>) -> Self {
        ConnectGuardLayer { policy }
    }
}

impl<S> Layer<S> for ConnectGuardLayer {
    type Service = ConnectGuard<S>;
    fn layer(&self, inner: S) -> ConnectGuard<S> {
        ConnectGuard {
            inner,
            policy: Arc::clone(&self.policy),
        }
    }
}

/// Checks each connection's destination, then connects through `inner`.
#[derive(Clone)]
pub(crate) struct ConnectGuard<S> {
    inner: S,
    policy: Arc<EgressPolicy>,
}

impl<S, R> Service<R> for ConnectGuard<S>
where
    S: Service<R, Error = BoxError>,
    S::Future: Send + 'static,
    S::Response: Send + 'static,
    R: Debug,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, destination: R) -> Self::Future {
        let checked = destination_url(&destination)
            .and_then(|url| check_url(&self.policy, &url).map(|()| url));
        match checked {
            Ok(url) => {
                let connecting = self.inner.call(destination);
                Box::pin(CONNECT_PORT.scope(url.port_or_known_default(), connecting))
            }
            Err(refusal) => {
                tracing::warn!("egress: {refusal}");
                Box::pin(std::future::ready(Err(refusal.into())))
            }
        }
    }
}

/// The URL inside reqwest's `Unnameable(<uri>)` (or a bare URI's) debug text.
fn destination_url(destination: &impl Debug) -> Result<Url, EgressError> {
    let text = format!("{destination:?}");
    let inner = text
        .split_once('(')
        .and_then(|(_, rest)| rest.strip_suffix(')'))
        .unwrap_or(&text);
    Url::parse(inner).map_err(|_| EgressError::UnknownDestination(text.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Prints like reqwest's `Unnameable(Uri)`.
    struct Wrapped(&'static str);

    impl Debug for Wrapped {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "Unnameable({})", self.0)
        }
    }

    /// Prints a quoted string inside: not a URL.
    #[derive(Debug)]
    #[expect(dead_code, reason = "read only through Debug")]
    struct Unnameable(&'static str);

    #[test]
    fn destinations_are_read_from_the_debug_text_or_refused() {
        let url = |s: &str| Url::parse(s).unwrap();
        assert_eq!(
            [
                destination_url(&Wrapped("http://127.0.0.1:8080/")),
                destination_url(&Wrapped("https://[::1]:443/")),
                destination_url(&"https://example.com/"),
                destination_url(&Unnameable("http://x/")),
            ],
            [
                Ok(url("http://127.0.0.1:8080/")),
                Ok(url("https://[::1]/")),
                Err(EgressError::UnknownDestination(
                    "\"https://example.com/\"".into()
                )),
                Err(EgressError::UnknownDestination(
                    "Unnameable(\"http://x/\")".into()
                )),
            ]
        );
    }
}
