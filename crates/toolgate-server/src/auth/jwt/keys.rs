//! The signing keys of one authorization server: its JWKS, found through its metadata (RFC
//! 8414 `/.well-known/oauth-authorization-server`, else OpenID Connect discovery) or
//! configured, fetched with the `[egress]` client, cached, and re-fetched when a token names
//! a key id the cache does not hold (a key rotation) or the cache is older than the refresh
//! interval (`jwks_refresh_secs`: a key the issuer stopped publishing stops verifying) — at
//! most once per [`MIN_REFRESH`], so a stream of tokens with made-up key ids cannot make
//! toolgate hammer the issuer (one request per 10 s, whatever the flood).
//!
//! Bodies are read as they stream in and refused once past [`MAX_BODY`], with or without a
//! `Content-Length`: a hostile JWKS cannot make toolgate buffer more than that. Errors name
//! the URL for the log only; callers get [`KeyError::Unreachable`] without it.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, DecodingKey};
use serde_json::Value;
use url::Url;

/// The least time between two fetches of one issuer's keys.
pub const MIN_REFRESH: Duration = Duration::from_secs(10);
/// The largest metadata document or JWKS read.
pub const MAX_BODY: usize = 1 << 20;

/// One verification key.
pub struct Key {
    pub decoding: DecodingKey,
    /// The `alg` the JWK pins, if it names one.
    pub alg: Option<Algorithm>,
}

struct KeySet {
    by_kid: HashMap<String, Arc<Key>>,
    /// Keys without a `kid`, for tokens without one.
    anonymous: Vec<Arc<Key>>,
    fetched: Option<Instant>,
}

/// Why no key could be had.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyError {
    /// The token names a key the issuer does not publish.
    Unknown(String),
    /// The issuer's metadata or keys could not be fetched (why, with the URL: for the
    /// log, not for the caller).
    Unreachable(FetchError),
}

/// Why an issuer's metadata or key set could not be had.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    #[error("GET {url}: {why}")]
    Get { url: String, why: String },
    #[error("GET {0}: larger than {MAX_BODY} bytes")]
    TooLarge(String),
    #[error("GET {url}: not JSON: {why}")]
    NotJson { url: String, why: String },
    #[error("issuer `{0}` is not a URL: {1}")]
    Issuer(String, String),
    #[error("the metadata at {url} names issuer {named}, not {issuer}")]
    OtherIssuer {
        url: String,
        named: String,
        issuer: String,
    },
    #[error("the metadata at {0} has no jwks_uri")]
    NoJwksUri(String),
    #[error("jwks_uri `{0}`: {1}")]
    JwksUri(String, String),
    #[error("{0} holds no `keys` array")]
    NoKeys(String),
}

pub struct IssuerKeys {
    issuer: String,
    configured_jwks: Option<Url>,
    client: reqwest::Client,
    /// Keys older than this are re-fetched on the next use.
    max_age: Duration,
    keys: ArcSwap<KeySet>,
    /// Held while fetching; holds when the last fetch began.
    fetching: tokio::sync::Mutex<Option<Instant>>,
}

impl IssuerKeys {
    /// `max_age`: the refresh interval (keys older are fetched again on the next use).
    pub fn new(
        issuer: String,
        jwks_uri: Option<Url>,
        client: reqwest::Client,
        max_age: Duration,
    ) -> Self {
        IssuerKeys {
            issuer,
            configured_jwks: jwks_uri,
            client,
            max_age,
            keys: ArcSwap::from_pointee(KeySet {
                by_kid: HashMap::new(),
                anonymous: Vec::new(),
                fetched: None,
            }),
            fetching: tokio::sync::Mutex::new(None),
        }
    }

    fn cached(&self, kid: Option<&str>) -> Option<Arc<Key>> {
        let set = self.keys.load();
        match kid {
            Some(kid) => set.by_kid.get(kid).cloned(),
            None if set.anonymous.len() + set.by_kid.len() == 1 => set
                .anonymous
                .first()
                .or_else(|| set.by_kid.values().next())
                .cloned(),
            None => None,
        }
    }

    fn stale(&self) -> bool {
        self.keys
            .load()
            .fetched
            .is_none_or(|at| at.elapsed() > self.max_age)
    }

    /// The key `kid` names (or the only key, for a token without `kid`).
    pub async fn key(&self, kid: Option<&str>) -> Result<Arc<Key>, KeyError> {
        if !self.stale()
            && let Some(key) = self.cached(kid)
        {
            return Ok(key);
        }
        let mut last = self.fetching.lock().await;
        // Another request may have fetched while this one waited.
        if !self.stale()
            && let Some(key) = self.cached(kid)
        {
            return Ok(key);
        }
        let may_fetch = last.is_none_or(|at| at.elapsed() >= MIN_REFRESH);
        if may_fetch {
            *last = Some(Instant::now());
            match self.fetch().await {
                Ok(set) => self.keys.store(Arc::new(set)),
                Err(e) => {
                    // Keep what was known; a token signed with it still verifies.
                    tracing::warn!(issuer = %self.issuer, error = %e, "cannot fetch the issuer's signing keys");
                    return self.cached(kid).ok_or(KeyError::Unreachable(e));
                }
            }
        }
        self.cached(kid).ok_or_else(|| {
            KeyError::Unknown(match kid {
                Some(kid) => format!("the issuer publishes no key `{kid}`"),
                None => {
                    "the token names no key (`kid`) and the issuer publishes more than one".into()
                }
            })
        })
    }

    async fn get_json(&self, url: &Url) -> Result<Value, FetchError> {
        let failed = |why: String| FetchError::Get {
            url: url.to_string(),
            why,
        };
        let resp = self
            .client
            .get(url.clone())
            .header("accept", "application/json")
            .send()
            .await
            .map_err(|e| failed(e.to_string()))?;
        if !resp.status().is_success() {
            return Err(failed(format!("HTTP {}", resp.status())));
        }
        let too_large = || FetchError::TooLarge(url.to_string());
        if resp.content_length().is_some_and(|n| n > MAX_BODY as u64) {
            return Err(too_large());
        }
        // Chunk by chunk: a body without Content-Length (chunked, or until close) is cut at
        // the cap, never buffered whole first.
        let mut body = Vec::new();
        let mut resp = resp;
        while let Some(chunk) = resp.chunk().await.map_err(|e| failed(e.to_string()))? {
            if body.len() + chunk.len() > MAX_BODY {
                return Err(too_large());
            }
            body.extend_from_slice(&chunk);
        }
        serde_json::from_slice(&body).map_err(|e| FetchError::NotJson {
            url: url.to_string(),
            why: e.to_string(),
        })
    }

    /// The JWKS URL: configured, or from the issuer's metadata (whose `issuer` must be this
    /// issuer exactly — RFC 8414 §3.3).
    async fn jwks_uri(&self) -> Result<Url, FetchError> {
        if let Some(u) = &self.configured_jwks {
            return Ok(u.clone());
        }
        let [oauth, oidc] = metadata_urls(&self.issuer)?;
        let (url, doc) = match self.get_json(&oauth).await {
            Ok(doc) => (oauth, doc),
            Err(_) => {
                let doc = self.get_json(&oidc).await?;
                (oidc, doc)
            }
        };
        if doc["issuer"].as_str() != Some(self.issuer.as_str()) {
            return Err(FetchError::OtherIssuer {
                url: url.to_string(),
                named: doc["issuer"].to_string(),
                issuer: self.issuer.clone(),
            });
        }
        let jwks = doc["jwks_uri"]
            .as_str()
            .ok_or_else(|| FetchError::NoJwksUri(url.to_string()))?;
        Url::parse(jwks).map_err(|e| FetchError::JwksUri(jwks.to_owned(), e.to_string()))
    }

    async fn fetch(&self) -> Result<KeySet, FetchError> {
        let uri = self.jwks_uri().await?;
        let doc = self.get_json(&uri).await?;
        let listed = doc["keys"]
            .as_array()
            .ok_or_else(|| FetchError::NoKeys(uri.to_string()))?;
        let mut set = KeySet {
            by_kid: HashMap::new(),
            anonymous: Vec::new(),
            fetched: Some(Instant::now()),
        };
        for raw in listed {
            // Encryption keys and keys of kinds we cannot verify with are skipped, not fatal.
            if raw.get("use").is_some_and(|u| u != "sig") {
                continue;
            }
            let Ok(jwk) = serde_json::from_value::<Jwk>(raw.clone()) else {
                continue;
            };
            let Ok(decoding) = DecodingKey::from_jwk(&jwk) else {
                continue;
            };
            let alg = jwk
                .common
                .key_algorithm
                .and_then(|a| a.to_string().parse::<Algorithm>().ok());
            let key = Arc::new(Key { decoding, alg });
            match jwk.common.key_id {
                Some(kid) => {
                    set.by_kid.insert(kid, key);
                }
                None => set.anonymous.push(key),
            }
        }
        Ok(set)
    }
}

/// Where an issuer's metadata may be: RFC 8414 (with the path inserted after the well-known
/// segment), then OpenID Connect discovery (appended).
fn metadata_urls(issuer: &str) -> Result<[Url; 2], FetchError> {
    let base =
        Url::parse(issuer).map_err(|e| FetchError::Issuer(issuer.to_owned(), e.to_string()))?;
    let path = base.path().trim_end_matches('/');
    let mut oauth = base.clone();
    oauth.set_path(&format!("/.well-known/oauth-authorization-server{path}"));
    let mut oidc = base.clone();
    oidc.set_path(&format!("{path}/.well-known/openid-configuration"));
    Ok([oauth, oidc])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_is_looked_for_where_rfc_8414_and_oidc_put_it() {
        let urls: Vec<String> = metadata_urls("https://as.example/tenant/1")
            .unwrap()
            .iter()
            .map(Url::to_string)
            .collect();
        assert_eq!(
            urls,
            [
                "https://as.example/.well-known/oauth-authorization-server/tenant/1",
                "https://as.example/tenant/1/.well-known/openid-configuration"
            ]
        );
        let root: Vec<String> = metadata_urls("https://as.example")
            .unwrap()
            .iter()
            .map(Url::to_string)
            .collect();
        assert_eq!(
            root,
            [
                "https://as.example/.well-known/oauth-authorization-server",
                "https://as.example/.well-known/openid-configuration"
            ]
        );
    }
}
