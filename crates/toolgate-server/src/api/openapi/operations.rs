//! The documented operation of each route: one function per entry of [`crate::api::ROUTES`],
//! which names it beside the route's handler, so a route cannot be listed without its
//! operation. Responses are declared by status; the API tests hold every answer they get
//! against them (`tests/api/contract.rs`).

use serde_json::{Value, json};

use super::{body, created, list_of, ok, operation, path_param, query, r};

/// Every authenticated route: no credentials (401), or a Host/Origin not allowed or not an
/// operator (403).
const GUARDED: [&str; 2] = ["401", "403"];
/// Public routes still pass the Host/Origin guard (403).
const PUBLIC: [&str; 1] = ["403"];

pub fn health() -> Value {
    operation(
        "health",
        "server",
        "Liveness.",
        ok("Up.", r("Health")),
        &PUBLIC,
    )
}

pub fn ready() -> Value {
    operation(
        "ready",
        "server",
        "Readiness: the audit log is writable and the approvals database answers. An operator's request also gets the federated MCP servers' state.",
        ok("Ready.", r("Ready")),
        &["403", "503"],
    )
}

pub fn me() -> Value {
    operation(
        "me",
        "server",
        "Who this request acts as.",
        ok("The caller.", r("Me")),
        &GUARDED,
    )
}

pub fn list_tools() -> Value {
    operation(
        "listTools",
        "tools",
        "The tools the caller's role can see.",
        ok("Tools, sorted by name.", list_of("ToolSummary")),
        &GUARDED,
    )
}

pub fn export_tools() -> Value {
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

pub fn get_tool() -> Value {
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

pub fn call() -> Value {
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
    op["responses"]["429"] = json!({
        "description": "The call is over a `[[quotas]]` limit: the envelope, `error.code` = `rate_limited`, `error.details.retry_after_ms`.",
        "headers": {"Retry-After": {"description": "Seconds to wait before retrying.", "schema": {"type": "integer", "minimum": 1}}},
        "content": {"application/json": {"schema": r("Envelope")}}
    });
    op["requestBody"] = body("CallRequest");
    op
}

pub fn list_approvals() -> Value {
    let mut op = operation(
        "listApprovals",
        "approvals",
        "Approval requests, newest first (operators).",
        ok("Requests.", list_of("Approval")),
        &["400", "401", "403", "500"],
    );
    op["parameters"] = json!([
        query(
            "status",
            "`pending` (default), `all`, or approved | denied | expired | abandoned.",
            json!({"type": "string", "enum": ["pending", "all", "approved", "denied", "expired", "abandoned"]})
        ),
        query(
            "limit",
            "Default 100, at most 1000 (more is refused).",
            json!({"type": "integer", "minimum": 0, "maximum": 1000})
        ),
    ]);
    op
}

pub fn stream_approvals() -> Value {
    let mut op = operation(
        "streamApprovals",
        "approvals",
        "Server-sent events (operators): `event: approval` with an Approval as data — one per request pending on connect, then `event: synced` with `{\"pending\": N}`, then one `approval` per creation or status change, from any process. Keep-alive comments; ends on shutdown.",
        json!({}),
        &["401", "403", "500"],
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

pub fn get_approval() -> Value {
    let mut op = operation(
        "getApproval",
        "approvals",
        "One approval request (operators).",
        ok("The request.", r("Approval")),
        &["401", "403", "404", "500"],
    );
    op["parameters"] = json!([path_param("id", "Approval id, `apr_…`.")]);
    op
}

pub fn decide_approval() -> Value {
    let mut op = operation(
        "decideApproval",
        "approvals",
        "Approve or deny a pending request (operators); the approver is the caller.",
        ok("The decided request.", r("Approval")),
        &["400", "401", "403", "404", "409", "410", "415", "500"],
    );
    op["parameters"] = json!([path_param("id", "Approval id, `apr_…`.")]);
    op["requestBody"] = body("Decision");
    op
}

pub fn list_tokens() -> Value {
    operation(
        "listTokens",
        "tokens",
        "The bearer tokens issued through the store, newest first (operators); never a token or its hash.",
        ok("Tokens.", list_of("Token")),
        &["401", "403", "500", "503"],
    )
}

pub fn create_token() -> Value {
    let mut op = created(operation(
        "createToken",
        "tokens",
        "Issue a bearer token (operators). The answer is the only time the token is shown; every server sharing the store admits it within a second.",
        ok("The token, with `token` set.", r("IssuedToken")),
        &["400", "401", "403", "404", "415", "500", "503"],
    ));
    op["requestBody"] = body("NewToken");
    op
}

pub fn revoke_token() -> Value {
    let mut op = operation(
        "revokeToken",
        "tokens",
        "Revoke a token (operators): refused at once here, within a second on every server sharing the store. Revoking a revoked token changes nothing.",
        ok("The token.", r("Token")),
        &["401", "403", "404", "500", "503"],
    );
    op["parameters"] = json!([path_param("id", "Token id, `tok_…`.")]);
    op
}

pub fn rotate_token() -> Value {
    let mut op = created(operation(
        "rotateToken",
        "tokens",
        "Issue a replacement for a token (operators): same principal, role and expiry; the old token keeps working for `grace_secs`, then stops.",
        ok("The new token, with `token` set.", r("IssuedToken")),
        &["400", "401", "403", "404", "409", "415", "500", "503"],
    ));
    op["parameters"] = json!([path_param("id", "Token id, `tok_…`.")]);
    op["requestBody"] = body("Rotation");
    op
}

pub fn query_audit() -> Value {
    let mut op = operation(
        "queryAudit",
        "audit",
        "Audit records matching every given filter (operators).",
        ok(
            "Records, oldest first unless newest_first.",
            list_of("AuditRecord"),
        ),
        &["400", "401", "403", "500"],
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
        query(
            "outcome",
            "`started`, `ok` or an error code; anything else is refused (400).",
            json!({"$ref": "#/components/schemas/Outcome"})
        ),
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

pub fn verify_audit() -> Value {
    operation(
        "verifyAudit",
        "audit",
        "Walks the hash chain (and compares the index) and reports the first bad record (operators).",
        ok(
            "The report; `ok: false` names `first_bad`.",
            r("VerifyReport"),
        ),
        &["401", "403", "500"],
    )
}

pub fn metrics() -> Value {
    operation(
        "metrics",
        "server",
        "This process's metrics in the Prometheus text format (0.0.4): calls by tool, outcome and role, durations, MCP operations, approvals, MCP servers up, the audit queue (docs/telemetry.md).",
        json!({"description": "Prometheus text.", "content": {"text/plain": {"schema": {"type": "string"}}}}),
        &["401", "403", "503"],
    )
}

pub fn openapi() -> Value {
    operation(
        "openapi",
        "server",
        "This document.",
        ok("OpenAPI 3.1.", json!({"type": "object"})),
        &PUBLIC,
    )
}

pub fn protected_resource() -> Value {
    operation(
        "protectedResource",
        "server",
        "OAuth protected-resource metadata (RFC 9728) for remote MCP clients.",
        ok("The metadata.", r("ProtectedResource")),
        &PUBLIC,
    )
}
