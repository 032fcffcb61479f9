//! [`PullError`]: why a model could not be pulled, each message saying what to do next. URLs
//! are shown without query strings (a hub's signed redirect links carry tokens).

use std::path::PathBuf;

use toolgate_net::EgressError;

/// Where an expected SHA-256 came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expected {
    /// Kept in toolgate's source for the default model.
    Pinned,
    /// Recorded in the model directory's manifest on the first pull (trust on first use).
    Recorded(PathBuf),
}

impl std::fmt::Display for Expected {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Expected::Pinned => f.write_str("pinned in toolgate's source"),
            Expected::Recorded(p) => write!(f, "recorded on the first pull in {}", p.display()),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PullError {
    /// The repository is not `owner/name` of safe characters.
    #[error(
        "model repository `{repo}`: {reason} (expected `owner/name`, e.g. sentence-transformers/all-MiniLM-L6-v2)"
    )]
    BadRepo { repo: String, reason: &'static str },
    /// The revision is not a commit id, branch or tag of safe characters.
    #[error("model revision `{revision}`: {reason}")]
    BadRevision {
        revision: String,
        reason: &'static str,
    },
    /// No cache directory could be found in the environment.
    #[error(
        "no model cache directory: set TOOLGATE_MODEL_CACHE (or XDG_CACHE_HOME or HOME), or set [rag] model_dir to a model you copied in"
    )]
    NoCacheDir,
    /// `HF_ENDPOINT` (or the given endpoint) is not a URL.
    #[error("hub endpoint `{url}` is not a URL: {error}")]
    BadEndpoint { url: String, error: url::ParseError },
    /// The endpoint carries credentials over plain http, where they would travel readable.
    #[error(
        "hub endpoint `{endpoint}` carries credentials over plain http, which would send them readable with every request: use https"
    )]
    CredentialsInClear { endpoint: String },
    /// toolgate-net's client could not be built.
    #[error("{0}")]
    Client(EgressError),
    /// toolgate-net's guard refused the hub (its message says which `[egress]` entry allows it).
    #[error("{url}: {refusal}")]
    Refused { url: String, refusal: EgressError },
    /// The request failed before or during the body.
    #[error("{url}: {error}; run the same command again to resume")]
    Request { url: String, error: String },
    /// No byte arrived for too long.
    #[error("{url}: nothing received for {secs} s; run the same command again to resume")]
    Stalled { url: String, secs: u64 },
    /// A status other than 200/206.
    #[error("{url} answered {status}{hint}")]
    Status {
        url: String,
        status: u16,
        hint: &'static str,
    },
    /// The body is larger than the file can be.
    #[error("{url}: more than {limit} bytes; refused")]
    TooLarge { url: String, limit: u64 },
    /// The file's SHA-256 is not the expected one; the file was deleted.
    #[error(
        "{file}: SHA-256 mismatch: expected {expected} ({origin}), got {actual}; the download was deleted and nothing was installed"
    )]
    Mismatch {
        file: String,
        expected: String,
        actual: String,
        origin: Expected,
    },
    /// A manifest that does not parse.
    #[error("{path}: unreadable model manifest: {error}; delete the directory and pull again")]
    Manifest { path: PathBuf, error: String },
    /// A file could not be read or written.
    #[error("{path}: {error}")]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
}

impl PullError {
    pub(crate) fn io(path: impl Into<PathBuf>, error: std::io::Error) -> Self {
        PullError::Io {
            path: path.into(),
            error,
        }
    }
}
