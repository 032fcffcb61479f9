//! The search seam: [`SearchBackend`] turns a query into [`SearchResult`]s; `web_search`
//! does not know which service answers. Backends build their requests with a client from
//! `toolgate_net`, so every search passes the same egress guard as `url_read`.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use toolgate_core::ToolError;
use toolgate_net::EgressError;

/// One hit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchResult {
    pub title: String,
    pub url: String,
    /// A short plain-text excerpt (markup removed).
    pub snippet: String,
}

/// Why a search produced no results list. Messages never contain an API key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SearchError {
    /// The egress guard refused the request.
    #[error("{0}")]
    Refused(EgressError),
    #[error("{backend} search timed out; retry, or raise [web.search] timeout_secs")]
    Timeout { backend: &'static str },
    #[error("cannot reach the {backend} search service: {reason}")]
    Network {
        backend: &'static str,
        reason: String,
    },
    /// A non-2xx answer; `body` is a short, key-scrubbed excerpt.
    #[error("the {backend} search service answered HTTP {status}{hint}{body}")]
    Status {
        backend: &'static str,
        status: u16,
        hint: String,
        body: String,
    },
    #[error("the {backend} search service answered something other than its JSON format: {reason}")]
    Decode {
        backend: &'static str,
        reason: String,
    },
}

impl From<SearchError> for ToolError {
    fn from(err: SearchError) -> Self {
        match &err {
            SearchError::Refused(refusal) => ToolError::PolicyDenied(refusal.to_string()),
            SearchError::Timeout { .. } | SearchError::Network { .. } => {
                ToolError::transient(err.to_string())
            }
            SearchError::Status {
                status: 408 | 429 | 500..=599,
                ..
            } => ToolError::transient(err.to_string()),
            SearchError::Status { .. } | SearchError::Decode { .. } => {
                ToolError::failed(err.to_string())
            }
        }
    }
}

/// A web search service.
#[async_trait]
pub trait SearchBackend: Send + Sync + 'static {
    /// Short name for messages and output (`searxng`, `brave`).
    fn name(&self) -> &'static str;

    /// Up to `count` results for `query`, best first.
    async fn search(&self, query: &str, count: u32) -> Result<Vec<SearchResult>, SearchError>;
}
