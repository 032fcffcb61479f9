//! The running system: what `toolgate.toml` says ([`config`]), how that becomes stores, a
//! catalog, a gateway, an MCP hub and Tool RAG ([`assemble`], [`stores`], [`mcp`], [`rag`]),
//! and the [`Runtime`] that owns them from [`Runtime::open`] to [`Runtime::shutdown`]. The
//! binary (`toolgate-cli`) is left with argument parsing, printing and exit codes; an
//! embedding program uses this crate the same way.
//!
//! # Layout
//! - [`config`]: the file's schema, its cross-section checks, [`Config`] (resolved paths).
//! - [`stores`]: the data directory's stores and the audit key.
//! - [`assemble`]: the built-in tools (confined to the workspace) and the gateway.
//! - [`mcp`]: which MCP servers start, with which options; the quarantine watcher.
//! - [`sandbox`]: the confinement of stdio MCP servers.
//! - [`elicit`]: MCP elicitation through the gateway's approval desk.
//! - [`rag`]: Tool RAG over the catalog (`search_tools`, the agent's selector).
//! - [`telemetry`]: the OpenTelemetry SDK from `[telemetry]`, and the runtime's gauges.
//! - [`runtime`]: the [`Runtime`] itself.

#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)
)]

pub mod assemble;
pub mod config;
mod egress;
pub mod elicit;
pub mod federated;
pub mod mcp;
pub mod rag;
pub mod runtime;
pub mod sandbox;
pub mod serve;
pub mod stores;
pub mod telemetry;

pub use config::{CONFIG_FILE, Config, DEFAULT_DATA_DIR, FileConfig, Overrides};
pub use mcp::McpServers;
pub use runtime::{Lifetime, Runtime, RuntimeOptions};
pub use serve::Listeners;
