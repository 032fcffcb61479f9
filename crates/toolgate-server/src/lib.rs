//! `toolgate serve`: the gateway over HTTP — an MCP endpoint, a JSON API with an OpenAPI
//! document, and a web console — every call through the same [`Gateway`](toolgate_gateway::Gateway).
//!
//! # Layout
//! - [`app`]: the router (guards + routes) and [`serve`] with graceful shutdown.
//! - [`accept`]: the accept loop — header read timeout, connection cap.
//! - [`auth`]: Host/Origin validation (DNS rebinding) and bearer-token authentication.
//! - [`api`]: `/v1/*`, `/openapi.json`, health and readiness.
//! - [`mcp`]: `/mcp` (Streamable HTTP): the MCP endpoint (`toolgate-mcp-server`, which also
//!   serves stdio) behind the server's guards.
//! - [`hooks`]: `/hooks/*`, what Slack and Telegram POST for the approval channels.
//! - [`console`]: the web console at `/`, assets embedded in the binary.
//! - [`config`]: `[server]` in toolgate.toml.
//! - [`error`]: the one error body and the code → HTTP status mapping.
//! - [`state`]: [`AppState`], shared by every handler.

#![recursion_limit = "256"]
#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)
)]

pub mod accept;
pub mod api;
pub mod app;
pub mod auth;
pub mod config;
pub mod console;
pub mod error;
pub mod hooks;
pub mod mcp;
pub mod state;
/// The caller's W3C trace context (HTTP headers, MCP `_meta`), shared with the MCP endpoint.
pub use toolgate_mcp_server::trace;

pub use app::{ServeError, router, serve};
pub use config::{ServerConfig, ServerConfigError};
pub use error::ApiError;
pub use state::{AppState, Inner};
