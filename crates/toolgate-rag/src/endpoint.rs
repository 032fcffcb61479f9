//! [`JsonEndpoint`]: one HTTP JSON API the retrieval layer calls (embeddings, rerank), reached
//! only through toolgate-net's SSRF-guarded client. The API key is sent as a bearer token and
//! never logged or shown (`Debug` says `<set>`); errors name the URL, and an egress refusal
//! reads as the guard's actionable message.

use serde::de::DeserializeOwned;
use serde_json::Value;
use toolgate_net::{EgressError, EgressPolicy};
use url::Url;

/// Why an endpoint could not be set up.
#[derive(Debug)]
pub(crate) enum SetupError {
    /// The configured URL does not parse (a configuration error).
    Url { url: String, error: url::ParseError },
    /// The guarded client could not be built.
    Client(EgressError),
}

/// Why an embeddings or rerank endpoint gave no usable answer. Every message names the URL,
/// never the API key.
#[derive(Debug, thiserror::Error)]
pub enum EndpointError {
    /// toolgate-net's guarded client could not be built.
    #[error("{0}")]
    Client(EgressError),
    /// toolgate-net's guard refused the destination (its actionable message).
    #[error("{0}")]
    Refused(EgressError),
    /// The request failed (connection, timeout).
    #[error("{url}: {error}")]
    Request { url: Url, error: reqwest::Error },
    /// A status other than 2xx.
    #[error("{url} answered {status}")]
    Status {
        url: Url,
        status: reqwest::StatusCode,
    },
    /// The body is not the JSON expected.
    #[error("{url}: unreadable answer: {error}")]
    Unreadable { url: Url, error: reqwest::Error },
    /// An embeddings answer with another number of vectors than inputs sent.
    #[error("{url} returned {got} vectors for {sent} inputs")]
    VectorCount { url: Url, got: usize, sent: usize },
    /// A rerank answer scoring a document that was not sent.
    #[error("{url} scored document {index} of {sent}")]
    ScoreIndex { url: Url, index: usize, sent: usize },
    /// A rerank answer leaving documents without a score.
    #[error("{url} left {missing} of {sent} documents unscored")]
    Unscored {
        url: Url,
        missing: usize,
        sent: usize,
    },
}

pub(crate) struct JsonEndpoint {
    client: reqwest::Client,
    url: Url,
    api_key: Option<String>,
}

impl std::fmt::Debug for JsonEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JsonEndpoint")
            .field("url", &self.url.as_str())
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .finish()
    }
}

impl JsonEndpoint {
    /// `base_url` is the API root (`https://host/v1`); `/{path}` is appended unless the URL
    /// already ends with it.
    pub fn new(
        base_url: &str,
        path: &str,
        api_key: Option<String>,
        egress: &EgressPolicy,
    ) -> Result<Self, SetupError> {
        let mut url = Url::parse(base_url).map_err(|error| SetupError::Url {
            url: base_url.to_owned(),
            error,
        })?;
        let suffix = format!("/{path}");
        if !url.path().ends_with(&suffix) {
            let full = format!("{}{suffix}", url.path().trim_end_matches('/'));
            url.set_path(&full);
        }
        let client = toolgate_net::client(egress).map_err(SetupError::Client)?;
        Ok(JsonEndpoint {
            client,
            url,
            api_key,
        })
    }

    pub fn url(&self) -> &Url {
        &self.url
    }

    /// POSTs `body` and reads a `T` from a 2xx answer.
    pub async fn post<T: DeserializeOwned>(&self, body: &Value) -> Result<T, EndpointError> {
        let mut req = self.client.post(self.url.clone()).json(body);
        if let Some(key) = &self.api_key {
            req = req.bearer_auth(key);
        }
        let resp =
            req.send()
                .await
                .map_err(|error| match toolgate_net::egress_refusal(&error) {
                    Some(refusal) => EndpointError::Refused(refusal.clone()),
                    None => EndpointError::Request {
                        url: self.url.clone(),
                        error,
                    },
                })?;
        let status = resp.status();
        if !status.is_success() {
            return Err(EndpointError::Status {
                url: self.url.clone(),
                status,
            });
        }
        resp.json()
            .await
            .map_err(|error| EndpointError::Unreadable {
                url: self.url.clone(),
                error,
            })
    }
}
