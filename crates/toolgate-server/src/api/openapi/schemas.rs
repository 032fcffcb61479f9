//! `components.schemas` of the OpenAPI document: every request and response body. Enums that
//! mirror Rust enums (error codes, risks, export formats) are generated from them, so the
//! document cannot drift from the code.

use serde_json::{Value, json};
use toolgate_protocol::{ErrorCode, ExportFormat};

fn r(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}

fn nullable(t: &str) -> Value {
    json!({"type": [t, "null"]})
}

pub fn schemas() -> Value {
    let codes: Vec<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
    let formats: Vec<&str> = ExportFormat::ALL.iter().map(|f| f.as_str()).collect();
    let outcomes: Vec<&str> = ["started", "ok"]
        .into_iter()
        .chain(codes.iter().copied())
        .collect();
    let mut all = json!({
        "Outcome": {"type": "string", "enum": outcomes,
            "description": "How an audited event ended: `started` (an attempt), `ok`, or an error code."},
        "ErrorCode": {"type": "string", "enum": codes,
            "description": "The closed vocabulary of failures (docs/errors.md)."},
        "CallError": {
            "type": "object",
            "required": ["code", "message", "retryable"],
            "properties": {
                "code": r("ErrorCode"),
                "message": {"type": "string"},
                "retryable": {"type": "boolean"},
                "hint": {"type": "string"},
                "details": {"description": "Code-specific facts, e.g. `approval_id` for approval_required."}
            }
        },
        "Error": {
            "type": "object",
            "description": "The one error body of every non-2xx answer.",
            "required": ["error"],
            "properties": {"error": r("CallError")}
        },
        "Risk": {"type": "string", "enum": ["read", "write", "dangerous"]},
        "ExportFormat": {"type": "string", "enum": formats},
        "Availability": {
            "type": "object",
            "required": ["state"],
            "properties": {
                "state": {"type": "string", "enum": ["available", "unavailable", "quarantined"]},
                "reason": {"type": "string"}
            }
        },
        "Pin": {
            "type": "object",
            "description": "The tool's definition pin (docs/pinning.md) as the catalog knows it.",
            "required": ["state"],
            "properties": {
                "state": {
                    "type": "string",
                    "enum": ["pinned", "quarantined", "unpinned"],
                    "description": "`pinned`: matches its pin. `quarantined`: changed since pinned, refused until `toolgate tools approve-change`. `unpinned`: built-in tools (only MCP servers' tools are pinned)."
                },
                "hash": {"type": "string", "description": "First 12 hex digits of the SHA-256 of the definition the catalog holds (for `quarantined`, the changed one)."},
                "since": {"type": "string", "format": "date-time", "description": "When the pin was made (`GET /v1/tools/{name}` only)."},
                "pinned_by": {"type": "string", "description": "`first sight` or the approving operator (`GET /v1/tools/{name}` only)."},
                "pinned_hash": {"type": "string", "description": "First 12 hex digits of the pinned definition's hash (`GET /v1/tools/{name}` only)."}
            }
        },
        "McpServer": {
            "type": "object",
            "description": "A federated MCP server, as `toolgate mcp status --json` shows it.",
            "required": ["name", "source", "transport", "state", "tools"],
            "properties": {
                "name": {"type": "string"},
                "source": {"type": "string", "description": "The catalog source of its tools: `mcp:{name}`."},
                "transport": {"type": "string", "enum": ["stdio", "streamable_http"]},
                "state": {"type": "string", "enum": ["disabled", "connecting", "ready", "failed", "stopped"]},
                "error": {"type": "string", "description": "Why the last attempt failed (`failed` only)."},
                "retry_at": {"type": "string", "format": "date-time", "description": "When the next attempt starts (`failed` only)."},
                "protocol_version": {"type": ["string", "null"]},
                "tools": {"type": "integer", "description": "Tools federated into the catalog."},
                "restarts": {"type": "integer"},
                "polling": {"type": "string", "description": "Why its list changes are polled (every 60 s) rather than heard; absent while they are heard."}
            }
        },
        "Annotations": {
            "type": "object",
            "description": "MCP tool annotations (untrusted hints).",
            "properties": {
                "title": {"type": "string"},
                "readOnlyHint": {"type": "boolean"},
                "destructiveHint": {"type": "boolean"},
                "idempotentHint": {"type": "boolean"},
                "openWorldHint": {"type": "boolean"}
            }
        },
        "ToolSummary": {
            "type": "object",
            "required": ["name", "description", "risk", "source", "availability", "tags", "annotations", "pin"],
            "properties": {
                "name": {"type": "string"},
                "title": {"type": "string"},
                "description": {"type": "string"},
                "risk": r("Risk"),
                "source": {"type": "string", "description": "`builtin` or the MCP server the tool comes from."},
                "availability": r("Availability"),
                "tags": {"type": "array", "items": {"type": "string"}},
                "annotations": r("Annotations"),
                "pin": r("Pin")
            }
        },
        "Tool": {
            "type": "object",
            "description": "A tool's full definition and whether it can be called now.",
            "required": ["name", "description", "input_schema", "risk", "source", "availability", "pin"],
            "properties": {
                "name": {"type": "string"},
                "description": {"type": "string"},
                "input_schema": {"type": "object", "description": "JSON Schema 2020-12 of the arguments."},
                "output_schema": {"type": "object"},
                "risk": r("Risk"),
                "annotations": r("Annotations"),
                "source": {"type": "string"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "availability": r("Availability"),
                "pin": r("Pin"),
                "lint": {
                    "type": "array",
                    "items": r("LintFinding"),
                    "description": "What in this definition will make a model guess (`toolgate tools lint`, docs/lint.md); empty when nothing was found."
                }
            }
        },
        "LintFinding": {
            "type": "object",
            "description": "One finding of the tool-definition linter, with its concrete fix.",
            "required": ["tool", "rule", "severity", "message", "fix"],
            "properties": {
                "tool": {"type": "string"},
                "rule": {"type": "string", "description": "The rule's id (docs/lint.md)."},
                "severity": {"type": "string", "enum": ["error", "warning", "note"]},
                "path": {"type": "string", "description": "JSON pointer into the input schema, when the finding is about a parameter."},
                "message": {"type": "string"},
                "fix": {"type": "string", "description": "What to change."},
                "related": {"type": "string", "description": "The other tool of a confusable pair."}
            }
        },
        "CallRequest": {
            "type": "object",
            "required": ["tool"],
            "additionalProperties": false,
            "properties": {
                "tool": {"type": "string"},
                "arguments": {
                    "description": "A JSON object, or a string holding one (as a model wrote it). Default {}. Any other JSON value is taken too — as a model's malformed call it is answered (and audited) as `invalid_arguments` in the envelope, not refused unaudited with 400."
                },
                "session": {"type": ["string", "null"], "description": "Session-scoped approvals apply within it. Default (or null) `http`."},
                "idempotency_key": {"type": ["string", "null"], "description": "Makes a retried write call act once."},
                "wait_for_approval": {"type": ["boolean", "null"], "description": "Wait for a human decision instead of answering approval_required at once. Default: [approvals] wait."},
                "keep_approval": {"type": "boolean", "description": "If this call stops waiting for its approval (cancelled, client gone), keep the request pending for the next identical call. Default false: the request is abandoned and can no longer be approved."}
            }
        },
        "Envelope": {
            "type": "object",
            "description": "The result of one call: `{ok: true, call_id, data}` or `{ok: false, call_id, error}`.",
            "required": ["ok", "call_id"],
            "properties": {
                "ok": {"type": "boolean"},
                "call_id": {"type": "string"},
                "data": {"description": "The tool's result."},
                "content": {"type": "array", "items": {"type": "object", "required": ["type"],
                    "properties": {"type": {"type": "string", "enum": ["text", "image", "audio", "resource"]}}}},
                "truncated": {
                    "type": "object",
                    "description": "Set when the result was cut; page the rest with the read_result tool.",
                    "required": ["total_bytes", "returned_bytes"],
                    "properties": {
                        "total_bytes": {"type": "integer"},
                        "returned_bytes": {"type": "integer"},
                        "result_id": {"type": "string"}
                    }
                },
                "error": r("CallError")
            }
        },
        "Approval": {
            "type": "object",
            "required": ["id", "status", "tool", "risk", "principal", "session", "role", "arguments",
                "arguments_view", "arguments_hidden", "requires_confirmation", "created_at", "expires_at", "created_at_ms", "expires_at_ms",
                "decided_by", "decided_at", "scope", "reason", "consumed"],
            "properties": {
                "id": {"type": "string", "pattern": "^apr_[0-9a-f]{12}$"},
                "status": {"type": "string", "enum": ["pending", "approved", "denied", "expired", "abandoned"], "description": "`abandoned`: the call waiting for it stopped waiting before anyone decided; it can no longer be approved."},
                "tool": {"type": "string"},
                "risk": r("Risk"),
                "principal": {"type": "string"},
                "session": {"type": "string"},
                "role": {"type": "string"},
                "arguments": {"description": "The call's whole arguments, secrets masked, never shortened: what runs if approved."},
                "arguments_view": {"description": "`arguments` with every string made visible: whitespace runs over 16 characters folded into markers such as `⟨2100 spaces⟩`, control, invisible and bidi characters named (`⟨CR⟩`, `⟨ESC⟩`, `⟨U+202E⟩`), a literal `⟨` as `⟨U+27E8⟩`."},
                "arguments_hidden": {"type": "boolean", "description": "Whether `arguments_view` differs from `arguments`: some string hides text from a plain rendering."},
                "requires_confirmation": {"type": "boolean", "description": "Approving needs the tool name typed in `confirm`."},
                "created_at": {"type": "string", "format": "date-time"},
                "expires_at": {"type": "string", "format": "date-time"},
                "created_at_ms": {"type": "integer"},
                "expires_at_ms": {"type": "integer"},
                "decided_by": nullable("string"),
                "decided_via": {"type": ["string", "null"], "description": "The channel the decision came through (`slack:ops`, `telegram:oncall`); null for the console, the API and the CLI."},
                "decided_at": {"type": ["string", "null"], "format": "date-time"},
                "scope": {"type": ["string", "null"], "enum": ["once", "session", "always", null]},
                "reason": nullable("string"),
                "consumed": {"type": "boolean", "description": "An approved request lets exactly one call through; set once it did."},
                "issuer": {"type": ["string", "null"], "description": "Who vouched for the caller: the access token's `iss`, or `toolgate`."},
                "subject": {"type": ["string", "null"], "description": "The caller as the issuer names it (`sub`, or the token id)."}
            }
        },
        "Decision": {
            "type": "object",
            "required": ["approve"],
            "additionalProperties": false,
            "properties": {
                "approve": {"type": "boolean"},
                "scope": {"type": "string", "enum": ["once", "session", "always"], "default": "once"},
                "pattern": {"type": "object", "description": "For scope always: argument globs, e.g. {\"path\": \"src/*\"}. Default: exactly these arguments."},
                "confirm": {"type": "string", "description": "The tool name, typed, for requests that require confirmation."},
                "reason": {"type": "string"}
            }
        },
        "AuditRecord": {
            "type": "object",
            "required": ["seq", "hash", "kind", "ts", "call_id", "session", "principal", "role", "tool", "arguments", "outcome"],
            "properties": {
                "seq": {"type": "integer"},
                "hash": {"type": "string"},
                "kind": {"type": "string", "enum": ["attempt", "outcome"]},
                "ts": {"type": "string", "format": "date-time"},
                "call_id": {"type": "string"},
                "session": {"type": "string"},
                "principal": {"type": "string"},
                "role": {"type": "string"},
                "tool": {"type": "string"},
                "source": {"type": "string"},
                "risk": r("Risk"),
                "arguments": {"description": "Redacted."},
                "outcome": r("Outcome"),
                "error": {"type": "string"},
                "result": {},
                "duration_us": {"type": "integer"},
                "approver": {"type": "string"},
                "approval_id": {"type": "string"},
                "issuer": {"type": "string", "description": "Who vouched for the caller: the access token's `iss`, or `toolgate`."},
                "subject": {"type": "string", "description": "The caller as the issuer names it (`sub`, or the token id)."},
                "policy_rule": {"type": "string", "description": "The [[policy.rules]] rule that decided the call."}
            }
        },
        "VerifyReport": {
            "type": "object",
            "required": ["ok", "records", "head", "first_bad"],
            "properties": {
                "ok": {"type": "boolean"},
                "records": {"type": "integer", "description": "Records verified before the first bad one."},
                "head": nullable("string"),
                "first_bad": {
                    "type": ["object", "null"],
                    "required": ["line", "seq", "reason"],
                    "properties": {
                        "line": {"type": "integer"},
                        "seq": nullable("integer"),
                        "reason": {"type": "string"}
                    }
                }
            }
        },
        "Health": {
            "type": "object",
            "required": ["status", "uptime_secs"],
            "properties": {"status": {"const": "ok"}, "uptime_secs": {"type": "integer"}}
        },
        "Ready": {
            "type": "object",
            "required": ["ready", "checks"],
            "properties": {
                "ready": {"type": "boolean"},
                "checks": {
                    "type": "object",
                    "properties": {"audit": {"type": "string"}, "approvals": {"type": "string"}},
                    "description": "`ok`, or what failed."
                },
                "mcp_servers": {
                    "type": "array",
                    "items": r("McpServer"),
                    "description": "Operators only: the federated MCP servers, in config order. Shown, not checked: a server that is down makes its tools unavailable, never the gateway unready."
                }
            }
        },
        "Me": {
            "type": "object",
            "required": ["principal", "role", "operator"],
            "properties": {
                "principal": {"type": "string"},
                "role": {"type": "string"},
                "operator": {"type": "boolean"}
            }
        },
        "ProtectedResource": {
            "type": "object",
            "description": "RFC 9728 OAuth protected-resource metadata.",
            "required": ["resource", "authorization_servers", "bearer_methods_supported"],
            "properties": {
                "resource": {"type": "string"},
                "authorization_servers": {"type": "array", "items": {"type": "string"}},
                "scopes_supported": {"type": "array", "items": {"type": "string"}},
                "bearer_methods_supported": {"type": "array", "items": {"type": "string"}},
                "resource_name": {"type": "string"}
            }
        }
    });
    if let (Some(all), Value::Object(tokens)) = (all.as_object_mut(), token_schemas()) {
        all.extend(tokens);
    }
    if let (Some(all), Value::Object(talk)) = (all.as_object_mut(), super::conversations::schemas())
    {
        all.extend(talk);
    }
    all
}

/// The bodies of `/v1/tokens`.
fn token_schemas() -> Value {
    json!({
        "Token": {
            "type": "object",
            "required": ["id", "principal", "role", "operator", "state", "note", "created_at", "created_by",
                "expires_at", "revoked_at", "last_used_at", "replaces"],
            "properties": {
                "id": {"type": "string", "pattern": "^tok_[0-9a-f]{12}$"},
                "principal": {"type": "string"},
                "role": {"type": "string"},
                "operator": {"type": "boolean"},
                "state": {"type": "string", "enum": ["active", "revoked", "expired"]},
                "note": nullable("string"),
                "created_at": {"type": "string", "format": "date-time"},
                "created_by": {"type": "string"},
                "expires_at": {"type": ["string", "null"], "format": "date-time"},
                "revoked_at": {"type": ["string", "null"], "format": "date-time"},
                "last_used_at": {"type": ["string", "null"], "format": "date-time", "description": "Written every second, not at each use."},
                "replaces": {"type": ["string", "null"], "description": "The token this one replaced (rotation)."}
            }
        },
        "IssuedToken": {
            "allOf": [r("Token"), {
                "type": "object",
                "required": ["token"],
                "properties": {"token": {"type": "string", "pattern": "^tg_[0-9a-f]{64}$", "description": "Shown this once; only its SHA-256 is stored."}}
            }]
        },
        "NewToken": {
            "type": "object",
            "required": ["principal", "role"],
            "additionalProperties": false,
            "properties": {
                "principal": {"type": "string", "pattern": "\\S", "description": "Not blank."},
                "role": {"type": "string", "description": "A configured role (404 otherwise)."},
                "operator": {"type": "boolean", "default": false},
                "note": {"type": "string"},
                "expires_in_secs": {"type": "integer", "minimum": 1, "maximum": 315360000}
            }
        },
        "Rotation": {
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "grace_secs": {"type": "integer", "minimum": 0, "maximum": 315360000, "default": 0, "description": "How long the old token keeps working."}
            }
        }
    })
}
