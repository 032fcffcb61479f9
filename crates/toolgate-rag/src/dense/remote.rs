//! An OpenAI-compatible `/v1/embeddings` endpoint, reached only through toolgate-net's
//! SSRF-guarded client. The API key is read from an environment variable named in the
//! configuration and is never logged or shown.

use serde::Deserialize;
use serde_json::json;
use toolgate_net::EgressPolicy;

use super::normalize;
use crate::endpoint::{EndpointError, JsonEndpoint, SetupError};
use crate::error::RagError;

/// Texts per request.
const BATCH: usize = 64;

#[derive(Debug)]
pub struct RemoteEmbedder {
    endpoint: JsonEndpoint,
    model: String,
    id: String,
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
        let endpoint =
            JsonEndpoint::new(base_url, "embeddings", api_key, egress).map_err(|e| match e {
                SetupError::Url { url, error } => RagError::Url {
                    what: "embeddings",
                    url,
                    error,
                },
                SetupError::Client(e) => RagError::Endpoint(EndpointError::Client(e)),
            })?;
        let id = format!("remote:{}:{model}", endpoint.url().host_str().unwrap_or(""));
        Ok(RemoteEmbedder {
            endpoint,
            model: model.to_owned(),
            id,
        })
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    pub async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, RagError> {
        let mut out = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(BATCH) {
            let mut body: Response = self
                .endpoint
                .post(&json!({"model": self.model, "input": chunk}))
                .await
                .map_err(RagError::Endpoint)?;
            if body.data.len() != chunk.len() {
                return Err(RagError::Endpoint(EndpointError::VectorCount {
                    url: self.endpoint.url().clone(),
                    got: body.data.len(),
                    sent: chunk.len(),
                }));
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
