//! The MCP endpoint against peers we did not write: Python and fastmcp clients over stdio and
//! HTTP. The peers are installed by scripts/test.sh; a missing one fails the test with the
//! command that installs it. The official conformance suite runs against the product
//! (`toolgate serve`, crates/toolgate-cli/tests/suite/mcp_conformance.rs), with the fixture
//! server of this crate's examples behind it.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::print_stderr
)]

#[path = "mcp/interop.rs"]
mod interop;
#[path = "mcp/peers.rs"]
mod peers;
