//! The MCP endpoint against peers we did not write: Python and fastmcp clients over stdio and
//! HTTP, and the official conformance suite. The peers are installed by scripts/test.sh;
//! a missing one fails the test with the command that installs it.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

#[path = "mcp/conformance.rs"]
mod conformance;
#[path = "mcp/interop.rs"]
mod interop;
#[path = "mcp/peers.rs"]
mod peers;
