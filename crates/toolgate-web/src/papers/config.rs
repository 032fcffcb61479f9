//! `[web.papers]`: [`PapersConfig`]. Present → `retrieve_papers` is registered (off by
//! default, like `web_search`). Which indexes are asked and in what order, the polite-pool
//! address, the Semantic Scholar key's variable, caps and the rate-limit settings. Where
//! requests may go comes from `[egress]`.

use serde::{Deserialize, Serialize};
use toolgate_net::EgressError;

/// A scholarly index `retrieve_papers` can ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PaperSourceKind {
    /// arXiv's query API (Atom), one request per `arxiv_interval_ms`.
    Arxiv,
    /// OpenAlex's works API; `mailto` joins its polite pool.
    Openalex,
    /// The Semantic Scholar Academic Graph API; a key is optional.
    SemanticScholar,
    /// Crossref's REST API; `mailto` joins its polite pool.
    Crossref,
}

impl PaperSourceKind {
    pub fn as_str(self) -> &'static str {
        match self {
            PaperSourceKind::Arxiv => "arxiv",
            PaperSourceKind::Openalex => "openalex",
            PaperSourceKind::SemanticScholar => "semantic_scholar",
            PaperSourceKind::Crossref => "crossref",
        }
    }
}

/// `[web.papers]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PapersConfig {
    /// The indexes asked, in the order their fields win when merging.
    #[serde(default = "default_sources")]
    pub sources: Vec<PaperSourceKind>,
    /// A contact address sent to OpenAlex and Crossref (their polite pools) and in the
    /// `User-Agent`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mailto: Option<String>,
    /// Name of the environment variable holding a Semantic Scholar API key (optional; the
    /// key is never written anywhere).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub semantic_scholar_key_env: Option<String>,
    /// Other endpoints (a mirror, a caching proxy, a test server); default: the public APIs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arxiv_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub openalex_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub semantic_scholar_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crossref_url: Option<String>,
    /// Papers returned when a call does not say.
    #[serde(default = "default_count")]
    pub count: u32,
    /// Most papers one call may ask for.
    #[serde(default = "default_max_count")]
    pub max_count: u32,
    /// Deadline for one whole call (every source, waits included), in seconds.
    #[serde(default = "default_timeout")]
    pub timeout_secs: u64,
    /// Largest answer read from a source; a larger one is an error.
    #[serde(default = "default_max_bytes")]
    pub max_bytes: u64,
    /// Characters of each abstract returned.
    #[serde(default = "default_abstract_chars")]
    pub abstract_chars: u32,
    /// Least time between two arXiv requests, in milliseconds (arXiv asks for 3 s).
    #[serde(default = "default_arxiv_interval")]
    pub arxiv_interval_ms: u64,
    /// Retries of one request after 429 / 503.
    #[serde(default = "default_max_retries")]
    pub max_retries: u32,
    /// The longest `Retry-After` waited for; a longer one fails the source at once.
    #[serde(default = "default_max_retry_after")]
    pub max_retry_after_secs: u64,
}

fn default_sources() -> Vec<PaperSourceKind> {
    vec![PaperSourceKind::Arxiv, PaperSourceKind::Openalex]
}
fn default_count() -> u32 {
    10
}
fn default_max_count() -> u32 {
    50
}
fn default_timeout() -> u64 {
    30
}
fn default_max_bytes() -> u64 {
    4 << 20
}
fn default_abstract_chars() -> u32 {
    1500
}
fn default_arxiv_interval() -> u64 {
    3000
}
fn default_max_retries() -> u32 {
    2
}
fn default_max_retry_after() -> u64 {
    20
}

impl Default for PapersConfig {
    fn default() -> Self {
        PapersConfig {
            sources: default_sources(),
            mailto: None,
            semantic_scholar_key_env: None,
            arxiv_url: None,
            openalex_url: None,
            semantic_scholar_url: None,
            crossref_url: None,
            count: default_count(),
            max_count: default_max_count(),
            timeout_secs: default_timeout(),
            max_bytes: default_max_bytes(),
            abstract_chars: default_abstract_chars(),
            arxiv_interval_ms: default_arxiv_interval(),
            max_retries: default_max_retries(),
            max_retry_after_secs: default_max_retry_after(),
        }
    }
}

/// A `[web.papers]` setting that cannot be used (found at startup).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PapersConfigError {
    #[error("[web.papers] {key} must be at least 1")]
    Zero { key: &'static str },
    #[error("[web.papers] count = {count} is above max_count = {max_count}")]
    CountAboveMax { count: u32, max_count: u32 },
    #[error(
        "[web.papers] sources is empty; list at least one of arxiv, openalex, semantic_scholar, crossref (or remove [web.papers])"
    )]
    NoSources,
    #[error("[web.papers] sources lists {0} twice")]
    Duplicate(&'static str),
    #[error("[web.papers] mailto `{0}` is not an e-mail address")]
    BadMailto(String),
    #[error("[web.papers] {key} `{url}` is not a URL: {reason}")]
    BadUrl {
        key: &'static str,
        url: String,
        reason: String,
    },
    #[error("[web.papers] {key} is not reachable under [egress]: {refusal}")]
    UrlRefused {
        key: &'static str,
        refusal: EgressError,
    },
    #[error(
        "[web.papers] semantic_scholar_key_env = \"{0}\", but the environment variable {0} is \
         not set (or is empty); set it, or remove the key to use the shared unauthenticated pool"
    )]
    KeyNotSet(String),
}
