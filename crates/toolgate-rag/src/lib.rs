//! Tool RAG (R-RAG-1..4): choose the few right tools out of thousands, and only among the
//! tools the caller may see.
//!
//! # Layout
//! - [`tokenize`]: identifier-aware tokenisation (`snake_case`, `camelCase`, `kebab-case`,
//!   `mcp__server__tool`), stop words, a light stemmer.
//! - [`doc`]: [`ToolDoc`], what is indexed of a tool, and its definition key.
//! - [`bm25`]: an incremental BM25 inverted index.
//! - [`dense`]: sentence embeddings: [`LocalEmbedder`] (a BERT/MiniLM directory, run by this crate's own encoder)
//!   or [`RemoteEmbedder`] (an OpenAI-compatible `/v1/embeddings` through toolgate-net).
//! - [`cache`]: [`VectorCache`], vectors by model and definition key (SQLite).
//! - [`fusion`]: convex score fusion and reciprocal rank fusion.
//! - [`index`]: [`ToolIndex`], both retrievers over slots, searched through a filter.
//! - [`filter`]: [`FilterChain`], role allowlist → availability → risk policy.
//! - [`service`]: [`ToolSearch`], the index kept in step with the catalog.
//! - [`meta`]: [`SearchToolsTool`], the `search_tools {query, k}` meta-tool.
//! - [`catalog`]: [`CatalogSearch`], the live catalog searched per role (what `search_tools`
//!   and the agent loop's retrieval selector in toolgate-app search through).
//! - [`config`]: [`RagConfig`], the `[rag]` table.
//! - [`hub`]: `toolgate rag model pull`: the embedding model fetched through toolgate-net,
//!   verified against pinned SHA-256s, into a cache retrieval finds it in.
//!
//! It knows neither the agent loop nor the eval; of the layers above the catalog it reuses
//! only the gateway's role and risk decisions. The loop's retrieval selector
//! (`toolgate_app::rag::RetrievalSelector`) and the retrieval eval (`toolgate_eval::retrieval`)
//! use this crate.
//!
//! ```
//! use serde_json::json;
//! use toolgate_protocol::ToolSpec;
//! use toolgate_rag::{Fusion, Mode, Query, ToolIndex};
//!
//! let mut index = ToolIndex::default();
//! index.upsert(&ToolSpec::new("get_weather", "Current weather for a city.", json!({"type": "object"})));
//! index.upsert(&ToolSpec::new("send_email", "Send an email.", json!({"type": "object"})));
//! let q = Query { text: "what's the weather in Paris?", vector: None, mode: Mode::Bm25, k: 1,
//!                 fusion: Fusion::default() };
//! let hits = index.search(&q, &|name| name != "send_email"); // the filter chain goes here
//! assert_eq!(hits[0].name, "get_weather");
//! ```

#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)
)]

pub mod bm25;
pub mod cache;
pub mod catalog;
pub mod config;
pub mod dense;
pub mod doc;
mod endpoint;
pub mod error;
pub mod filter;
pub mod fusion;
pub mod hub;
pub mod index;
pub mod meta;
pub mod recent;
pub mod rerank;
pub mod service;
pub mod tokenize;

pub use cache::VectorCache;
pub use catalog::{CatalogSearch, Found, is_meta_tool};
pub use config::{ConfigError, EndpointConfig, RagConfig, RerankerConfig};
pub use dense::{Embedder, LocalEmbedder, RemoteEmbedder};
pub use doc::ToolDoc;
pub use error::{EndpointError, RagError};
pub use filter::{FilterChain, FilterTally, Stage};
pub use fusion::{Fusion, ParseFusionError};
pub use index::{Hit, Mode, ParseModeError, Query, RetrieverScore, SyncStats, ToolIndex};
pub use meta::{SEARCH_TOOLS, SearchToolsTool};
pub use rerank::RemoteReranker;
pub use service::{RefreshStats, ToolSearch};
