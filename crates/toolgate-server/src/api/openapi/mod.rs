//! `GET /openapi.json`: the OpenAPI 3.1 document of the HTTP API, written by hand next to the
//! route table ([`super::ROUTES`]). A test walks both: every route is documented and every
//! documented operation is routed.

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
    let op = json!({
        "operationId": id,
        "tags": [tag],
        "summary": summary,
        "responses": responses,
    });
    op
}

/// The documented operation of one route, `None` for a route this document does not know.
pub fn operation_for(method: &str, path: &str) -> Option<Value> {
    let caller = ["401", "403"];
    let operator = ["401", "403"];
    let op = match (method, path) {
        ("GET", "/v1/health") => {
            operation("health", "server", "Liveness.", ok("Up.", r("Health")), &[])
        }
        ("GET", "/v1/ready") => operation(
            "ready",
            "server",
            "Readiness: the audit log is writable and the approvals database answers. An operator's request also gets the federated MCP servers' state.",
            ok("Ready.", r("Ready")),
            &["503"],
        ),
        ("GET", "/v1/me") => operation(
            "me",
            "server",
            "Who this request acts as.",
            ok("The caller.", r("Me")),
            &caller,
        ),
        ("GET", "/v1/tools") => operation(
            "listTools",
            "tools",
            "The tools the caller's role can see.",
            ok("Tools, sorted by name.", list_of("ToolSummary")),
            &caller,
        ),
        ("GET", "/v1/tools/export") => {
            let mut op = operation(
                "exportTools",
                "tools",
                "The role's available tools in a model API's `tools` format.",
                ok("The provider's `tools` value.", json!({"type": "array"})),
                &["400", "401", "403"],
            );
            op["parameters"] = json!([{"name": "format", "in": "query", "required": true,
                "schema": r("ExportFormat")},
                {"name": "query", "in": "query", "required": false, "schema": {"type": "string"},
                 "description": "The user's request: export its top K tools plus search_tools (Tool RAG)."},
                {"name": "k", "in": "query", "required": false,
                 "schema": {"type": "integer", "minimum": 1, "maximum": 20}},
                {"name": "deferred", "in": "query", "required": false, "schema": {"type": "boolean"},
                 "description": "The API's deferred-loading form (anthropic, openai-responses)."}]);
            op
        }
        ("GET", "/v1/tools/{name}") => {
            let mut op = operation(
                "getTool",
                "tools",
                "One tool's full definition.",
                ok("The tool.", r("Tool")),
                &["401", "403", "404"],
            );
            op["parameters"] = json!([path_param("name", "Tool name.")]);
            op
        }
        ("POST", "/v1/calls") => {
            let mut op = operation(
                "call",
                "calls",
                "Runs one call through the gateway (lookup, role, schema, policy, approval, execution, audit).",
                ok(
                    "The call's envelope, whether it succeeded or not: `error.code` says why not (approval_required carries `details.approval_id`).",
                    r("Envelope"),
                ),
                &["400", "401", "403", "413", "415", "503"],
            );
            op["requestBody"] = body("CallRequest");
            op
        }
        ("GET", "/v1/approvals") => {
            let mut op = operation(
                "listApprovals",
                "approvals",
                "Approval requests, newest first (operators).",
                ok("Requests.", list_of("Approval")),
                &["400", "401", "403"],
            );
            op["parameters"] = json!([
                query(
                    "status",
                    "`pending` (default), `all`, or approved | denied | expired.",
                    json!({"type": "string", "enum": ["pending", "all", "approved", "denied", "expired"]})
                ),
                query(
                    "limit",
                    "Default 100, at most 1000 (more is refused).",
                    json!({"type": "integer", "minimum": 0, "maximum": 1000})
                ),
            ]);
            op
        }
        ("GET", "/v1/approvals/stream") => {
            let mut op = operation(
                "streamApprovals",
                "approvals",
                "Server-sent events (operators): `event: approval` with an Approval as data — one per request pending on connect, then `event: synced` with `{\"pending\": N}`, then one `approval` per creation or status change, from any process. Keep-alive comments; ends on shutdown.",
                json!({}),
                &operator,
            );
            op["responses"]["200"] = json!({"description": "An event stream.",
                "content": {"text/event-stream": {
                    "schema": {"type": "object", "required": ["event", "data"],
                        "properties": {
                            "event": {"type": "string", "enum": ["approval", "synced"]},
                            "data": {"type": "string", "contentMediaType": "application/json",
                                "description": "approval: an Approval; synced: {\"pending\": N}."}
                        }},
                    "x-event-data": r("Approval")}}});
            op
        }
        ("GET", "/v1/approvals/{id}") => {
            let mut op = operation(
                "getApproval",
                "approvals",
                "One approval request (operators).",
                ok("The request.", r("Approval")),
                &["401", "403", "404"],
            );
            op["parameters"] = json!([path_param("id", "Approval id, `apr_…`.")]);
            op
        }
        ("POST", "/v1/approvals/{id}/decision") => {
            let mut op = operation(
                "decideApproval",
                "approvals",
                "Approve or deny a pending request (operators); the approver is the caller.",
                ok("The decided request.", r("Approval")),
                &["400", "401", "403", "404", "409", "410", "415"],
            );
            op["parameters"] = json!([path_param("id", "Approval id, `apr_…`.")]);
            op["requestBody"] = body("Decision");
            op
        }
        ("GET", "/v1/audit") => {
            let mut op = operation(
                "queryAudit",
                "audit",
                "Audit records matching every given filter (operators).",
                ok(
                    "Records, oldest first unless newest_first.",
                    list_of("AuditRecord"),
                ),
                &["400", "401", "403"],
            );
            let text = json!({"type": "string"});
            // Exactly what the handler parses (api/audit.rs `parse_time`).
            let time = json!({"anyOf": [
                {"type": "string", "pattern": "^[0-9]{1,9}(s|m|h|d|w)$"},
                {"type": "string", "format": "date-time"}
            ]});
            op["parameters"] = json!([
                query(
                    "since",
                    "A duration ago (`10m`, `2h`: digits, then s, m, h, d or w) or an RFC 3339 time; inclusive.",
                    time.clone()
                ),
                query("until", "Same forms; exclusive.", time),
                query("tool", "Tool name.", text.clone()),
                query("principal", "Caller.", text.clone()),
                query("session", "Session.", text.clone()),
                query("outcome", "`started`, `ok` or an error code.", text.clone()),
                query("call_id", "One call's records.", text),
                query(
                    "limit",
                    "Default 100, at most 10000 (more is refused).",
                    json!({"type": "integer", "minimum": 0, "maximum": 10000})
                ),
                query("newest_first", "Newest first.", json!({"type": "boolean"})),
            ]);
            op
        }
        ("POST", "/v1/audit/verify") => operation(
            "verifyAudit",
            "audit",
            "Walks the hash chain (and compares the index) and reports the first bad record (operators).",
            ok(
                "The report; `ok: false` names `first_bad`.",
                r("VerifyReport"),
            ),
            &operator,
        ),
        ("GET", "/openapi.json") => operation(
            "openapi",
            "server",
            "This document.",
            ok("OpenAPI 3.1.", json!({"type": "object"})),
            &[],
        ),
        ("GET", "/.well-known/oauth-protected-resource") => operation(
            "protectedResource",
            "server",
            "OAuth protected-resource metadata (RFC 9728) for remote MCP clients.",
            ok("The metadata.", r("ProtectedResource")),
            &[],
        ),
        _ => return None,
    };
    Some(op)
}

/// The whole document for a server reached at `base_url`.
pub fn document(base_url: &str) -> Value {
    let mut paths = Map::new();
    for route in super::ROUTES {
        let Some(op) = operation_for(route.method, route.path) else {
            continue;
        };
        let mut op = op;
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
                "description": "A token from `toolgate token create`, configured by its SHA-256 in [[server.tokens]]. Without one, the [server.anonymous] grant applies (on loopback by default: role readonly, operator)."}},
            "schemas": schemas::schemas(),
        },
    })
}
