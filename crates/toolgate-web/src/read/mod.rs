//! `url_read`, one concern per file, in the order a call meets them:
//! - [`tool`]: [`UrlReadTool`] — arguments, the spec, status handling, paging.
//! - [`fetch`]: the capped, timed, cancellable GET through the guarded client.
//! - [`charset`]: bytes → text (BOM, `Content-Type`, `<meta charset>`, fallbacks).
//! - [`convert`]: content type → HTML, JSON or text conversion; binary refused.
//! - [`depth`]: the nesting estimate that keeps hostile pages away from the parser.
//! - [`html`]: HTML → readable Markdown (links absolute) or text; [`text`](mod@text): the
//!   plain-text renderer.

pub mod charset;
pub mod convert;
pub mod depth;
pub mod fetch;
pub mod html;
pub mod text;
pub mod tool;

pub use tool::UrlReadTool;
