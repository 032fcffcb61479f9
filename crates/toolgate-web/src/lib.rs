//! Web tools of toolgate (R-ACT-3): `url_read` reads a page through the egress guard
//! (R-MCP-4) and returns readable text; `web_search` asks a configured search service;
//! `retrieve_papers` asks scholarly indexes (arXiv, OpenAlex, Semantic Scholar, Crossref).
//!
//! Every request goes through a client built by `toolgate_net`: names are resolved once and
//! checked, literal and non-public addresses refused unless `[egress]` allows them, every
//! redirect hop re-checked. A refusal reaches the caller as `policy_denied` with the
//! guard's message.
//!
//! Fetched text is untrusted: `url_read` returns it inside
//! `<untrusted-content source="…">…</untrusted-content>` ([`wrap_untrusted`]) and
//! `web_search` and `retrieve_papers` say so next to their results (and `retrieve_papers`
//! wraps each abstract).
//!
//! # Layout
//! - [`config`]: [`WebConfig`], the `[web]` table.
//! - [`tools`]: [`web_tools`], the table → the tools to register.
//! - [`read`]: [`UrlReadTool`] — fetch (caps, timeout, cancel), charset, convert, html, text.
//! - [`search`]: [`WebSearchTool`] over a [`SearchBackend`] — [`SearxngBackend`],
//!   [`BraveBackend`]; [`ApiKey`] keeps the key out of logs and errors.
//! - [`papers`]: [`RetrievePapersTool`] over [`PaperSource`]s — arXiv, OpenAlex, Semantic
//!   Scholar, Crossref — merged and de-duplicated; rate limits waited on an injected
//!   [`Clock`].
//! - [`untrusted`]: [`wrap_untrusted`], the delimiter around fetched text.
//! - [`error`]: [`WebError`], a `[web]` setting that cannot be used.
//!
//! ```
//! use toolgate_net::EgressPolicy;
//! use toolgate_web::{UrlReadConfig, WebConfig, web_tools};
//!
//! // Nothing is registered by default.
//! assert!(web_tools(&WebConfig::default(), &EgressPolicy::default()).unwrap().is_empty());
//! let config = WebConfig {
//!     url_read: UrlReadConfig { enabled: true, ..UrlReadConfig::default() },
//!     search: None, // web_search stays off until [web.search] names a backend
//!     papers: None, // retrieve_papers stays off until [web.papers] is present
//! };
//! let tools = web_tools(&config, &EgressPolicy::default()).unwrap();
//! let names: Vec<_> = tools.iter().map(|t| t.spec().name.as_str()).collect();
//! assert_eq!(names, ["url_read"]);
//! ```

#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)
)]

mod args;
mod cause;
pub mod config;
pub mod error;
mod markup;
pub mod papers;
pub mod read;
pub mod search;
pub mod tools;
pub mod untrusted;

pub use config::{SearchBackendKind, SearchConfig, UrlReadConfig, WebConfig};
pub use error::WebError;
pub use papers::{
    Clock, PaperSource, PaperSourceKind, PapersConfig, PapersConfigError, PapersError,
    RetrievePapersTool,
};
pub use read::UrlReadTool;
pub use search::{
    ApiKey, BraveBackend, SearchBackend, SearchError, SearchResult, SearxngBackend, WebSearchTool,
};
pub use tools::{EnvLookup, search_backend, web_tools, web_tools_with};
pub use untrusted::wrap_untrusted;
