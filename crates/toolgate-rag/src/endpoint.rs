//! [`JsonEndpoint`]: one HTTP JSON API the retrieval layer calls (embeddings, rerank), reached
//! only through toolgate-net's SSRF-guarded client. The API key is sent as a bearer token and
//! never logged or shown (`Debug` says `<set>`); errors name the URL, and an egress refusal
//! reads as the guard's actionable message.

use serde::de::DeserializeOwned;
use serde_json::Value;
use toolgate_net::EgressPolicy;
use url::Url;

/// Why an endpoint could not be set up.
pub(crate) enum SetupError {
    /// The configured URL does not parse (a configuration error).
    Url(String),
    /// The guarded client could not be built.
    Client(String),
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
        let mut url =
            Url::parse(base_url).map_err(|e| SetupError::Url(format!("url `{base_url}`: {e}")))?;
        let suffix = format!("/{path}");
        if !url.path().ends_with(&suffix) {
            let full = format!("{}{suffix}", url.path().trim_end_matches('/'));
            url.set_path(&full);
        }
        let client = toolgate_net::client(egress).map_err(|e| SetupError::Client(e.to_string()))?;
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
    pub async fn post<T: DeserializeOwned>(&self, body: &Value) -> Result<T, String> {
        let mut req = self.client.post(self.url.clone()).json(body);
        if let Some(key) = &self.api_key {
            req = req.bearer_auth(key);
        }
        let resp = req
            .send()
            .await
            .map_err(|e| match toolgate_net::egress_refusal(&e) {
                Some(refusal) => refusal.to_string(),
                None => format!("{}: {e}", self.url),
            })?;
        let status = resp.status();
        if !status.is_success() {
            return Err(format!("{} answered {status}", self.url));
        }
        resp.json()
            .await
            .map_err(|e| format!("{}: unreadable answer: {e}", self.url))
    }
}
