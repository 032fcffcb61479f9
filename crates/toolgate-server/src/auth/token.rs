//! Bearer tokens: configured as SHA-256 hashes (`[[server.tokens]]`), or issued through the
//! store ([`super::TokenBook`]).

use axum::extract::{Request, State};
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::json;
use toolgate_gateway::Identity;
use toolgate_store::tokens::TokenState;
pub use toolgate_store::tokens::hash_token;

use super::Caller;
use crate::error::ApiError;
use crate::state::AppState;

/// The issuer recorded for tokens toolgate itself issued or was configured with.
pub const OWN_ISSUER: &str = "toolgate";

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A caller admitted by one of toolgate's own tokens; `subject` names the token.
fn own_caller(principal: &str, role: &str, operator: bool, subject: &str) -> Caller {
    Caller {
        identity: Some(std::sync::Arc::new(Identity {
            issuer: OWN_ISSUER.to_owned(),
            subject: subject.to_owned(),
            claims: json!({}),
        })),
        ..Caller::named(principal, role, operator)
    }
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
        if let Some(t) = found {
            return Ok(own_caller(&t.principal, &t.role, t.operator, &t.principal));
        }
        return match state.tokens().map(|book| book.lookup(&hash)) {
            Some(super::Lookup::Active(t)) => {
                Ok(own_caller(&t.principal, &t.role, t.operator, &t.id))
            }
            Some(super::Lookup::Refused { id, state }) => {
                Err(ApiError::unauthenticated(match state {
                    TokenState::Expired => format!("bearer token {id} has expired"),
                    _ => format!("bearer token {id} was revoked"),
                }))
            }
            _ => Err(ApiError::unauthenticated("unknown bearer token")),
        };
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
    let no_token_exists =
        state.config.tokens.is_empty() && !state.tokens().is_some_and(|b| b.any_issued());
    if no_token_exists && state.local_addr.ip().is_loopback() {
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
    fn compares_in_constant_time() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"ab"));
    }
}
