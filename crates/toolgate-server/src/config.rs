//! `[server]` in toolgate.toml: where to listen, who may call, which hosts and origins to
//! accept, where to announce new approvals.

use serde::{Deserialize, Serialize};
/// Re-exported so the binary can read `[egress]` without depending on toolgate-net itself.
pub use toolgate_net::EgressPolicy;
use toolgate_protocol::{Principal, Role};

/// A bearer token, stored as the SHA-256 (hex) of the token: the config never holds a secret.
/// Make one with `toolgate token create` (prints a token and this entry).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenConfig {
    pub sha256: String,
    pub principal: Principal,
    pub role: Role,
    /// May decide approvals and read the audit.
    #[serde(default)]
    pub operator: bool,
}

/// What a caller without a token may do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnonymousConfig {
    pub role: Role,
    #[serde(default = "anonymous_principal")]
    pub principal: Principal,
    /// May decide approvals and read the audit.
    #[serde(default)]
    pub operator: bool,
}

fn anonymous_principal() -> Principal {
    "anonymous".into()
}

/// New approval requests are POSTed here as JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebhookConfig {
    pub url: String,
}

/// `[server.oauth]`: this server as an OAuth 2.1 resource server (MCP authorization). The
/// protected-resource metadata (RFC 9728) at `/.well-known/oauth-protected-resource` lists
/// `authorization_servers` and `scopes_supported`; once `authorization_servers` is not
/// empty, a bearer token that is none of toolgate's own is validated as a JWT access token
/// of one of them: signature against the issuer's JWKS (discovered from its metadata,
/// fetched under `[egress]`), `iss`, `aud` = this server's resource URL, `exp`/`nbf`, the
/// required scopes. Its claims name the principal, the role and whether it is an operator.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OAuthConfig {
    /// Issuer identifiers of the authorization servers whose tokens are accepted.
    pub authorization_servers: Vec<String>,
    pub scopes_supported: Vec<String>,
    /// Scopes every access token must carry (403 `insufficient_scope` otherwise).
    pub required_scopes: Vec<String>,
    /// The audience tokens must name: this server's canonical resource URL (RFC 8707).
    /// Default: `<public_url>/mcp`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// The JWKS to verify with, instead of the one the issuer's metadata names (one issuer).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jwks_uri: Option<String>,
    /// Signature algorithms accepted: `RS256`, `ES256`, `EdDSA` (and `PS256`, `RS384`,
    /// `RS512`, `ES384`). Never `none` or an HMAC algorithm.
    pub algorithms: Vec<String>,
    /// Clock skew allowed on `exp` and `nbf`.
    pub leeway_secs: u64,
    /// How old the issuer's keys may get before they are fetched again: a key the issuer
    /// stopped publishing ends the tokens it signed within this (and at least the 10 s
    /// between two fetches), remembered tokens included.
    pub jwks_refresh_secs: u64,
    /// The claim naming the principal (`sub`, `email`, …); the principal is
    /// `<issuer>#<claim value>`.
    pub principal_claim: String,
    /// The claim whose values (a string or a list) map to a role and to operator.
    pub role_claim: String,
    /// Claim value → role; the first value of the claim (in token order) that maps decides.
    pub roles: std::collections::BTreeMap<String, String>,
    /// The role when no claim value maps; absent: such tokens are refused (403).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_role: Option<String>,
    /// Claim values (of `role_claim`) that make the caller an operator.
    pub operator_values: Vec<String>,
}

impl Default for OAuthConfig {
    fn default() -> Self {
        OAuthConfig {
            authorization_servers: Vec::new(),
            scopes_supported: Vec::new(),
            required_scopes: Vec::new(),
            resource: None,
            jwks_uri: None,
            algorithms: vec!["RS256".into(), "ES256".into(), "EdDSA".into()],
            leeway_secs: 30,
            jwks_refresh_secs: 300,
            principal_claim: "sub".into(),
            role_claim: "groups".into(),
            roles: std::collections::BTreeMap::new(),
            default_role: None,
            operator_values: Vec::new(),
        }
    }
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
    /// How long a client has to send a request's whole header (from the connection's first
    /// byte, or the end of the previous answer) before the connection is closed: slow
    /// clients (slowloris) cannot hold connections open.
    pub header_read_timeout_ms: u64,
    /// How long a client has to send a request's whole body, from the end of its header:
    /// a slower body fails (400) and its connection is closed, so trickled bodies cannot
    /// hold connections.
    pub body_read_timeout_ms: u64,
    /// The most connections served at once; a connection accepted beyond it is closed at
    /// once.
    pub max_connections: usize,
    /// The most connections one peer address holds at once; more from it are closed at once.
    pub max_connections_per_ip: usize,
    /// The outbound-HTTP rules the webhook obeys: the top-level `[egress]` table, copied in
    /// by whoever reads the file (not a `[server]` key).
    #[serde(skip)]
    pub egress: EgressPolicy,
}

pub const DEFAULT_LISTEN: &str = "127.0.0.1:8765";
/// `header_read_timeout_ms` when not configured: 10 s.
pub const DEFAULT_HEADER_READ_TIMEOUT_MS: u64 = 10_000;
/// `body_read_timeout_ms` when not configured: 30 s.
pub const DEFAULT_BODY_READ_TIMEOUT_MS: u64 = 30_000;
/// `max_connections` when not configured.
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;
/// `max_connections_per_ip` when not configured: a quarter of the default cap.
pub const DEFAULT_MAX_CONNECTIONS_PER_IP: usize = 256;

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
            header_read_timeout_ms: DEFAULT_HEADER_READ_TIMEOUT_MS,
            body_read_timeout_ms: DEFAULT_BODY_READ_TIMEOUT_MS,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_connections_per_ip: DEFAULT_MAX_CONNECTIONS_PER_IP,
            egress: EgressPolicy::default(),
        }
    }
}

/// A `[server]` section that cannot work.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ServerConfigError {
    #[error(
        "[[server.tokens]] entry for `{principal}`: sha256 must be 64 hex characters (the SHA-256 of the token, as `toolgate token create` prints it)"
    )]
    TokenHash { principal: String },
    #[error("[[server.tokens]]: two entries have the same sha256 (principals `{0}` and `{1}`)")]
    DuplicateToken(String, String),
    #[error("[[server.tokens]] entry with sha256 {0}…: principal and role must not be empty")]
    TokenIdentity(String),
    #[error(transparent)]
    Webhook(#[from] crate::api::webhook::WebhookError),
    #[error("[server] public_url `{0}` must start with http:// or https://")]
    PublicUrl(String),
    #[error("[server.oauth] {0}")]
    OAuth(#[from] crate::auth::jwt::OAuthConfigError),
}

impl ServerConfig {
    /// Checks what serde cannot: token hashes, the webhook URL (also against `egress`), the
    /// public URL.
    pub fn check(&self) -> Result<(), ServerConfigError> {
        let mut seen: Vec<(&str, &str)> = Vec::new();
        for t in &self.tokens {
            if t.sha256.len() != 64 || !t.sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(ServerConfigError::TokenHash {
                    principal: t.principal.to_string(),
                });
            }
            if t.principal.trim().is_empty() || t.role.trim().is_empty() {
                return Err(ServerConfigError::TokenIdentity(t.sha256[..8].to_owned()));
            }
            if let Some((_, other)) = seen.iter().find(|(h, _)| h.eq_ignore_ascii_case(&t.sha256)) {
                return Err(ServerConfigError::DuplicateToken(
                    (*other).to_owned(),
                    t.principal.to_string(),
                ));
            }
            seen.push((&t.sha256, &t.principal));
        }
        if let Some(w) = &self.webhook {
            crate::api::webhook::checked_url(&w.url, &self.egress)?;
        }
        if let Some(u) = &self.public_url
            && !(u.starts_with("http://") || u.starts_with("https://"))
        {
            return Err(ServerConfigError::PublicUrl(u.clone()));
        }
        crate::auth::jwt::check_config(&self.oauth, &self.egress)?;
        Ok(())
    }

    /// The roles the configuration hands out (tokens and the anonymous grant), to check
    /// against the configured roles.
    pub fn granted_roles(&self) -> impl Iterator<Item = &str> {
        self.tokens
            .iter()
            .map(|t| t.role.as_str())
            .chain(self.anonymous.iter().map(|a| a.role.as_str()))
            .chain(self.oauth.roles.values().map(String::as_str))
            .chain(self.oauth.default_role.iter().map(String::as_str))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(hash: &str, principal: &str) -> TokenConfig {
        TokenConfig {
            sha256: hash.to_owned(),
            principal: principal.into(),
            role: "default".into(),
            operator: false,
        }
    }

    #[test]
    fn check_refuses_what_cannot_work() {
        let good = "a".repeat(64);
        let mut cfg = ServerConfig {
            tokens: vec![token(&good, "alice")],
            ..ServerConfig::default()
        };
        assert_eq!(cfg.check(), Ok(()));

        cfg.tokens = vec![token("abc", "alice")];
        assert_eq!(
            cfg.check(),
            Err(ServerConfigError::TokenHash {
                principal: "alice".into()
            })
        );

        cfg.tokens = vec![token(&good, "alice"), token(&good.to_uppercase(), "bob")];
        assert_eq!(
            cfg.check(),
            Err(ServerConfigError::DuplicateToken(
                "alice".into(),
                "bob".into()
            ))
        );

        cfg.tokens = vec![token(&good, " ")];
        assert_eq!(
            cfg.check(),
            Err(ServerConfigError::TokenIdentity("aaaaaaaa".into()))
        );

        cfg.tokens.clear();
        cfg.webhook = Some(WebhookConfig {
            url: "file:///etc/passwd".into(),
        });
        assert_eq!(
            cfg.check().map_err(|e| e.to_string()),
            Err(
                "[server.webhook] url `file:///etc/passwd` must use http or https, not `file`"
                    .into()
            )
        );
        cfg.webhook = Some(WebhookConfig {
            url: "https://hooks.example/x".into(),
        });
        assert_eq!(cfg.check(), Ok(()));

        cfg.public_url = Some("toolgate.example".into());
        assert_eq!(
            cfg.check(),
            Err(ServerConfigError::PublicUrl("toolgate.example".into()))
        );
    }

    #[test]
    fn the_webhook_url_obeys_egress() {
        let mut cfg = ServerConfig {
            webhook: Some(WebhookConfig {
                url: "https://169.254.169.254/latest".into(),
            }),
            ..ServerConfig::default()
        };
        assert_eq!(
            cfg.check().map_err(|e| e.to_string()),
            Err("[server.webhook] url refused: 169.254.169.254 is link-local (cloud metadata); to allow it add \"169.254.169.254\" to [egress] allow_hosts".into())
        );
        cfg.webhook = Some(WebhookConfig {
            url: "http://hooks.example/x".into(),
        });
        assert_eq!(
            cfg.check().map_err(|e| e.to_string()),
            Err("[server.webhook] url refused: plain http to hooks.example; use https, or to allow it add \"hooks.example\" to [egress] allow_http".into())
        );
        cfg.egress = EgressPolicy::default()
            .allow_plain_http("hooks.example")
            .unwrap();
        assert_eq!(cfg.check(), Ok(()));
    }

    #[test]
    fn the_documented_example_is_a_working_server_section() {
        #[derive(Deserialize)]
        struct File {
            server: ServerConfig,
        }
        let file: File =
            toml::from_str(include_str!("../../../docs/toolgate.example.toml")).unwrap();
        assert_eq!(file.server.check(), Ok(()));
        assert_eq!(file.server.listen, DEFAULT_LISTEN);
        assert_eq!(
            file.server.granted_roles().collect::<Vec<_>>(),
            ["agent", "readonly"]
        );
    }
}
