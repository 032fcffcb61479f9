//! The scholarly-index seam: a [`PaperSource`] turns a [`PaperQuery`] into ranked
//! [`Paper`]s and looks one paper up by [`PaperId`]; `retrieve_papers` does not know which
//! index answers. Every source sends its requests through [`super::http::PaperHttp`], so
//! each passes the egress guard, the caps and the rate-limit handling.

use async_trait::async_trait;
use toolgate_core::ToolError;
use toolgate_net::EgressError;

use super::paper::{Paper, PaperId, PaperQuery};

/// Why a source produced no answer. Messages never contain an API key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PapersError {
    /// The egress guard refused the request or a redirect hop.
    #[error("{0}")]
    Refused(EgressError),
    #[error("{source_name} timed out; retry, or raise [web.papers] timeout_secs")]
    Timeout { source_name: &'static str },
    #[error("cannot reach {source_name}: {reason}")]
    Network {
        source_name: &'static str,
        reason: String,
    },
    /// 429 (or 503) after the retries `[web.papers] max_retries` allows, or a wait longer
    /// than `max_retry_after_secs`.
    #[error("{source_name} is rate-limiting{}; retry later", .retry_after_secs.map(|s| format!(" (it asked to wait {s} s)")).unwrap_or_default())]
    RateLimited {
        source_name: &'static str,
        retry_after_secs: Option<u64>,
    },
    /// Another non-2xx answer; `body` is a short, key-scrubbed excerpt.
    #[error("{source_name} answered HTTP {status}{body}")]
    Status {
        source_name: &'static str,
        status: u16,
        body: String,
    },
    #[error("{source_name}'s answer is larger than [web.papers] max_bytes ({limit} bytes)")]
    TooLarge {
        source_name: &'static str,
        limit: u64,
    },
    /// The answer is not the source's documented format.
    #[error("{source_name} answered something other than its {format} format: {reason}")]
    Decode {
        source_name: &'static str,
        format: &'static str,
        reason: String,
    },
}

impl PapersError {
    /// The source the error came from (`""` for a refusal, which names its host instead).
    pub fn source_name(&self) -> &'static str {
        match self {
            PapersError::Refused(_) => "",
            PapersError::Timeout { source_name }
            | PapersError::Network { source_name, .. }
            | PapersError::RateLimited { source_name, .. }
            | PapersError::Status { source_name, .. }
            | PapersError::TooLarge { source_name, .. }
            | PapersError::Decode { source_name, .. } => source_name,
        }
    }
}

impl From<PapersError> for ToolError {
    fn from(err: PapersError) -> Self {
        match &err {
            PapersError::Refused(refusal) => ToolError::PolicyDenied(refusal.to_string()),
            PapersError::Timeout { .. }
            | PapersError::Network { .. }
            | PapersError::RateLimited { .. }
            | PapersError::Status {
                status: 408 | 500..=599,
                ..
            } => ToolError::transient(err.to_string()),
            PapersError::Status { .. }
            | PapersError::TooLarge { .. }
            | PapersError::Decode { .. } => ToolError::failed(err.to_string()),
        }
    }
}

/// A scholarly index (arXiv, OpenAlex, Semantic Scholar, Crossref).
#[async_trait]
pub trait PaperSource: Send + Sync + 'static {
    /// Short name for output and messages (`arxiv`, `openalex`, …).
    fn name(&self) -> &'static str;

    /// Up to `query.limit` papers, best first, with the filters applied.
    async fn search(&self, query: &PaperQuery) -> Result<Vec<Paper>, PapersError>;

    /// The paper `id` names; `None` when the index does not have it or cannot look up
    /// that kind of id.
    async fn lookup(&self, id: &PaperId) -> Result<Option<Paper>, PapersError>;
}
