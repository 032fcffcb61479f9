//! Bearer tokens: configured as SHA-256 hashes (`[[server.tokens]]`), or issued through the
//! store ([`super::TokenBook`]).

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::json;
use toolgate_gateway::Identity;
use toolgate_protocol::ErrorCode;
use toolgate_store::tokens::{TOKEN_PREFIX, TokenState};

use super::jwt::JwtRefusal;
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
    Caller(toolgate_gateway::Caller {
        identity: Some(std::sync::Arc::new(Identity {
            issuer: OWN_ISSUER.to_owned(),
            subject: subject.to_owned(),
            claims: json!({}),
        })),
        ..toolgate_gateway::Caller::named(principal, role, operator)
    })
}

/// Why a request was not admitted: the error body, and what `WWW-Authenticate` adds to
/// the pointer at the protected-resource metadata (RFC 6750 §3).
struct Refusal {
    error: ApiError,
    /// `error="invalid_token"` or `error="insufficient_scope"`.
    bearer_error: Option<&'static str>,
    /// The scopes to ask for (`insufficient_scope`).
    scope: Option<String>,
}

impl From<ApiError> for Refusal {
    fn from(error: ApiError) -> Self {
        Refusal {
            error,
            bearer_error: None,
            scope: None,
        }
    }
}

impl Refusal {
    fn invalid_token(message: String) -> Self {
        Refusal {
            error: ApiError::unauthenticated(message),
            bearer_error: Some("invalid_token"),
            scope: None,
        }
    }

    fn from_jwt(refusal: JwtRefusal) -> Self {
        match refusal {
            JwtRefusal::Invalid(m) => Refusal::invalid_token(m),
            JwtRefusal::InsufficientScope { missing } => {
                let scope = missing.join(" ");
                Refusal {
                    error: ApiError::new(
                        ErrorCode::Forbidden,
                        format!("the token lacks the scope this server requires: {scope}"),
                    )
                    .with_hint("ask the authorization server for a token with these scopes"),
                    bearer_error: Some("insufficient_scope"),
                    scope: Some(scope),
                }
            }
            JwtRefusal::NoRole(m) => ApiError::new(ErrorCode::Forbidden, m)
                .with_hint(
                    "map a value of the role claim in [server.oauth] roles, or set default_role",
                )
                .into(),
            // `m` names no URL: the caller is not authenticated yet.
            JwtRefusal::Unavailable(m) => ApiError::new(ErrorCode::Unavailable, m)
                .with_hint("try again later; the server's log says why")
                .into(),
        }
    }

    /// The answer, with `WWW-Authenticate` on 401 and 403.
    fn into_response(self, state: &AppState) -> Response {
        let status = self.error.status;
        let mut resp = self.error.clone().into_response();
        if status != StatusCode::UNAUTHORIZED && self.bearer_error.is_none() {
            return resp;
        }
        let mut value = format!(
            "Bearer resource_metadata=\"{}/.well-known/oauth-protected-resource\"",
            crate::api::public_url(state)
        );
        if let Some(code) = self.bearer_error {
            value.push_str(&format!(", error=\"{code}\""));
        }
        if let Some(scope) = &self.scope {
            value.push_str(&format!(", scope=\"{}\"", quoted(scope)));
        }
        if self.bearer_error.is_some() {
            value.push_str(&format!(
                ", error_description=\"{}\"",
                quoted(&self.error.error.message)
            ));
        }
        if let Ok(v) = HeaderValue::from_str(&value) {
            resp.headers_mut().insert(header::WWW_AUTHENTICATE, v);
        }
        resp
    }
}

/// Text safe inside a quoted-string of a header: printable ASCII without `"` and `\`.
fn quoted(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '"' | '\\' => '\'',
            c if c.is_ascii_graphic() || c == ' ' => c,
            _ => '?',
        })
        .collect()
}

/// An own token (or the anonymous grant) may not stand for a principal spelled like an
/// OAuth one: it would share that user's approvals and grants. A configuration or token
/// row made before the rule existed is refused here rather than admitted.
fn own_principal(principal: &str) -> Result<(), String> {
    toolgate_store::tokens::check_own_principal(principal)
        .map_err(|why| format!("this token cannot be used: {why}"))
}

async fn resolve(state: &AppState, auth: Option<&HeaderValue>) -> Result<Caller, Refusal> {
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
            own_principal(&t.principal).map_err(Refusal::invalid_token)?;
            return Ok(own_caller(&t.principal, &t.role, t.operator, &t.principal));
        }
        match state.tokens().map(|book| book.lookup(&hash)) {
            Some(super::Lookup::Active(t)) => {
                own_principal(&t.principal).map_err(Refusal::invalid_token)?;
                return Ok(own_caller(&t.principal, &t.role, t.operator, &t.id));
            }
            Some(super::Lookup::Refused { id, state }) => {
                return Err(Refusal::invalid_token(match state {
                    TokenState::Expired => format!("bearer token {id} has expired"),
                    _ => format!("bearer token {id} was revoked"),
                }));
            }
            _ => {}
        }
        // Not one of ours: an access token of a configured authorization server, if any.
        return match state.jwt() {
            Some(jwt) if !token.starts_with(TOKEN_PREFIX) => {
                jwt.authenticate(token).await.map_err(Refusal::from_jwt)
            }
            _ => Err(Refusal::invalid_token("unknown bearer token".into())),
        };
    }
    if let Some(anon) = &state.config.anonymous {
        own_principal(&anon.principal).map_err(Refusal::invalid_token)?;
        return Ok(Caller::named(
            anon.principal.clone(),
            anon.role.clone(),
            anon.operator,
        ));
    }
    // Local development only: with no token configured, issued or accepted from an
    // authorization server there is no other way in, and the server is reachable from this
    // machine alone. Once tokens exist, a caller without one gets only what
    // `[server.anonymous]` grants — any local process (another user, an MCP server) could
    // otherwise read the audit and approve calls.
    let no_token_exists = state.config.tokens.is_empty()
        && !state.tokens().is_some_and(|b| b.any_issued())
        && state.jwt().is_none();
    if no_token_exists && state.local_addr.ip().is_loopback() {
        return Ok(Caller::named("anonymous", "readonly", true));
    }
    Err(
        ApiError::unauthenticated("this server requires a bearer token")
            .with_hint(
                "send `Authorization: Bearer <token>`; an operator issues one with `toolgate token \
             create --principal NAME --role ROLE` (add `--operator` for the console and \
             approvals), or configure [server.anonymous] for callers without a token",
            )
            .into(),
    )
}

/// Middleware: puts the [`toolgate_gateway::Caller`] in the request's extensions (where the
/// handlers' [`Caller`] and the MCP endpoint find it), or answers 401 (403 for a
/// token without the required scope) with a `WWW-Authenticate` header pointing at the
/// protected-resource metadata.
pub async fn authenticate(State(state): State<AppState>, mut req: Request, next: Next) -> Response {
    // Discovery documents, liveness and readiness (the `Public` routes of the API): never
    // refused, but a caller that can be resolved is attached (readiness shows operators more).
    if crate::api::is_public(req.uri().path()) {
        if let Ok(caller) = resolve(&state, req.headers().get(header::AUTHORIZATION)).await {
            req.extensions_mut().insert(caller.0);
        }
        return next.run(req).await;
    }
    match resolve(&state, req.headers().get(header::AUTHORIZATION)).await {
        Ok(caller) => {
            req.extensions_mut().insert(caller.0);
            next.run(req).await
        }
        Err(refusal) => refusal.into_response(&state),
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
