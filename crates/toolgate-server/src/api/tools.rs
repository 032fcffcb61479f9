//! `GET /v1/tools`, `GET /v1/tools/{name}`, `GET /v1/tools/export?format=F`: the catalog as
//! the caller's role sees it. A tool outside the role does not exist for the caller (404
//! `unknown_tool`, the same answer as for a name nobody registered).

use axum::Json;
use axum::extract::State;
use serde::Deserialize;
use serde_json::{Value, json};
use toolgate_protocol::{ErrorCode, ExportFormat};
use toolgate_registry::Entry;

use super::extract::{ApiPath, ApiQuery};
use crate::auth::Caller;
use crate::error::ApiError;
use crate::state::AppState;

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
fn summary(e: &Entry) -> Value {
    let s = e.spec();
    let mut row = json!({
        "name": s.name,
        "description": s.description,
        "risk": s.risk,
        "source": s.source,
        "availability": e.availability,
        "tags": s.tags,
        "annotations": s.annotations,
    });
    if let Some(title) = &s.annotations.title {
        row["title"] = json!(title);
    }
    row
}

pub async fn list(State(state): State<AppState>, caller: Caller) -> Json<Vec<Value>> {
    Json(visible(&state, &caller).iter().map(summary).collect())
}

pub async fn show(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(name): ApiPath<String>,
) -> Result<Json<Value>, ApiError> {
    let entry = state
        .gateway
        .catalog()
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
    Ok(Json(doc))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExportParams {
    format: Option<String>,
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
    let tools = state
        .gateway
        .catalog()
        .export(format, |e| state.gateway.visible_to(&caller.role, e));
    Ok(Json(tools))
}
