//! The MCP client: any MCP server's tools, federated into the toolgate catalog (R-MCP-1,
//! R-MCP-2, R-MCP-5, R-REG-4).
//!
//! # Layout
//! - [`auth`]: OAuth 2.1 for HTTP servers — [`auth::login()`] (`toolgate mcp login`), tokens in
//!   the store, every OAuth request through the SSRF guard.
//! - [`config`]: [`ServerConfig`], one `[[mcp.servers]]` table, and its validation.
//! - [`connect`]: transports (stdio child process, Streamable HTTP through
//!   [`connect::http_client`], the SSRF-guarded `toolgate-net` client under the hub's
//!   `[egress]` policy, R-MCP-4) and protocol-era negotiation (2026-07-28
//!   `server/discover`, falling back to 2025-11-25 `initialize`).
//! - [`tool`]: [`McpTool`], a server's tool as a toolgate `Tool` (naming, risk, calls with
//!   timeout and cancellation).
//! - [`content`]: an MCP `CallToolResult` as a `ToolOutput`, every content type kept.
//! - `supervisor`: one supervised server — restarts with backoff, re-lists on
//!   `list_changed`, marks its tools unavailable while down.
//! - `inbound`: what toolgate answers when a server talks first (progress, logs, list
//!   changes, resource updates, sampling and elicitation passed to the caller).
//! - [`hub`]: [`McpHub`], all servers started in parallel; status, events, shutdown;
//!   [`HubOptions`] (backoff and the egress policy).
//! - [`sandbox`]: [`SandboxSpec`], a stdio server's `sandbox` table, and [`StdioSandbox`],
//!   the confinement the embedding program supplies.
//! - [`transport`]: the stdio transport of a child server, which fails a call at once when
//!   its response is over [`transport::MAX_MESSAGE_BYTES`] or does not decode.
//! - [`status`]: [`ServerStatus`] and [`McpEvent`].
//! - [`error`]: [`ConfigError`] and [`ConnectError`].
//!
//! ```no_run
//! use std::sync::Arc;
//! use toolgate_mcp_client::{McpHub, RetryPolicy, ServerConfig, ServerState};
//! use toolgate_registry::Catalog;
//!
//! # async fn demo() -> Result<(), toolgate_mcp_client::ConfigError> {
//! let catalog = Arc::new(Catalog::new());
//! let files = ServerConfig::stdio("files", "node").with_args(["server-filesystem.js", "/srv"]);
//! let hub = McpHub::start(vec![files], Arc::clone(&catalog), RetryPolicy::default()).await?;
//! assert!(catalog.has("mcp__files__read_file"));
//! assert_eq!(hub.status()[0].state, ServerState::Ready);
//! hub.shutdown().await;
//! # Ok(()) }
//! ```

#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)
)]

mod active;
pub mod auth;
pub mod config;
pub mod connect;
pub mod content;
pub mod elicit;
pub mod error;
pub mod federation;
pub mod hub;
mod inbound;
mod link;
mod offers;
pub mod sandbox;
mod span;
pub mod status;
mod subscribe;
mod supervisor;
pub mod tool;
pub mod transport;

pub use config::{
    ClientRequests, Endpoint, NamePrefix, Naming, ProtocolChoice, ServerConfig, validate_servers,
};
pub use elicit::{ElicitationAnswer, ElicitationRequest, Elicitor};
pub use error::{ConfigError, ConnectError};
pub use hub::{HubOptions, McpHub};
pub use sandbox::{SandboxChoice, SandboxError, SandboxSpec, SandboxedCommand, StdioSandbox};
pub use status::{McpEvent, ServerState, ServerStatus, TransportKind};
pub use supervisor::RetryPolicy;
pub use tool::McpTool;
