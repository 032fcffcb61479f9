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
use url::Url;

use crate::error::RagError;

pub struct RemoteReranker {
    client: reqwest::Client,
    url: Url,
    model: String,
    api_key: Option<String>,
}

impl std::fmt::Debug for RemoteReranker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteReranker")
            .field("url", &self.url.as_str())
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .finish()
    }
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
        let mut url = Url::parse(base_url)
            .map_err(|e| RagError::Config(format!("reranker url `{base_url}`: {e}")))?;
        if !url.path().ends_with("/rerank") {
            let path = format!("{}/rerank", url.path().trim_end_matches('/'));
            url.set_path(&path);
        }
        let client = toolgate_net::client(egress).map_err(|e| RagError::Reranker(e.to_string()))?;
        Ok(RemoteReranker {
            client,
            url,
            model: model.to_owned(),
            api_key,
        })
    }

    /// A relevance score per document, in the documents' order (higher is better).
    pub async fn scores(&self, query: &str, documents: &[String]) -> Result<Vec<f32>, RagError> {
        if documents.is_empty() {
            return Ok(Vec::new());
        }
        let mut req = self.client.post(self.url.clone()).json(&json!({
            "model": self.model,
            "query": query,
            "documents": documents,
            "top_n": documents.len(),
        }));
        if let Some(key) = &self.api_key {
            req = req.bearer_auth(key);
        }
        let resp = req
            .send()
            .await
            .map_err(|e| match toolgate_net::egress_refusal(&e) {
                Some(refusal) => RagError::Reranker(refusal.to_string()),
                None => RagError::Reranker(format!("{}: {e}", self.url)),
            })?;
        let status = resp.status();
        if !status.is_success() {
            return Err(RagError::Reranker(format!(
                "{} answered {status}",
                self.url
            )));
        }
        let answer: Answer = resp
            .json()
            .await
            .map_err(|e| RagError::Reranker(format!("{}: unreadable answer: {e}", self.url)))?;
        let mut scores = vec![None; documents.len()];
        for s in answer.results {
            let slot = scores.get_mut(s.index).ok_or_else(|| {
                RagError::Reranker(format!(
                    "{} scored document {} of {}",
                    self.url,
                    s.index,
                    documents.len()
                ))
            })?;
            *slot = Some(s.relevance_score);
        }
        let missing = scores.iter().filter(|s| s.is_none()).count();
        if missing > 0 {
            return Err(RagError::Reranker(format!(
                "{} left {missing} of {} documents unscored",
                self.url,
                documents.len()
            )));
        }
        Ok(scores.into_iter().flatten().collect())
    }
}
