//! The MCP endpoint `/mcp` (Streamable HTTP) and MCP over stdio.
//! (Skeleton: being built.)

use axum::Router;

use crate::state::AppState;

pub fn routes() -> Router<AppState> {
    Router::new()
}
