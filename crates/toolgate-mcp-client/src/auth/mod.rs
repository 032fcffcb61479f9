//! OAuth 2.1 for Streamable HTTP MCP servers (R-MCP-3), on rmcp's `auth` module.
//!
//! rmcp does the protocol work: protected-resource metadata (RFC 9728, from the
//! `WWW-Authenticate` challenge or the well-known URL), authorization-server metadata
//! (RFC 8414, then OpenID Connect) with `issuer` validation, client ID metadata documents,
//! dynamic registration (RFC 7591), PKCE S256, `resource` (RFC 8707) on the authorization
//! and token requests, refresh, and the client-credentials grant. This module adds what a
//! gateway needs around it:
//!
//! - [`config`]: [`AuthConfig`], the `auth` key of a server entry (secrets only by
//!   environment-variable name).
//! - [`http`]: [`GuardedOAuthHttp`] — every OAuth request goes through `toolgate-net`'s SSRF
//!   guard, never rmcp's own reqwest client.
//! - [`tokens`]: [`StoredTokens`] — rmcp's credential store over the toolgate store's
//!   `mcp_credentials` table, per server and resource; never logged, never in `Debug`.
//! - [`login`](mod@login): [`login()`] — the loopback-redirect login behind
//!   `toolgate mcp login NAME`.
//! - [`client`]: [`authorized_client`] — the HTTP client the Streamable HTTP transport uses
//!   for a server with `auth`.
//!
//! rmcp logs the authorization code (not the tokens) at `debug` level on its own target
//! `rmcp::transport::auth`; the code is single-use and bound to the PKCE verifier.

pub mod client;
pub mod config;
pub mod http;
pub mod login;
pub mod tokens;

pub use client::authorized_client;
pub use config::AuthConfig;
pub use http::GuardedOAuthHttp;
pub use login::{AuthContext, DEFAULT_LOGIN_TIMEOUT, LoginOptions, LoginOutcome, login};
pub use tokens::StoredTokens;

/// Reads an environment variable by name (see [`AuthContext::with_env`]).
pub type EnvLookup = std::sync::Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// Why authentication to a server failed; every message says what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    #[error("auth configuration: {0}")]
    Config(String),
    #[error("MCP server `{server}` needs a login: run `toolgate mcp login {server}`")]
    LoginRequired { server: String },
    #[error("the [egress] policy refused an OAuth request: {0}")]
    Egress(String),
    #[error("OAuth discovery failed: {0}")]
    Discovery(String),
    #[error("OAuth login redirect: {0}")]
    Callback(String),
    #[error(
        "login refused: the redirect's `state` does not match the one sent (a stale tab or a forged redirect); start the login again"
    )]
    StateMismatch,
    #[error("the authorization server refused the login: {0}")]
    Denied(String),
    #[error("OAuth: {0}")]
    OAuth(String),
}

/// rmcp's error as ours, with its sources (they carry the refusal of the SSRF guard).
pub(crate) fn rmcp_error(e: rmcp::transport::auth::AuthError) -> AuthError {
    use rmcp::transport::auth::AuthError as R;
    let text = crate::connect::error_chain(&e);
    match e {
        R::AuthorizationRequired | R::TokenRefreshRejected(_) => AuthError::OAuth(format!(
            "{text}; run `toolgate mcp login` for this server again"
        )),
        _ if text.contains("egress") || text.contains("[egress]") => AuthError::Egress(text),
        R::DiscoveryRequestFailed { .. }
        | R::MetadataError(_)
        | R::ProtectedResourceMetadataInvalid { .. }
        | R::AuthorizationServersUnavailable { .. }
        | R::NoAuthorizationSupport => AuthError::Discovery(text),
        _ => AuthError::OAuth(text),
    }
}
