//! [`client()`]: the only way toolgate builds an outbound HTTP client. The returned plain
//! `reqwest::Client` carries every check inside it, so it is safe to hand to code we did not
//! write (rmcp's Streamable HTTP transport takes a `reqwest::Client`).
//!
//! What is inside, in the order a request meets it:
//! 1. no proxy — `HTTP_PROXY`/`ALL_PROXY` would send the request (and the name) to a proxy
//!    that resolves and connects unchecked;
//! 2. the redirect policy — every hop is re-checked with [`check_url`] and at most
//!    `max_redirects` hops are followed (one more is an error; with `max_redirects = 0` the
//!    3xx answer itself is returned); no `Referer` is sent;
//! 3. the connection guard (`connect.rs`) — every connection's destination, literal
//!    IPs included, is checked before a socket is opened;
//! 4. the guarded resolver ([`crate::resolve`]) — names are resolved once, all addresses
//!    checked, and only those are connected to.

use std::sync::Arc;

use reqwest::redirect;

use crate::check::check_url;
use crate::connect::ConnectGuardLayer;
use crate::error::{EgressError, origin};
use crate::policy::EgressPolicy;
use crate::resolve::{GuardedResolver, Lookup, SystemLookup};

/// A client that only reaches what `policy` allows, resolving names with the system resolver.
pub fn client(policy: &EgressPolicy) -> Result<reqwest::Client, EgressError> {
    client_with_lookup(policy, Arc::new(SystemLookup))
}

/// [`client()`] with another name lookup (tests: [`crate::StaticLookup`]).
pub fn client_with_lookup(
    policy: &EgressPolicy,
    lookup: Arc<dyn Lookup>,
) -> Result<reqwest::Client, EgressError> {
    let policy = Arc::new(policy.clone());
    let mut builder = reqwest::Client::builder()
        .no_proxy()
        .referer(false)
        .redirect(redirect_policy(Arc::clone(&policy)))
        .dns_resolver(GuardedResolver::new(Arc::clone(&policy), lookup))
        .connector_layer(ConnectGuardLayer::new(Arc::clone(&policy)));
    if let Some(t) = policy.connect_timeout() {
        builder = builder.connect_timeout(t);
    }
    if let Some(t) = policy.request_timeout() {
        builder = builder.timeout(t);
    }
    builder
        .build()
        .map_err(|e| EgressError::Client(e.to_string()))
}

fn redirect_policy(policy: Arc<EgressPolicy>) -> redirect::Policy {
    redirect::Policy::custom(move |attempt| {
        if policy.max_redirects == 0 {
            return attempt.stop();
        }
        let verdict = if attempt.previous().len() > policy.max_redirects {
            Err(EgressError::TooManyRedirects {
                max: policy.max_redirects,
                next: origin(attempt.url()),
            })
        } else {
            check_url(&policy, attempt.url())
        };
        match verdict {
            Ok(()) => attempt.follow(),
            Err(refusal) => {
                tracing::warn!("egress: {refusal}");
                attempt.error(refusal)
            }
        }
    })
}
