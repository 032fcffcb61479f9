//! `GET /v1/tools`, `GET /v1/tools/{name}`, `GET /v1/tools/export?format=F`: the catalog as
//! the caller's role sees it. A tool outside the role does not exist for the caller (404
//! `unknown_tool`, the same answer as for a name nobody registered).
//!
//! Tool RAG on the export (docs/rag.md): `query=Q[&k=N]` exports the top K tools for the
//! request plus `search_tools`, found by calling `search_tools` through the gateway as the
//! caller (role-checked, audited); `deferred=true` exports the API's deferred-loading form
//! (Anthropic, OpenAI Responses; with `query`, its top K stay loaded), and for the other
//! formats falls back to `query`'s top K. The API does what it is asked: `search_tools`
//! exists only when the catalog exceeds `[rag] threshold`, and without it `query` is refused.
//!
//! Each tool carries its pin state (docs/pinning.md) as the catalog snapshot knows it, with
//! no pin-book query: the listing reads the snapshot only; `GET /v1/tools/{name}` adds when
//! and by whom the definition was pinned (one pin-book read).

use axum::Json;
use axum::extract::State;
use serde::Deserialize;
use serde_json::{Value, json};
use toolgate_gateway::{Arguments, CallRequest};
use toolgate_protocol::export::export_deferred;
use toolgate_protocol::{ErrorCode, ExportFormat, ToolSpec, export as export_as};
use toolgate_registry::pins::format_time;
use toolgate_registry::{Availability, Entry, Snapshot, definition_hash};

use super::extract::{ApiPath, ApiQuery};
use crate::auth::Caller;
use crate::error::ApiError;
use crate::state::AppState;

/// How many hex digits of a definition hash are shown (as `toolgate tools approve-change`).
const HASH_DIGITS: usize = 12;

/// The tool's pin state: `quarantined` (its definition changed since pinned: refused until
/// approved), `pinned` (a pinned source's tool whose definition matches its pin) or
/// `unpinned` (built-in tools; nothing is pinned without a pin book). `hash` is the start of
/// the SHA-256 of the definition the catalog holds: for `pinned` the pin itself, for
/// `quarantined` the changed definition an approval would pin.
fn pin(snap: &Snapshot, e: &Entry) -> Value {
    let state = if matches!(e.availability, Availability::Quarantined(_)) {
        "quarantined"
    } else if snap.is_pinned(e) {
        "pinned"
    } else {
        return json!({"state": "unpinned"});
    };
    let hash = definition_hash(e.spec());
    json!({"state": state, "hash": hash.get(..HASH_DIGITS).unwrap_or(&hash)})
}

/// [`pin`], plus what the pin book holds about the pin: `since` (RFC 3339), `pinned_by` and
/// `pinned_hash`. A pin book that cannot answer leaves them out (the state stands).
async fn pin_detail(state: &AppState, snap: &Snapshot, e: &Entry) -> Value {
    let mut doc = pin(snap, e);
    let Some(book) = state.gateway.catalog().pins().cloned() else {
        return doc;
    };
    if doc["state"] == "unpinned" {
        return doc;
    }
    match book.get(&e.spec().name).await {
        Ok(Some(record)) => {
            let hash = &record.pinned_hash;
            doc["since"] = json!(format_time(record.pinned_at_ms));
            doc["pinned_by"] = json!(record.pinned_by);
            doc["pinned_hash"] = json!(hash.get(..HASH_DIGITS).unwrap_or(hash));
        }
        Ok(None) => {}
        Err(err) => tracing::warn!(tool = %e.spec().name, error = %err, "reading the pin failed"),
    }
    doc
}

fn visible(state: &AppState, caller: &Caller) -> Vec<Entry> {
    state
        .gateway
        .catalog()
        .all()
        .into_iter()
        .filter(|e| state.gateway.visible_to(&caller.role, e))
        .collect()
}

/// One row of the listing.
fn summary(snap: &Snapshot, e: &Entry) -> Value {
    let s = e.spec();
    let mut row = json!({
        "name": s.name,
        "description": s.description,
        "risk": s.risk,
        "source": s.source,
        "availability": e.availability,
        "tags": s.tags,
        "annotations": s.annotations,
        "pin": pin(snap, e),
    });
    if let Some(title) = &s.annotations.title {
        row["title"] = json!(title);
    }
    row
}

pub async fn list(State(state): State<AppState>, caller: Caller) -> Json<Vec<Value>> {
    let snap = state.gateway.catalog().snapshot();
    Json(
        snap.entries()
            .filter(|e| state.gateway.visible_to(&caller.role, e))
            .map(|e| summary(&snap, e))
            .collect(),
    )
}

pub async fn show(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(name): ApiPath<String>,
) -> Result<Json<Value>, ApiError> {
    let snap = state.gateway.catalog().snapshot();
    let entry = snap
        .get(&name)
        .filter(|e| state.gateway.visible_to(&caller.role, e))
        .ok_or_else(|| {
            ApiError::new(
                ErrorCode::UnknownTool,
                format!(
                    "no tool named `{name}` is visible to role `{}`",
                    caller.role
                ),
            )
            .with_hint("GET /v1/tools lists the tools you can call")
        })?;
    let mut doc = serde_json::to_value(entry.spec())
        .map_err(|e| ApiError::internal(format!("serialising tool `{name}`: {e}")))?;
    doc["availability"] = json!(entry.availability);
    doc["pin"] = pin_detail(&state, &snap, entry).await;
    doc["lint"] = Value::Array(state.definition_findings(entry.spec()));
    Ok(Json(doc))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExportParams {
    format: Option<String>,
    /// The user's request: the top K tools for it plus `search_tools`.
    query: Option<String>,
    /// How many tools `query` keeps (the search's default when absent).
    k: Option<u32>,
    /// The API's deferred-loading form.
    #[serde(default)]
    deferred: bool,
}

/// Tool RAG's meta-tool (toolgate-rag's `SEARCH_TOOLS`; this crate does not depend on it).
const SEARCH_TOOLS: &str = "search_tools";

/// The tools `search_tools` finds for `query`, called through the gateway as `caller`.
async fn search(
    state: &AppState,
    caller: &Caller,
    query: &str,
    k: Option<u32>,
) -> Result<Vec<String>, ApiError> {
    if query.trim().is_empty() {
        return Err(ApiError::new(
            ErrorCode::InvalidArguments,
            "`query` is empty: give the user's request in words",
        ));
    }
    let visible = state
        .gateway
        .catalog()
        .get(SEARCH_TOOLS)
        .is_some_and(|e| state.gateway.visible_to(&caller.role, &e));
    if !visible {
        return Err(ApiError::new(
            ErrorCode::InvalidArguments,
            format!(
                "retrieval is not available to role `{}`: search_tools is not in its catalog",
                caller.role
            ),
        )
        .with_hint(
            "search_tools joins the catalog when it holds more than [rag] threshold tools, and the role's allowlist must include it; export without `query` for every tool",
        ));
    }
    let mut args = json!({ "query": query });
    if let Some(k) = k {
        args["k"] = json!(k);
    }
    let request = CallRequest::new(SEARCH_TOOLS, Arguments::Json(args))
        .with_principal(caller.principal.clone())
        .with_role(caller.role.clone())
        .with_session("tools-export");
    let envelope = state.run_call(request).await;
    if let Some(error) = envelope.error {
        return Err(error.into());
    }
    let names = envelope
        .data
        .as_ref()
        .and_then(|d| d.get("tools")?.as_array().cloned())
        .unwrap_or_default()
        .iter()
        .filter_map(|t| t.get("name")?.as_str().map(str::to_owned))
        .collect();
    Ok(names)
}

pub async fn export(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(params): ApiQuery<ExportParams>,
) -> Result<Json<Value>, ApiError> {
    let format: ExportFormat = params
        .format
        .as_deref()
        .ok_or_else(|| "the `format` query parameter is required".to_owned())
        .and_then(str::parse)
        .map_err(|e| {
            ApiError::new(ErrorCode::InvalidArguments, e)
                .with_hint("format is one of openai-chat, openai-responses, anthropic, mcp, gemini")
        })?;
    if params.query.is_none() && !params.deferred {
        let tools = state
            .gateway
            .catalog()
            .export(format, |e| state.gateway.visible_to(&caller.role, e));
        return Ok(Json(tools));
    }
    let visible: Vec<ToolSpec> = visible(&state, &caller)
        .into_iter()
        .filter(Entry::is_available)
        .map(|e| e.spec().clone())
        .collect();
    let found = match &params.query {
        Some(q) => search(&state, &caller, q, params.k).await?,
        None => Vec::new(),
    };
    if params.deferred && format.has_deferred_form() {
        let specs: Vec<&ToolSpec> = visible.iter().filter(|s| s.name != SEARCH_TOOLS).collect();
        let loaded: Vec<&str> = found.iter().map(String::as_str).collect();
        let tools = export_deferred(&specs, &loaded, format)
            .ok_or_else(|| ApiError::internal(format!("no deferred form for {format}")))?;
        return Ok(Json(tools));
    }
    if params.query.is_none() {
        return Err(ApiError::new(
            ErrorCode::InvalidArguments,
            format!("{format} has no deferred-loading form"),
        )
        .with_hint("add `query` (the user's request) for its top K tools plus search_tools; anthropic and openai-responses have a deferred form"));
    }
    // The top K in their rank order, then search_tools.
    let specs: Vec<&ToolSpec> = found
        .iter()
        .filter_map(|n| visible.iter().find(|s| &s.name == n))
        .chain(visible.iter().filter(|s| s.name == SEARCH_TOOLS))
        .collect();
    Ok(Json(export_as(&specs, format)))
}
