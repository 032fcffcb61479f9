//! Bearer tokens, configured as SHA-256 hashes.

use axum::extract::{Request, State};
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

use super::Caller;
use crate::error::ApiError;
use crate::state::AppState;

/// SHA-256 hex of a token, the form it is configured in.
pub fn hash_token(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn resolve(state: &AppState, auth: Option<&HeaderValue>) -> Result<Caller, ApiError> {
    if let Some(value) = auth {
        let token = value
            .to_str()
            .ok()
            .and_then(|v| {
                v.strip_prefix("Bearer ")
                    .or_else(|| v.strip_prefix("bearer "))
            })
            .map(str::trim)
            .ok_or_else(|| {
                ApiError::unauthenticated("the Authorization header must be `Bearer <token>`")
            })?;
        let hash = hash_token(token);
        let mut found = None;
        for t in &state.config.tokens {
            if constant_time_eq(t.sha256.to_ascii_lowercase().as_bytes(), hash.as_bytes()) {
                found = Some(t);
            }
        }
        return found
            .map(|t| Caller::named(t.principal.clone(), t.role.clone(), t.operator))
            .ok_or_else(|| ApiError::unauthenticated("unknown bearer token"));
    }
    if let Some(anon) = &state.config.anonymous {
        return Ok(Caller::named(
            anon.principal.clone(),
            anon.role.clone(),
            anon.operator,
        ));
    }
    // Local development only: with no token configured there is no other way in, and the
    // server is reachable from this machine alone. Once tokens exist, a caller without one
    // gets only what `[server.anonymous]` grants — any local process (another user, an MCP
    // server) could otherwise read the audit and approve calls.
    if state.config.tokens.is_empty() && state.local_addr.ip().is_loopback() {
        return Ok(Caller::named("anonymous", "readonly", true));
    }
    Err(ApiError::unauthenticated(
        "this server requires a bearer token",
    ))
}

/// Middleware: puts a [`Caller`] in the request's extensions, or answers 401 with a
/// `WWW-Authenticate` header pointing at the protected-resource metadata.
pub async fn authenticate(State(state): State<AppState>, mut req: Request, next: Next) -> Response {
    // Discovery documents, liveness and readiness (the `Public` routes of the API): never
    // refused, but a caller that can be resolved is attached (readiness shows operators more).
    if crate::api::is_public(req.uri().path()) {
        if let Ok(caller) = resolve(&state, req.headers().get(header::AUTHORIZATION)) {
            req.extensions_mut().insert(caller);
        }
        return next.run(req).await;
    }
    match resolve(&state, req.headers().get(header::AUTHORIZATION)) {
        Ok(caller) => {
            req.extensions_mut().insert(caller);
            next.run(req).await
        }
        Err(err) => {
            let mut resp = err.into_response();
            let metadata = format!(
                "Bearer resource_metadata=\"{}/.well-known/oauth-protected-resource\"",
                crate::api::public_url(&state)
            );
            if let Ok(v) = HeaderValue::from_str(&metadata) {
                resp.headers_mut().insert(header::WWW_AUTHENTICATE, v);
            }
            resp
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_and_compares() {
        assert_eq!(
            hash_token("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"ab"));
    }
}
