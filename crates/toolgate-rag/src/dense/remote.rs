//! An OpenAI-compatible `/v1/embeddings` endpoint, reached only through toolgate-net's
//! SSRF-guarded client. The API key is read from an environment variable named in the
//! configuration and is never logged or shown.

use serde::Deserialize;
use serde_json::json;
use toolgate_net::EgressPolicy;
use url::Url;

use super::normalize;
use crate::error::RagError;

/// Texts per request.
const BATCH: usize = 64;

pub struct RemoteEmbedder {
    client: reqwest::Client,
    url: Url,
    model: String,
    api_key: Option<String>,
    id: String,
}

impl std::fmt::Debug for RemoteEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteEmbedder")
            .field("url", &self.url.as_str())
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .finish()
    }
}

#[derive(Deserialize)]
struct Response {
    data: Vec<Item>,
}

#[derive(Deserialize)]
struct Item {
    embedding: Vec<f32>,
    #[serde(default)]
    index: Option<usize>,
}

impl RemoteEmbedder {
    /// `base_url` is the API root (`https://host/v1`); `/embeddings` is appended.
    pub fn new(
        base_url: &str,
        model: &str,
        api_key: Option<String>,
        egress: &EgressPolicy,
    ) -> Result<Self, RagError> {
        let mut url = Url::parse(base_url)
            .map_err(|e| RagError::Config(format!("embeddings url `{base_url}`: {e}")))?;
        if !url.path().ends_with("/embeddings") {
            let path = format!("{}/embeddings", url.path().trim_end_matches('/'));
            url.set_path(&path);
        }
        let client = toolgate_net::client(egress).map_err(|e| RagError::Endpoint(e.to_string()))?;
        let id = format!("remote:{}:{model}", url.host_str().unwrap_or(""));
        Ok(RemoteEmbedder {
            client,
            url,
            model: model.to_owned(),
            api_key,
            id,
        })
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    pub async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, RagError> {
        let mut out = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(BATCH) {
            let mut req = self
                .client
                .post(self.url.clone())
                .json(&json!({"model": self.model, "input": chunk}));
            if let Some(key) = &self.api_key {
                req = req.bearer_auth(key);
            }
            let resp = req.send().await.map_err(|e| {
                // An egress refusal says what to allow; reqwest's own text would not.
                match toolgate_net::egress_refusal(&e) {
                    Some(refusal) => RagError::Endpoint(refusal.to_string()),
                    None => RagError::Endpoint(format!("{}: {e}", self.url)),
                }
            })?;
            let status = resp.status();
            if !status.is_success() {
                return Err(RagError::Endpoint(format!(
                    "{} answered {status}",
                    self.url
                )));
            }
            let mut body: Response = resp
                .json()
                .await
                .map_err(|e| RagError::Endpoint(format!("{}: unreadable answer: {e}", self.url)))?;
            if body.data.len() != chunk.len() {
                return Err(RagError::Endpoint(format!(
                    "{} returned {} vectors for {} inputs",
                    self.url,
                    body.data.len(),
                    chunk.len()
                )));
            }
            body.data.sort_by_key(|d| d.index.unwrap_or(0));
            for mut d in body.data {
                normalize(&mut d.embedding);
                out.push(d.embedding);
            }
        }
        Ok(out)
    }
}
