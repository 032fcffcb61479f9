//! The gateway as an MCP server: `/mcp` (Streamable HTTP) and MCP over stdio, one handler
//! for both (rmcp does the protocol: sessions, SSE, `server/discover`, `-32601` for methods
//! not offered).
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
//! - [`span`]: the SERVER span and `mcp.server.operation.duration` of a request.
//! - [`http`]: the `/mcp` route. [`stdio`]: `toolgate serve --stdio`.
//! - [`fast`]: in front of rmcp on `/mcp`, a plain `tools/call` in a session (no progress
//!   token) answered with one `application/json` response instead of an SSE stream; every
//!   other request is rmcp's.
//!
//! # Invariants
//! - Every `tools/call` goes through `Gateway::call`, so it is authorized, validated,
//!   policed, approved and audited like a call from any other front end.
//! - A tool the caller's role cannot see is answered exactly like a tool that does not exist.
//! - Tool failures are `isError` results carrying the error object, never JSON-RPC errors.
//! - A call answered as JSON by [`fast`] and the same call through rmcp get the same
//!   JSON-RPC message: both run [`call::run_call`].

pub mod call;
pub mod caller;
pub mod changes;
pub mod extras;
pub mod fast;
pub mod handler;
pub mod http;
pub mod listening;
pub mod result;
pub mod rounds;
pub mod sessions;
pub mod span;
pub mod stateless;
pub mod stdio;
pub mod tools;

pub use extras::{McpExtras, NoExtras, Requester};
pub use handler::{Identity, Lifecycle, McpHandler, McpOptions};
pub use http::{routes, routes_with};
pub use stdio::{StdioError, serve_io, serve_stdio};
