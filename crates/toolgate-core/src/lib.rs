//! The one trait every tool implements, and what a call hands it.
//!
//! # Layout
//! - [`tool`]: [`Tool`] (spec + `check` + `call`) and [`DynTool`], the shared handle.
//! - [`context`]: [`ToolContext`], who is calling and how to notice cancellation.
//! - [`trace`]: [`TraceContext`], the caller's W3C trace context, passed on upstream.
//! - [`error`]: [`ToolError`], what a tool may fail with, mapped onto the protocol's
//!   closed [`ErrorCode`](toolgate_protocol::ErrorCode) vocabulary in one place.
//!
//! ```
//! use async_trait::async_trait;
//! use serde_json::{json, Value};
//! use toolgate_core::{Tool, ToolContext, ToolError};
//! use toolgate_protocol::{ToolOutput, ToolSpec};
//!
//! struct Echo(ToolSpec);
//!
//! #[async_trait]
//! impl Tool for Echo {
//!     fn spec(&self) -> &ToolSpec { &self.0 }
//!     async fn call(&self, args: Value, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
//!         Ok(ToolOutput::json(args))
//!     }
//! }
//! let echo = Echo(ToolSpec::new("echo", "Returns its arguments.", json!({"type": "object"})));
//! assert_eq!(echo.spec().name, "echo");
//! ```

#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)
)]

pub mod caller;
pub mod context;
pub mod error;
pub mod progress;
pub mod tool;
pub mod trace;

pub use caller::{CallerChannel, CallerError, CallerLink, CallerQuestion, CallerRequest};
pub use context::ToolContext;
pub use error::ToolError;
pub use progress::{ProgressSink, ProgressUpdate};
pub use tokio_util::sync::CancellationToken;
pub use tool::{DynTool, Tool};
pub use trace::TraceContext;
