//! The browser tools of toolgate (R-ACT-4): Debian's Chromium driven over the Chrome DevTools
//! Protocol, one isolated browser per toolgate session, every request SSRF-guarded.
//!
//! Two tools, because risk belongs to a tool spec: `browser_read` (navigate, snapshot,
//! screenshot, back, scroll, close — risk read) and `browser_act` (click, type, press — risk
//! write). Page text reaches the model only inside untrusted-content markers.
//!
//! # Layout
//! - [`config`]: [`BrowserConfig`], the `[browser]` table (plus the `[egress]` policy).
//! - [`origin`]: [`AllowedOrigin`], one `allow_origins` entry.
//! - [`guard`]: [`RequestGuard`], the one request decision; enforced by CDP `Fetch`
//!   interception of every request ([`guard::intercept`]) and by the loopback proxy all of
//!   Chromium's connections go through ([`guard::proxy`]).
//! - [`session`]: launching a guarded Chromium with a temporary profile; [`SessionPool`],
//!   one browser per session id, idle ones closed.
//! - `actions`: navigate, snapshot, screenshot, back, scroll, click, type, press.
//! - [`snapshot`]: the snapshot (text + indexed interactive elements) and its rendering.
//! - [`tool`]: the two [`Tool`](toolgate_core::Tool)s and [`browser_tools`].
//! - [`error`]: [`BrowserError`] → [`ToolError`](toolgate_core::ToolError) in one place.
//!
//! ```
//! use toolgate_browser::{BrowserConfig, browser_tools};
//! let cfg = BrowserConfig { enabled: true, ..BrowserConfig::default() };
//! let tools = browser_tools(&cfg); // no browser starts until the first call
//! let names: Vec<&str> = tools.iter().map(|t| t.spec().name.as_str()).collect();
//! assert_eq!(names, ["browser_read", "browser_act"]);
//! ```

#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)
)]

mod actions;
pub mod config;
pub mod error;
pub mod guard;
pub mod origin;
pub mod session;
pub mod snapshot;
pub mod tool;

pub use actions::{ElementRef, png_size};
pub use config::{BrowserConfig, BrowserSandbox, DEFAULT_CHROMIUM};
pub use error::{BrowserError, ConfigError};
pub use guard::{GuardRefusal, Refusal, RequestGuard};
pub use origin::AllowedOrigin;
pub use session::SessionPool;
pub use tool::{
    BrowserActTool, BrowserReadTool, browser_tools, browser_tools_with_lookup,
    browser_tools_with_pool,
};
