//! [`RemoteReranker`]: a second stage over the fused candidates, scored by a cross-encoder
//! behind a `/rerank` endpoint (the request and answer Cohere, Jina, Voyage, vLLM and
//! Infinity share: `{model, query, documents, top_n}` → `{results | data: [{index,
//! relevance_score}]}`). Reached only through toolgate-net's SSRF-guarded client; the API key
//! comes from an environment variable named in the configuration and is never logged.
//!
//! Why: fusing BM25 and a small bi-encoder tops out below what the candidates allow. On the
//! retrieval eval the right tools are among the fused top 100 for 98 % of the questions, but
//! no fusion weight — not even the best one chosen per question with the answer known —
//! puts them in the top 5 for more than 94 % (docs/rag.md). A cross-encoder reads the query
//! and each tool together; only the candidates the filter chain admitted are ever sent.

use serde::Deserialize;
use serde_json::json;
use toolgate_net::EgressPolicy;

use crate::endpoint::{EndpointError, JsonEndpoint, SetupError};
use crate::error::RagError;

#[derive(Debug)]
pub struct RemoteReranker {
    endpoint: JsonEndpoint,
    model: String,
}

#[derive(Deserialize)]
struct Answer {
    #[serde(alias = "data")]
    results: Vec<Scored>,
}

#[derive(Deserialize)]
struct Scored {
    index: usize,
    #[serde(alias = "score")]
    relevance_score: f32,
}

impl RemoteReranker {
    /// `base_url` is the API root (`https://host/v1`); `/rerank` is appended unless the URL
    /// already ends with it.
    pub fn new(
        base_url: &str,
        model: &str,
        api_key: Option<String>,
        egress: &EgressPolicy,
    ) -> Result<Self, RagError> {
        let endpoint =
            JsonEndpoint::new(base_url, "rerank", api_key, egress).map_err(|e| match e {
                SetupError::Url { url, error } => RagError::Url {
                    what: "reranker",
                    url,
                    error,
                },
                SetupError::Client(e) => RagError::Reranker(EndpointError::Client(e)),
            })?;
        Ok(RemoteReranker {
            endpoint,
            model: model.to_owned(),
        })
    }

    /// A relevance score per document, in the documents' order (higher is better).
    pub async fn scores(&self, query: &str, documents: &[String]) -> Result<Vec<f32>, RagError> {
        if documents.is_empty() {
            return Ok(Vec::new());
        }
        let answer: Answer = self
            .endpoint
            .post(&json!({
                "model": self.model,
                "query": query,
                "documents": documents,
                "top_n": documents.len(),
            }))
            .await
            .map_err(RagError::Reranker)?;
        let url = self.endpoint.url();
        let mut scores = vec![None; documents.len()];
        for s in answer.results {
            let slot = scores.get_mut(s.index).ok_or_else(|| {
                RagError::Reranker(EndpointError::ScoreIndex {
                    url: url.clone(),
                    index: s.index,
                    sent: documents.len(),
                })
            })?;
            *slot = Some(s.relevance_score);
        }
        let missing = scores.iter().filter(|s| s.is_none()).count();
        if missing > 0 {
            return Err(RagError::Reranker(EndpointError::Unscored {
                url: url.clone(),
                missing,
                sent: documents.len(),
            }));
        }
        Ok(scores.into_iter().flatten().collect())
    }
}
