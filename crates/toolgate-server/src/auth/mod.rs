//! Who is calling, and from where (R-SRV-2).
//!
//! - [`check_host_and_origin`]: the Host header, parsed strictly as `host[:port]`
//!   (`authority`), must name this server (loopback names, the listen address,
//!   `allowed_hosts`) and a browser's Origin must be one of our own origins or
//!   `allowed_origins` — a page on another site that rebinds its DNS to 127.0.0.1 is refused
//!   before anything else runs.
//! - [`authenticate`]: `Authorization: Bearer <token>` is hashed (SHA-256) and compared in
//!   constant time with the configured hashes, then looked up among the tokens issued through
//!   the store ([`TokenBook`]: revocable and rotatable on a running server); each maps to a
//!   principal, a role and whether the caller is an operator (may decide approvals and read
//!   the audit). Without a token, the `[server.anonymous]` grant applies; absent that, a
//!   server on loopback **with no token configured or ever issued** (local development) lets
//!   callers act as `anonymous` in role `readonly`, as operators; once any token exists, or
//!   beyond loopback, they are refused (401).

pub(crate) mod authority;
mod book;
mod caller;
mod host;
pub mod jwt;
mod token;

pub use book::{Lookup, RELOAD_EVERY, TokenBook};
pub use caller::{Caller, Operator, not_operator};
pub use host::check_host_and_origin;
pub use token::{authenticate, hash_token};
