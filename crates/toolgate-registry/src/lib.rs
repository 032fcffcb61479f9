//! The tool catalog (R-REG-1..4): lookup and schema only, never execution.
//!
//! # Layout
//! - [`catalog`]: [`Catalog`], an immutable [`Snapshot`] behind an atomic pointer. Reload
//!   builds a new snapshot and swaps it in; readers never block and never see half a reload.
//! - [`source`]: [`ToolSource`], anything that contributes tools (built-ins, an MCP server).
//! - [`naming`]: the `mcp__{server}__{tool}` rule for external tools (R-REG-4).
//! - [`entry`]: [`Entry`], a tool plus its availability.
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

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

pub mod catalog;
pub mod entry;
pub mod naming;
pub mod source;

pub use catalog::{Catalog, CatalogError, Snapshot};
pub use entry::{Availability, Entry};
pub use naming::external_tool_name;
pub use source::ToolSource;
