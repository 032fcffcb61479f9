//! The HTTP API under `/v1`, the OpenAPI document and the discovery documents.
//!
//! # Layout
//! - [`ROUTES`]: every route, its method, who may call it, its handler and its documented
//!   operation — the one list the router, the authentication middleware (public paths) and the
//!   OpenAPI document are built from.
//! - one file per resource: [`health`] (health, ready, me, OAuth metadata), [`metrics`]
//!   (Prometheus text), [`tools`],
//!   [`calls`], [`approvals`], [`stream`] (approval events), [`tokens`], [`audit`],
//!   [`openapi`]; the agent: [`conversations`], [`conversation_events`] (its SSE) and
//!   [`openai`] (`/v1/chat/completions`, `/v1/models`).
//! - [`feed`]: the one task polling the approval store for new and changed requests, which
//!   feeds [`stream`] and [`webhook`].
//! - [`extract`]: JSON body, query and path extractors answering with the one error body.
//!
//! Operator-only routes take the [`Operator`](crate::auth::Operator) extractor, which answers
//! 403 `forbidden` to other callers.

pub mod approvals;
pub mod audit;
pub mod calls;
pub mod conversation_events;
pub mod conversations;
pub mod extract;
pub mod feed;
pub mod health;
pub mod metrics;
pub mod openai;
pub mod openapi;
pub mod stream;
pub mod tokens;
pub mod tools;
pub mod webhook;

use axum::extract::State;
use axum::http::{Method, Uri};
use axum::routing::{MethodRouter, get, post};
use axum::{Json, Router};
use serde_json::Value;

use self::openapi::conversations as talk;
use self::openapi::operations as op;
use crate::error::ApiError;
use crate::state::AppState;

/// Who may call a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Anyone, without credentials.
    Public,
    /// Any authenticated (or anonymous-granted) caller.
    Caller,
    /// Callers with `operator = true`.
    Operator,
}

/// One route of the API: its method and path, who may call it, its handler and its
/// documented operation. A route is one [`ROUTES`] entry naming all of them, so a route
/// without a handler or without an operation does not compile.
#[derive(Debug, Clone, Copy)]
pub struct Route {
    pub method: &'static str,
    pub path: &'static str,
    pub access: Access,
    /// The handler, for the method, as the router mounts it.
    pub handler: fn() -> MethodRouter<AppState>,
    /// The operation the OpenAPI document describes ([`openapi::operations`]).
    pub operation: fn() -> Value,
}

/// `route!(GET "/path", Access, handler, operation)`: the method word picks the axum method
/// router, so the method the table (and the document) shows is the one the handler answers.
macro_rules! route {
    (GET $path:literal, $access:ident, $handler:path, $operation:path) => {
        route!(@ "GET", get, $path, $access, $handler, $operation)
    };
    (POST $path:literal, $access:ident, $handler:path, $operation:path) => {
        route!(@ "POST", post, $path, $access, $handler, $operation)
    };
    (@ $method:literal, $on:ident, $path:literal, $access:ident, $handler:path, $operation:path) => {
        Route {
            method: $method,
            path: $path,
            access: Access::$access,
            handler: || $on($handler),
            operation: $operation,
        }
    };
}

/// Every route of the API, in the order of the OpenAPI document.
pub const ROUTES: &[Route] = &[
    route!(GET "/v1/health", Public, health::health, op::health),
    route!(GET "/v1/ready", Public, health::ready, op::ready),
    route!(GET "/v1/me", Caller, health::me, op::me),
    route!(GET "/v1/tools", Caller, tools::list, op::list_tools),
    route!(GET "/v1/tools/export", Caller, tools::export, op::export_tools),
    route!(GET "/v1/tools/{name}", Caller, tools::show, op::get_tool),
    route!(POST "/v1/calls", Caller, calls::call, op::call),
    route!(GET "/v1/approvals", Operator, approvals::list, op::list_approvals),
    route!(GET "/v1/approvals/stream", Operator, stream::stream, op::stream_approvals),
    route!(GET "/v1/approvals/{id}", Operator, approvals::get, op::get_approval),
    route!(POST "/v1/approvals/{id}/decision", Operator, approvals::decide, op::decide_approval),
    route!(GET "/v1/conversations", Caller, conversations::list, talk::list_conversations),
    route!(POST "/v1/conversations", Caller, conversations::create, talk::create_conversation),
    route!(GET "/v1/conversations/{id}", Caller, conversations::get, talk::get_conversation),
    route!(
        POST "/v1/conversations/{id}/messages",
        Caller,
        conversations::post_message,
        talk::post_message
    ),
    route!(
        GET "/v1/conversations/{id}/events",
        Caller,
        conversation_events::stream,
        talk::stream_conversation
    ),
    route!(
        GET "/v1/conversations/{id}/approvals/{approval_id}",
        Caller,
        conversations::approval,
        talk::get_conversation_approval
    ),
    route!(
        POST "/v1/conversations/{id}/approvals/{approval_id}/decision",
        Caller,
        conversations::decide,
        talk::decide_conversation_approval
    ),
    route!(POST "/v1/chat/completions", Caller, openai::chat_completions, talk::chat_completions),
    route!(GET "/v1/models", Caller, openai::models, talk::list_models),
    route!(GET "/v1/tokens", Operator, tokens::list, op::list_tokens),
    route!(POST "/v1/tokens", Operator, tokens::create, op::create_token),
    route!(POST "/v1/tokens/{id}/revoke", Operator, tokens::revoke, op::revoke_token),
    route!(POST "/v1/tokens/{id}/rotate", Operator, tokens::rotate, op::rotate_token),
    route!(GET "/v1/audit", Operator, audit::query, op::query_audit),
    route!(POST "/v1/audit/verify", Operator, audit::verify_chain, op::verify_audit),
    route!(GET "/metrics", Operator, metrics::scrape, op::metrics),
    route!(GET "/openapi.json", Public, openapi_json, op::openapi),
    route!(
        GET "/.well-known/oauth-protected-resource",
        Public,
        health::protected_resource,
        op::protected_resource
    ),
];

/// Whether `path` is served without credentials.
pub fn is_public(path: &str) -> bool {
    ROUTES
        .iter()
        .any(|r| r.access == Access::Public && r.path == path)
}

pub fn routes() -> Router<AppState> {
    ROUTES.iter().fold(Router::new(), |router, r| {
        router.route(r.path, (r.handler)())
    })
}

/// The base URL clients reach this server at.
pub fn public_url(state: &AppState) -> String {
    match &state.config.public_url {
        Some(u) => u.trim_end_matches('/').to_owned(),
        None => format!("http://{}", state.local_addr),
    }
}

async fn openapi_json(State(state): State<AppState>) -> Json<Value> {
    Json(openapi::document(&public_url(&state)))
}

/// Any path no route serves: 404 with the one error body.
pub async fn not_found(method: Method, uri: Uri) -> ApiError {
    ApiError::not_found(format!("nothing at {method} {}", uri.path()))
        .with_hint("GET /openapi.json lists the API")
}

/// A known path asked with another method: 405 with the one error body.
pub async fn method_not_allowed(method: Method, uri: Uri) -> ApiError {
    ApiError::not_found(format!("{} does not answer {method}", uri.path()))
        .with_status(axum::http::StatusCode::METHOD_NOT_ALLOWED)
        .with_hint("GET /openapi.json lists the methods of each path")
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    #[test]
    fn the_document_holds_exactly_the_routes() {
        let doc = openapi::document("http://127.0.0.1:1");
        let documented: BTreeSet<(String, String)> = doc["paths"]
            .as_object()
            .unwrap()
            .iter()
            .flat_map(|(path, item)| {
                item.as_object()
                    .unwrap()
                    .keys()
                    .map(|m| (m.to_ascii_uppercase(), path.clone()))
                    .collect::<Vec<_>>()
            })
            .collect();
        let routed: BTreeSet<(String, String)> = ROUTES
            .iter()
            .map(|r| (r.method.to_owned(), r.path.to_owned()))
            .collect();
        assert_eq!(documented, routed);
        assert_eq!(routed.len(), ROUTES.len(), "a route is listed twice");
    }

    #[test]
    fn every_schema_reference_resolves() {
        let doc = openapi::document("http://127.0.0.1:1");
        let schemas = doc["components"]["schemas"].as_object().unwrap();
        let mut refs = Vec::new();
        collect_refs(&doc, &mut refs);
        assert!(!refs.is_empty());
        for r in refs {
            let name = r.strip_prefix("#/components/schemas/").unwrap();
            assert!(schemas.contains_key(name), "dangling $ref {r}");
        }
    }

    fn collect_refs(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                for (k, v) in m {
                    match (k.as_str(), v) {
                        ("$ref", Value::String(s)) => out.push(s.clone()),
                        _ => collect_refs(v, out),
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|v| collect_refs(v, out)),
            _ => {}
        }
    }

    #[test]
    fn public_operations_need_no_credentials() {
        let doc = openapi::document("http://127.0.0.1:1");
        for r in ROUTES {
            let op = &doc["paths"][r.path][r.method.to_ascii_lowercase()];
            let open = op.get("security") == Some(&serde_json::json!([]));
            assert_eq!(open, r.access == Access::Public, "{} {}", r.method, r.path);
            assert_eq!(is_public(r.path), r.access == Access::Public);
        }
    }
}
