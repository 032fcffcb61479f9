//! `/mcp`: the MCP endpoint ([`toolgate_mcp_server`]) behind the server's guards — the
//! route ([`http`]) and, in front of rmcp, the JSON fast path for a plain `tools/call` in a
//! session ([`fast`]). The endpoint's own types are re-exported here for the server's users.
//!
//! # Layout
//! - [`http`]: the `/mcp` route: the caller from authentication, sessions, the fast path.
//! - [`fast`]: a plain `tools/call` in a session (no progress token) answered with one
//!   `application/json` response instead of an SSE stream; every other request is rmcp's.

pub mod fast;
pub mod http;

pub use http::{routes, routes_with};
pub use toolgate_mcp_server::{
    Identity, Lifecycle, McpExtras, McpHandler, McpOptions, NoExtras, Requester, StdioError,
    serve_io, serve_stdio, sessions,
};
