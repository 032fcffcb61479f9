//! toolgate-mcp-client against real MCP servers we did not write (shared/interop/TESTBEDS.md):
//! server-everything, server-filesystem and server-memory (node, tests/peers) and the Python
//! SDK's MCPServer (.venv), all installed by scripts/test.sh. A missing peer fails loudly.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

#[path = "suite/conformance.rs"]
mod conformance;
#[path = "suite/egress.rs"]
mod egress;
#[path = "suite/elicitation.rs"]
mod elicitation;
#[path = "suite/everything.rs"]
mod everything;
#[path = "suite/lifecycle.rs"]
mod lifecycle;
#[path = "suite/limits.rs"]
mod limits;
#[path = "suite/oauth.rs"]
mod oauth;
#[path = "suite/oauth_server.rs"]
mod oauth_server;
#[path = "suite/peers.rs"]
mod peers;
#[path = "suite/python.rs"]
mod python;
#[path = "suite/reference.rs"]
mod reference;
