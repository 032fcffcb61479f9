//! `[server]` in toolgate.toml: where to listen, who may call, which hosts and origins to
//! accept, where to announce new approvals.

use serde::{Deserialize, Serialize};

/// A bearer token, stored as the SHA-256 (hex) of the token: the config never holds a secret.
/// Make one with `toolgate serve token` (prints a token and its hash).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenConfig {
    pub sha256: String,
    pub principal: String,
    pub role: String,
    /// May decide approvals and read the audit.
    #[serde(default)]
    pub operator: bool,
}

/// What a caller without a token may do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnonymousConfig {
    pub role: String,
    #[serde(default = "anonymous_principal")]
    pub principal: String,
    /// May decide approvals and read the audit.
    #[serde(default)]
    pub operator: bool,
}

fn anonymous_principal() -> String {
    "anonymous".to_owned()
}

/// New approval requests are POSTed here as JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebhookConfig {
    pub url: String,
}

/// OAuth protected-resource metadata (RFC 9728) served at
/// `/.well-known/oauth-protected-resource`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OAuthConfig {
    pub authorization_servers: Vec<String>,
    pub scopes_supported: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServerConfig {
    /// `ADDR:PORT`; loopback by default.
    pub listen: String,
    /// The URL clients use to reach this server (for metadata documents) when it differs
    /// from `http://<listen>`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub public_url: Option<String>,
    /// Host header values accepted besides loopback names and the listen address.
    pub allowed_hosts: Vec<String>,
    /// Origin header values accepted besides the server's own origins.
    pub allowed_origins: Vec<String>,
    pub tokens: Vec<TokenConfig>,
    /// Unauthenticated callers. Absent: on loopback they act in role `readonly`; beyond
    /// loopback they are refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub anonymous: Option<AnonymousConfig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub webhook: Option<WebhookConfig>,
    pub oauth: OAuthConfig,
    /// How long graceful shutdown waits for in-flight calls.
    pub shutdown_grace_secs: u64,
}

pub const DEFAULT_LISTEN: &str = "127.0.0.1:8765";

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            listen: DEFAULT_LISTEN.to_owned(),
            public_url: None,
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            tokens: Vec::new(),
            anonymous: None,
            webhook: None,
            oauth: OAuthConfig::default(),
            shutdown_grace_secs: 30,
        }
    }
}
