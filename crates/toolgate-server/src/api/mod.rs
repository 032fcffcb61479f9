//! The HTTP API under `/v1`, the OpenAPI document and the discovery documents.
//!
//! # Layout
//! - [`ROUTES`]: every route, its method and who may call it — the one list the router, the
//!   authentication middleware (public paths) and the OpenAPI document are built from.
//! - one file per resource: [`health`] (health, ready, me, OAuth metadata), [`tools`],
//!   [`calls`], [`approvals`], [`stream`] (approval events), [`audit`], [`openapi`].
//! - [`feed`]: the one task polling the approval store for new and changed requests, which
//!   feeds [`stream`] and [`webhook`].
//! - [`extract`]: JSON body, query and path extractors answering with the one error body.
//!
//! Operator-only routes take the [`Operator`](crate::auth::Operator) extractor, which answers
//! 403 `forbidden` to other callers.

pub mod approvals;
pub mod audit;
pub mod calls;
pub mod extract;
pub mod feed;
pub mod health;
pub mod openapi;
pub mod stream;
pub mod tools;
pub mod webhook;

use axum::extract::State;
use axum::http::{Method, Uri};
use axum::routing::{MethodRouter, get, post};
use axum::{Json, Router};
use serde_json::Value;

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

/// One route of the API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route {
    pub method: &'static str,
    pub path: &'static str,
    pub access: Access,
}

const fn route(method: &'static str, path: &'static str, access: Access) -> Route {
    Route {
        method,
        path,
        access,
    }
}

/// Every route of the API, in the order of the OpenAPI document.
pub const ROUTES: &[Route] = &[
    route("GET", "/v1/health", Access::Public),
    route("GET", "/v1/ready", Access::Public),
    route("GET", "/v1/me", Access::Caller),
    route("GET", "/v1/tools", Access::Caller),
    route("GET", "/v1/tools/export", Access::Caller),
    route("GET", "/v1/tools/{name}", Access::Caller),
    route("POST", "/v1/calls", Access::Caller),
    route("GET", "/v1/approvals", Access::Operator),
    route("GET", "/v1/approvals/stream", Access::Operator),
    route("GET", "/v1/approvals/{id}", Access::Operator),
    route("POST", "/v1/approvals/{id}/decision", Access::Operator),
    route("GET", "/v1/audit", Access::Operator),
    route("POST", "/v1/audit/verify", Access::Operator),
    route("GET", "/openapi.json", Access::Public),
    route(
        "GET",
        "/.well-known/oauth-protected-resource",
        Access::Public,
    ),
];

/// Whether `path` is served without credentials.
pub fn is_public(path: &str) -> bool {
    ROUTES
        .iter()
        .any(|r| r.access == Access::Public && r.path == path)
}

/// The handler of a route in [`ROUTES`].
fn handler(route: &Route) -> Option<MethodRouter<AppState>> {
    Some(match (route.method, route.path) {
        ("GET", "/v1/health") => get(health::health),
        ("GET", "/v1/ready") => get(health::ready),
        ("GET", "/v1/me") => get(health::me),
        ("GET", "/v1/tools") => get(tools::list),
        ("GET", "/v1/tools/export") => get(tools::export),
        ("GET", "/v1/tools/{name}") => get(tools::show),
        ("POST", "/v1/calls") => post(calls::call),
        ("GET", "/v1/approvals") => get(approvals::list),
        ("GET", "/v1/approvals/stream") => get(stream::stream),
        ("GET", "/v1/approvals/{id}") => get(approvals::get),
        ("POST", "/v1/approvals/{id}/decision") => post(approvals::decide),
        ("GET", "/v1/audit") => get(audit::query),
        ("POST", "/v1/audit/verify") => post(audit::verify_chain),
        ("GET", "/openapi.json") => get(openapi_json),
        ("GET", "/.well-known/oauth-protected-resource") => get(health::protected_resource),
        _ => return None,
    })
}

pub fn routes() -> Router<AppState> {
    let mut router = Router::new();
    for r in ROUTES {
        if let Some(h) = handler(r) {
            router = router.route(r.path, h);
        } else {
            tracing::error!("route {} {} has no handler", r.method, r.path);
        }
    }
    router
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
    fn every_route_has_a_handler_and_a_documented_operation() {
        for r in ROUTES {
            assert!(
                handler(r).is_some(),
                "{} {} has no handler",
                r.method,
                r.path
            );
            assert!(
                openapi::operation_for(r.method, r.path).is_some(),
                "{} {} is not documented",
                r.method,
                r.path
            );
        }
    }

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
