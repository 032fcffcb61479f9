//! [`JwtAuthority`]: OAuth 2.1 access tokens (MCP authorization) from the authorization
//! servers of `[server.oauth]`, validated as JWTs:
//!
//! 1. the header's `alg` must be one configured (RS256, ES256, EdDSA by default) — `none`
//!    and HMAC algorithms never are, so a token "signed" with the issuer's public key as an
//!    HMAC secret is refused before any key is touched;
//! 2. `iss` (read unverified only to pick the key set) must be a configured issuer, and the
//!    key is that issuer's, by `kid` ([`keys`]: fetched under `[egress]`, re-fetched once on
//!    an unknown `kid`, rate limited); the key's family and pinned `alg` must match;
//! 3. the signature, then `iss`, `aud` = this server's resource URL (RFC 8707: a token for
//!    another resource is refused), `exp` and `nbf` with the configured leeway;
//! 4. the required scopes (`scope`, or `scp`), else 403 `insufficient_scope`;
//! 5. the claims name the principal, the role and whether the caller is an operator. The
//!    principal is qualified by its issuer, `<issuer>#<claim>` ([`qualified_principal`]):
//!    `sub: alice` of one issuer is neither `alice` of another nor toolgate's own token
//!    `alice` (own principals may not contain `://`), so no approval, grant, session or
//!    limit of one is another's.
//!
//! A validated token is remembered (by its SHA-256) until it expires, so a client that sends
//! the same token on every request pays for the signature once — but only while its key is
//! still published: each use looks the key up again ([`keys`] re-fetches keys older than
//! `jwks_refresh_secs`), so a key the issuer withdrew ends its tokens within that interval.
//!
//! A JWKS that cannot be fetched answers 503 without saying where it was looked for (the
//! URL and the error go to the log): an unauthenticated caller learns nothing of the
//! internal network.

pub mod keys;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, Validation, decode, decode_header};
use serde_json::{Map, Value};
use toolgate_gateway::Identity;
use toolgate_net::EgressPolicy;
use url::Url;

use self::keys::{IssuerKeys, KeyError};
use super::Caller;
use crate::config::OAuthConfig;

/// The most validated tokens remembered at once.
const CACHE_CAP: usize = 10_000;

/// Why a token was refused; each maps to a 401 or 403 with its `WWW-Authenticate`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JwtRefusal {
    /// 401 `invalid_token`.
    Invalid(String),
    /// 403 `insufficient_scope`: the scopes to ask for.
    InsufficientScope { missing: Vec<String> },
    /// 403: valid, but the configuration gives its holder no role.
    NoRole(String),
    /// 503: the issuer's keys cannot be fetched.
    Unavailable(String),
}

struct Verified {
    caller: Caller,
    exp: u64,
    /// The issuer and key id that verified it, looked up again on each use.
    iss: String,
    kid: Option<String>,
}

pub struct JwtAuthority {
    issuers: HashMap<String, IssuerKeys>,
    resource: String,
    algorithms: Vec<Algorithm>,
    leeway: u64,
    config: OAuthConfig,
    verified: Mutex<HashMap<[u8; 32], Arc<Verified>>>,
}

impl std::fmt::Debug for JwtAuthority {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtAuthority")
            .field("resource", &self.resource)
            .finish_non_exhaustive()
    }
}

/// An algorithm name of the configuration, if it is one we verify.
fn algorithm(name: &str) -> Option<Algorithm> {
    match name {
        "RS256" => Some(Algorithm::RS256),
        "RS384" => Some(Algorithm::RS384),
        "RS512" => Some(Algorithm::RS512),
        "PS256" => Some(Algorithm::PS256),
        "ES256" => Some(Algorithm::ES256),
        "ES384" => Some(Algorithm::ES384),
        "EdDSA" => Some(Algorithm::EdDSA),
        _ => None,
    }
}

/// Checks `[server.oauth]` without building anything: algorithms, issuer and JWKS URLs
/// (also against `[egress]`).
pub fn check_config(cfg: &OAuthConfig, egress: &EgressPolicy) -> Result<(), OAuthConfigError> {
    for a in &cfg.algorithms {
        if algorithm(a).is_none() {
            return Err(OAuthConfigError::Algorithm(a.clone()));
        }
    }
    for issuer in &cfg.authorization_servers {
        let url = Url::parse(issuer)
            .map_err(|e| OAuthConfigError::Issuer(issuer.clone(), e.to_string()))?;
        // What keeps `<issuer>#<claim>` apart from own principals and from other issuers'.
        if !matches!(url.scheme(), "http" | "https") || issuer.contains('#') {
            return Err(OAuthConfigError::Issuer(
                issuer.clone(),
                "an issuer is an http(s) URL without a fragment".into(),
            ));
        }
        toolgate_net::check_url(egress, &url).map_err(|e| {
            OAuthConfigError::Egress(format!("authorization server `{issuer}`"), e.to_string())
        })?;
    }
    if let Some(j) = &cfg.jwks_uri {
        if cfg.authorization_servers.len() != 1 {
            return Err(OAuthConfigError::JwksWithoutOneIssuer);
        }
        let url = Url::parse(j).map_err(|e| OAuthConfigError::JwksUri(j.clone(), e.to_string()))?;
        toolgate_net::check_url(egress, &url)
            .map_err(|e| OAuthConfigError::Egress("jwks_uri".into(), e.to_string()))?;
    }
    if !cfg.authorization_servers.is_empty() && cfg.principal_claim.trim().is_empty() {
        return Err(OAuthConfigError::EmptyPrincipalClaim);
    }
    Ok(())
}

/// What is wrong with `[server.oauth]` ([`check_config`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OAuthConfigError {
    #[error(
        "algorithms: `{0}` is not accepted (RS256, RS384, RS512, PS256, ES256, ES384, EdDSA; \
         never none or HMAC)"
    )]
    Algorithm(String),
    #[error("authorization server `{0}`: {1}")]
    Issuer(String, String),
    #[error("jwks_uri `{0}`: {1}")]
    JwksUri(String, String),
    #[error("jwks_uri needs exactly one authorization server")]
    JwksWithoutOneIssuer,
    #[error("{0} refused: {1}")]
    Egress(String, String),
    #[error("principal_claim must not be empty")]
    EmptyPrincipalClaim,
}

/// The principal of an access token from `issuer` whose principal claim is `name`:
/// `<issuer>#<name>`. Issuers are URLs without a fragment, so the first `#` ends the issuer
/// and two (issuer, name) pairs never share a spelling.
pub fn qualified_principal(issuer: &str, name: &str) -> String {
    format!("{issuer}#{name}")
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// A claim's values: a string, or the strings of a list.
fn values(v: Option<&Value>) -> Vec<&str> {
    match v {
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

impl JwtAuthority {
    /// The authority of `cfg`, or `None` when no authorization server is configured.
    /// `resource` is this server's canonical resource URL (the audience tokens must name).
    pub fn new(
        cfg: &OAuthConfig,
        resource: String,
        egress: &EgressPolicy,
    ) -> Result<Option<Self>, String> {
        if cfg.authorization_servers.is_empty() {
            return Ok(None);
        }
        check_config(cfg, egress).map_err(|e| e.to_string())?;
        let client = toolgate_net::client(egress).map_err(|e| e.to_string())?;
        let jwks = cfg
            .jwks_uri
            .as_deref()
            .map(Url::parse)
            .transpose()
            .map_err(|e| e.to_string())?;
        let issuers = cfg
            .authorization_servers
            .iter()
            .map(|i| {
                (
                    i.clone(),
                    IssuerKeys::new(
                        i.clone(),
                        jwks.clone(),
                        client.clone(),
                        std::time::Duration::from_secs(cfg.jwks_refresh_secs),
                    ),
                )
            })
            .collect();
        Ok(Some(JwtAuthority {
            issuers,
            resource,
            algorithms: cfg.algorithms.iter().filter_map(|a| algorithm(a)).collect(),
            leeway: cfg.leeway_secs,
            config: cfg.clone(),
            verified: Mutex::new(HashMap::new()),
        }))
    }

    /// The audience tokens must name.
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// Validates `token` (see the module docs) and returns who it stands for.
    pub async fn authenticate(&self, token: &str) -> Result<Caller, JwtRefusal> {
        let digest: [u8; 32] = {
            use sha2::{Digest, Sha256};
            Sha256::digest(token.as_bytes()).into()
        };
        let remembered = self
            .verified
            .lock()
            .ok()
            .and_then(|m| m.get(&digest).cloned());
        if let Some(v) = remembered {
            let forget = || {
                if let Ok(mut m) = self.verified.lock() {
                    m.remove(&digest);
                }
            };
            if now_secs() > v.exp.saturating_add(self.leeway) {
                forget();
                return Err(JwtRefusal::Invalid("the token has expired".into()));
            }
            match self.key_of(&v.iss, v.kid.as_deref()).await {
                Ok(_) => return Ok(v.caller.clone()),
                Err(refusal) => {
                    forget();
                    return Err(refusal);
                }
            }
        }
        let (caller, exp, iss, kid) = self.verify(token).await?;
        if let Ok(mut m) = self.verified.lock() {
            if m.len() >= CACHE_CAP {
                m.clear();
            }
            m.insert(
                digest,
                Arc::new(Verified {
                    caller: caller.clone(),
                    exp,
                    iss,
                    kid,
                }),
            );
        }
        Ok(caller)
    }

    /// The key `kid` of `iss` as the issuer publishes it now.
    async fn key_of(&self, iss: &str, kid: Option<&str>) -> Result<Arc<keys::Key>, JwtRefusal> {
        let issuer = self.issuers.get(iss).ok_or_else(|| {
            JwtRefusal::Invalid(format!("the token's issuer `{iss}` is not trusted here"))
        })?;
        issuer.key(kid).await.map_err(|e| match e {
            KeyError::Unknown(m) => JwtRefusal::Invalid(m),
            // The why (with the JWKS URL) was logged where it happened.
            KeyError::Unreachable(_) => JwtRefusal::Unavailable(
                "the authorization server's signing keys cannot be fetched now".into(),
            ),
        })
    }

    /// The caller, the token's `exp`, and the issuer and key id that verified it.
    async fn verify(
        &self,
        token: &str,
    ) -> Result<(Caller, u64, String, Option<String>), JwtRefusal> {
        let invalid = |m: String| JwtRefusal::Invalid(m);
        let header = decode_header(token).map_err(|e| invalid(format!("not a usable JWT: {e}")))?;
        if !self.algorithms.contains(&header.alg) {
            return Err(invalid(format!(
                "the token's algorithm {:?} is not accepted",
                header.alg
            )));
        }
        let unverified: Map<String, Value> = jsonwebtoken::dangerous::insecure_decode_claims(token)
            .map_err(|e| invalid(format!("not a usable JWT: {e}")))?;
        let iss = unverified
            .get("iss")
            .and_then(Value::as_str)
            .ok_or_else(|| invalid("the token has no `iss`".into()))?;
        let key = self.key_of(iss, header.kid.as_deref()).await?;
        if key.alg.is_some_and(|a| a != header.alg) {
            return Err(invalid(format!(
                "the key is for {:?}, the token says {:?}",
                key.alg, header.alg
            )));
        }
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[iss]);
        validation.set_audience(&[&self.resource]);
        validation.leeway = self.leeway;
        validation.validate_nbf = true;
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        let data =
            decode::<Map<String, Value>>(token, &key.decoding, &validation).map_err(|e| {
                use jsonwebtoken::errors::ErrorKind as K;
                invalid(match e.kind() {
                    K::ExpiredSignature => "the token has expired".into(),
                    K::ImmatureSignature => "the token is not valid yet (nbf)".into(),
                    K::InvalidAudience => format!(
                        "the token is for another resource (aud must be {})",
                        self.resource
                    ),
                    K::InvalidIssuer => "the token's issuer does not match".into(),
                    K::InvalidSignature => "the token's signature does not verify".into(),
                    K::InvalidAlgorithm => "the token's algorithm does not fit its key".into(),
                    K::MissingRequiredClaim(c) => format!("the token has no `{c}`"),
                    _ => format!("the token is not valid: {e}"),
                })
            })?;
        let claims = data.claims;
        self.check_scopes(&claims)?;
        let exp = claims.get("exp").and_then(Value::as_u64).unwrap_or(0);
        Ok((self.caller(iss, claims)?, exp, iss.to_owned(), header.kid))
    }

    fn check_scopes(&self, claims: &Map<String, Value>) -> Result<(), JwtRefusal> {
        if self.config.required_scopes.is_empty() {
            return Ok(());
        }
        let granted: Vec<&str> = match claims.get("scope").or_else(|| claims.get("scp")) {
            Some(Value::String(s)) => s.split_whitespace().collect(),
            other => values(other),
        };
        let missing: Vec<String> = self
            .config
            .required_scopes
            .iter()
            .filter(|s| !granted.contains(&s.as_str()))
            .cloned()
            .collect();
        if missing.is_empty() {
            Ok(())
        } else {
            Err(JwtRefusal::InsufficientScope { missing })
        }
    }

    /// The principal, role and operator right the claims give.
    fn caller(&self, iss: &str, claims: Map<String, Value>) -> Result<Caller, JwtRefusal> {
        let cfg = &self.config;
        let name = claims
            .get(&cfg.principal_claim)
            .and_then(Value::as_str)
            .filter(|p| !p.is_empty())
            .ok_or_else(|| {
                JwtRefusal::Invalid(format!("the token has no `{}` claim", cfg.principal_claim))
            })?
            .to_owned();
        let principal = qualified_principal(iss, &name);
        let held = values(claims.get(&cfg.role_claim));
        let role = held
            .iter()
            .find_map(|v| cfg.roles.get(*v))
            .or(cfg.default_role.as_ref())
            .ok_or_else(|| {
                JwtRefusal::NoRole(format!(
                    "`{principal}` has no role here: no `{}` value of the token maps to one in [server.oauth] roles",
                    cfg.role_claim
                ))
            })?
            .clone();
        let operator = held
            .iter()
            .any(|v| cfg.operator_values.iter().any(|o| o == v));
        let subject = claims
            .get("sub")
            .and_then(Value::as_str)
            .unwrap_or(&name)
            .to_owned();
        Ok(Caller(toolgate_gateway::Caller {
            principal: principal.into(),
            role: role.into(),
            operator,
            identity: Some(Arc::new(Identity {
                issuer: iss.to_owned(),
                subject,
                claims: Value::Object(claims),
            })),
        }))
    }
}
