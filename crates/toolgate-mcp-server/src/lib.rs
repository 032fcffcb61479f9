//! The gateway as an MCP server — the MCP endpoint of `toolgate serve`: one handler for
//! Streamable HTTP and stdio (rmcp does the protocol: sessions, SSE, `server/discover`,
//! `-32601` for methods not offered). The HTTP route (`/mcp`, with authentication and the
//! JSON fast path) is `toolgate-server`'s; this crate knows no web framework.
//!
//! # Layout
//! - [`handler`]: [`McpHandler`] — `tools/list` is the caller's role's view of the catalog,
//!   `tools/call` one `Gateway::call`, the rest delegated to [`McpExtras`].
//! - [`call`]: a `tools/call` as a `CallRequest`; waiting for approval with progress.
//! - [`caller`]: the calling client as a tool reaches it (logs, sampling, elicitation,
//!   roots of a federated server pass through it).
//! - [`result`]: the envelope → `CallToolResult` mapping.
//! - [`stateless`], [`rounds`]: `tools/call` of a stateless 2026-07-28 client; what its tool
//!   asks of the client mid-call becomes an `InputRequiredResult` (SEP-2322).
//! - [`tools`]: the visible tools in MCP shape; hidden tools look unknown.
//! - [`changes`]: `notifications/tools/list_changed` when a session's visible tools change.
//! - [`extras`]: [`McpExtras`] (resources, prompts, completions, logging); empty in
//!   production.
//! - [`listening`]: sessions whose client hears from running tools (their calls keep rmcp's
//!   path).
//! - [`sessions`]: sessions any replica can continue (the cluster store).
//! - [`span`]: the SERVER span and `mcp.server.operation.duration` of a request;
//!   [`trace`]: the caller's W3C trace context from `_meta` or the HTTP headers.
//! - [`stdio`]: `toolgate serve --stdio`.
//!
//! # Invariants
//! - Every `tools/call` goes through `Gateway::call`, so it is authorized, validated,
//!   policed, approved and audited like a call from any other front end.
//! - A tool the caller's role cannot see is answered exactly like a tool that does not exist.
//! - Tool failures are `isError` results carrying the error object, never JSON-RPC errors.
//! - A call answered as JSON by the server's fast path and the same call through rmcp get
//!   the same JSON-RPC message: both run [`call::run_call`].

#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)
)]

pub mod call;
pub mod caller;
pub mod changes;
pub mod extras;
pub mod handler;
pub mod listening;
pub mod result;
pub mod rounds;
pub mod sessions;
pub mod span;
pub mod stateless;
pub mod stdio;
pub mod tools;
pub mod trace;

pub use extras::{McpExtras, NoExtras, Requester};
pub use handler::{Identity, Lifecycle, McpHandler, McpOptions};
pub use stdio::{StdioError, serve_io, serve_stdio};
