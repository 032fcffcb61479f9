//! `GET /openapi.json`: the OpenAPI 3.1 document of the HTTP API, built from the route table
//! ([`super::ROUTES`]): each route names its operation ([`operations`]) beside its handler, so
//! an undocumented route does not compile. The API tests check every answer they get against
//! the response this document declares for its route and status (`tests/api/contract.rs`).

pub mod conversations;
pub mod operations;
mod schemas;

use serde_json::{Map, Value, json};

fn r(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}

fn ok(description: &str, schema: Value) -> Value {
    json!({"description": description, "content": {"application/json": {"schema": schema}}})
}

fn list_of(name: &str) -> Value {
    json!({"type": "array", "items": r(name)})
}

fn query(name: &str, description: &str, schema: Value) -> Value {
    json!({"name": name, "in": "query", "required": false, "description": description, "schema": schema})
}

fn path_param(name: &str, description: &str) -> Value {
    json!({"name": name, "in": "path", "required": true, "description": description, "schema": {"type": "string"}})
}

fn body(name: &str) -> Value {
    json!({"required": true, "content": {"application/json": {"schema": r(name)}}})
}

/// The error answers an operation can give, by status.
fn errors(statuses: &[&str]) -> Map<String, Value> {
    statuses
        .iter()
        .map(|s| {
            let description = match *s {
                "400" => "Bad input (`invalid_arguments`).",
                "401" => "No valid credentials; `WWW-Authenticate` points at the protected-resource metadata.",
                "403" => "`forbidden`: not an operator, or Host/Origin not allowed.",
                "404" => "Not found (`unknown_tool`, or `invalid_arguments` for an unknown id).",
                "409" => "The request was already decided.",
                "410" => "`approval_expired`: the request expired before the decision.",
                "413" => "The body is larger than [limits] max_argument_bytes plus room for the envelope.",
                "415" => "The body is not `application/json`.",
                "500" => "`execution_failed`: the approvals store or the audit log failed.",
                "503" => "`unavailable`: not ready, or shutting down.",
                _ => "Error.",
            };
            let resp = json!({"description": description,
                "content": {"application/json": {"schema": r("Error")}}});
            ((*s).to_owned(), resp)
        })
        .collect()
}

fn operation(id: &str, tag: &str, summary: &str, ok_answer: Value, errs: &[&str]) -> Value {
    let mut responses = errors(errs);
    responses.insert("200".into(), ok_answer);
    json!({
        "operationId": id,
        "tags": [tag],
        "summary": summary,
        "responses": responses,
    })
}

/// `op` answering 201 (something was made) where [`operation`] said 200.
fn created(mut op: Value) -> Value {
    if let Some(responses) = op["responses"].as_object_mut()
        && let Some(answer) = responses.remove("200")
    {
        responses.insert("201".into(), answer);
    }
    op
}

/// The whole document for a server reached at `base_url`.
pub fn document(base_url: &str) -> Value {
    let mut paths = Map::new();
    for route in super::ROUTES {
        let mut op = (route.operation)();
        if route.access == super::Access::Public {
            op["security"] = json!([]);
        }
        let item = paths
            .entry(route.path.to_owned())
            .or_insert_with(|| json!({}));
        item[route.method.to_ascii_lowercase()] = op;
    }
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "toolgate",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "The toolgate gateway over HTTP: tools, calls, approvals and audit. Every call runs through the same pipeline as the CLI and MCP. Errors use one body, `{\"error\": {code, message, retryable, hint?, details?}}`.",
        },
        "servers": [{"url": base_url}],
        "security": [{"bearer": []}, {}],
        "paths": paths,
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer",
                "description": "A token from `toolgate token create` (or POST /v1/tokens), or one configured by its SHA-256 in [[server.tokens]]. Without one, the [server.anonymous] grant applies (on loopback by default: role readonly, operator)."}},
            "schemas": schemas::schemas(),
        },
    })
}
