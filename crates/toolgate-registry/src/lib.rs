//! The tool catalog (R-REG-1..5): lookup and schema only, never execution.
//!
//! # Layout
//! - [`catalog`]: [`Catalog`], an immutable [`Snapshot`] behind an atomic pointer. Reload
//!   builds a new snapshot and swaps it in; readers never block and never see half a reload.
//! - [`source`]: [`ToolSource`], anything that contributes tools (built-ins, an MCP server).
//! - [`naming`]: the `mcp__{server}__{tool}` rule for external tools (R-REG-4).
//! - [`entry`]: [`Entry`], a tool plus its availability.
//! - [`pins`]: definition pinning (R-REG-5): [`definition_hash`], the [`PinBook`] trait,
//!   [`MemoryPinBook`]. A changed definition of a pinned source's tool is quarantined.
//! - [`lint`]: [`description_flags`], suspicious text in tool descriptions (tool poisoning).
//!
//! ```
//! # use std::sync::Arc;
//! # use async_trait::async_trait;
//! # use serde_json::{json, Value};
//! # use toolgate_core::{Tool, ToolContext, ToolError};
//! # use toolgate_protocol::{ExportFormat, ToolOutput, ToolSpec};
//! use toolgate_registry::Catalog;
//! # struct Echo(ToolSpec);
//! # #[async_trait] impl Tool for Echo {
//! #   fn spec(&self) -> &ToolSpec { &self.0 }
//! #   async fn call(&self, a: Value, _c: ToolContext) -> Result<ToolOutput, ToolError> { Ok(ToolOutput::json(a)) }
//! # }
//! let catalog = Catalog::new();
//! catalog.register(Arc::new(Echo(ToolSpec::new("echo", "Echo.", json!({"type": "object"}))))).unwrap();
//! assert!(catalog.has("echo"));
//! let openai = catalog.export(ExportFormat::OpenAiChat, |_| true);
//! assert_eq!(openai[0]["function"]["name"], "echo");
//! ```

#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)
)]

pub mod catalog;
pub mod entry;
pub mod lint;
pub mod naming;
pub mod pins;
pub mod source;

pub use catalog::{Catalog, CatalogError, Snapshot};
pub use entry::{Availability, Entry};
pub use lint::{Flag, FlagKind, description_flags};
pub use naming::external_tool_name;
pub use pins::{
    DefinitionPart, MemoryPinBook, PinBook, PinChange, PinError, PinRecord, PinVerdict,
    SeenDefinition, definition_hash,
};
pub use source::ToolSource;
