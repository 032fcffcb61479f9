//! Pure data of toolgate: no IO, no async, serde only.
//!
//! # Layout
//! - [`spec`]: [`ToolSpec`], [`Risk`], [`Annotations`] — what a tool *is* (R-REG-1).
//! - [`error`]: [`ErrorCode`], the one closed vocabulary of failures, and [`CallError`].
//! - [`output`]: [`ToolOutput`] and [`ContentBlock`] — what a tool returns.
//! - [`envelope`]: [`Envelope`], the `{ok, data | error}` shape every front end prints (R-EXE-2).
//! - [`export`](mod@export): the five provider formats a catalog is exported in (R-REG-2).
//! - [`identity`]: [`Principal`], [`Role`], [`SessionId`] — who acts, as what, where.
//!
//! ```
//! use toolgate_protocol::{ExportFormat, Risk, ToolSpec, export};
//! let spec = ToolSpec::new("get_weather", "Current weather for a city.", serde_json::json!({
//!     "type": "object",
//!     "properties": {"city": {"type": "string"}},
//!     "required": ["city"]
//! })).with_risk(Risk::Read);
//! let tools = export(&[&spec], ExportFormat::Anthropic);
//! assert_eq!(tools[0]["input_schema"]["required"][0], "city");
//! ```

#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)
)]

pub mod canonical;
pub mod envelope;
pub mod error;
pub mod export;
pub mod identity;
pub mod output;
pub mod spec;

pub use canonical::canonical_json;
pub use envelope::{Envelope, Governance};
pub use error::{CallError, ErrorCode};
pub use export::{ExportFormat, export};
pub use identity::{Principal, Role, SessionId};
pub use output::{ContentBlock, ToolOutput};
pub use spec::{Annotations, Risk, SpecError, ToolSpec};
