//! `web_search` and its backends:
//! - [`backend`]: the [`SearchBackend`] trait, [`SearchResult`], [`SearchError`].
//! - [`searxng`]: [`SearxngBackend`] (a SearXNG instance's JSON API).
//! - [`brave`]: [`BraveBackend`] (the Brave Search API, keyed).
//! - [`secret`]: [`ApiKey`], a key that is never printed.
//! - `http`: the GET-and-decode both backends share.
//! - [`tool`]: [`WebSearchTool`], the tool itself.

pub mod backend;
pub mod brave;
mod http;
pub mod searxng;
pub mod secret;
pub mod tool;

pub use backend::{SearchBackend, SearchError, SearchResult};
pub use brave::{BRAVE_BASE_URL, BraveBackend};
pub use searxng::SearxngBackend;
pub use secret::ApiKey;
pub use tool::WebSearchTool;
