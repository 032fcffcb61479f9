//! One capped GET through the guarded client: at most `max_bytes` of body are read (the
//! connection is dropped after that), the whole fetch has one deadline, and the caller's
//! cancellation stops it at once. Redirects are followed and re-checked by the client
//! (`toolgate_net::client`); this module only classifies what went wrong.

use std::time::Duration;

use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderValue, USER_AGENT};
use toolgate_core::{CancellationToken, ToolError};
use toolgate_net::{EgressError, egress_refusal};
use url::Url;

use crate::cause::causes;

const ACCEPT_VALUE: &str =
    "text/html,application/xhtml+xml,application/json;q=0.9,text/*;q=0.8,*/*;q=0.1";

/// What one fetch may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FetchLimits {
    pub max_bytes: u64,
    pub timeout: Duration,
}

/// A response, with its body read up to the cap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    /// Where the body came from, after redirects.
    pub final_url: Url,
    pub status: u16,
    pub content_type: Option<String>,
    pub body: Vec<u8>,
    /// The body went on past `max_bytes`; the rest was not read.
    pub truncated: bool,
}

/// Why a fetch produced no response.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    /// The egress guard refused the URL, a redirect hop or a connection.
    #[error("{0}")]
    Refused(EgressError),
    /// `limit` names the deadline that ran out and where it is set.
    #[error("timed out fetching {url}: {limit}; retry, or raise it for slow sites")]
    Timeout { url: String, limit: String },
    #[error("cannot fetch {url}: {reason}")]
    Network { url: String, reason: String },
    #[error("cancelled")]
    Cancelled,
}

impl From<FetchError> for ToolError {
    fn from(err: FetchError) -> Self {
        match err {
            FetchError::Refused(refusal) => ToolError::PolicyDenied(refusal.to_string()),
            FetchError::Cancelled => ToolError::Cancelled,
            other => ToolError::transient(other.to_string()),
        }
    }
}

/// GETs `url` with `client` (built by `toolgate_net`), reading at most `limits.max_bytes`.
pub async fn fetch(
    client: &reqwest::Client,
    url: &Url,
    user_agent: &str,
    limits: FetchLimits,
    cancel: &CancellationToken,
) -> Result<Fetched, FetchError> {
    let work = tokio::time::timeout(
        limits.timeout,
        get(client, url, user_agent, limits.max_bytes),
    );
    tokio::select! {
        () = cancel.cancelled() => Err(FetchError::Cancelled),
        done = work => done.unwrap_or_else(|_| Err(FetchError::Timeout {
            url: url.to_string(),
            limit: format!("{} s ([web.url_read] timeout_secs)", limits.timeout.as_secs()),
        })),
    }
}

async fn get(
    client: &reqwest::Client,
    url: &Url,
    user_agent: &str,
    max_bytes: u64,
) -> Result<Fetched, FetchError> {
    let agent = HeaderValue::from_str(user_agent)
        .unwrap_or_else(|_| HeaderValue::from_static("toolgate-url-read"));
    let mut resp = client
        .get(url.clone())
        .header(ACCEPT, ACCEPT_VALUE)
        .header(USER_AGENT, agent)
        .send()
        .await
        .map_err(|e| classify(url, &e))?;
    let final_url = resp.url().clone();
    let status = resp.status().as_u16();
    let content_type = resp
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let cap = usize::try_from(max_bytes).unwrap_or(usize::MAX);
    let mut body = Vec::new();
    let mut truncated = false;
    while let Some(chunk) = resp.chunk().await.map_err(|e| classify(&final_url, &e))? {
        let room = cap - body.len();
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            truncated = true;
            break;
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Fetched {
        final_url,
        status,
        content_type,
        body,
        truncated,
    })
}

/// The guard's refusal if there is one, else a timeout or a network failure with its cause.
fn classify(url: &Url, err: &reqwest::Error) -> FetchError {
    if let Some(refusal) = egress_refusal(err) {
        return FetchError::Refused(refusal.clone());
    }
    if err.is_timeout() {
        return FetchError::Timeout {
            url: url.to_string(),
            limit: "[egress] connect_timeout_secs or request_timeout_secs".to_owned(),
        };
    }
    FetchError::Network {
        url: url.to_string(),
        reason: causes(err),
    }
}
