//! `[rag]` in toolgate.toml.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::fusion::Fusion;
use crate::index::Mode;

/// `[rag]`: when retrieval replaces the full catalog, and where vectors come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RagConfig {
    /// A role seeing more tools than this gets retrieval (R-RAG-2); at or below, all tools.
    pub threshold: usize,
    /// Tools returned by a search when the caller does not say.
    pub k: usize,
    /// `bm25`, `dense` or `hybrid` (hybrid needs an embedder; without one it is BM25).
    pub mode: String,
    /// `convex[:ALPHA]` or `rrf[:K]`.
    pub fusion: String,
    /// A local sentence-transformers model directory (model.safetensors, config.json,
    /// tokenizer.json). Relative paths are resolved against the workspace.
    pub model_dir: Option<PathBuf>,
    /// An OpenAI-compatible embeddings endpoint instead of a local model.
    pub endpoint: Option<EndpointConfig>,
    /// A `/rerank` endpoint that reorders the best fused candidates (a second stage).
    pub reranker: Option<RerankerConfig>,
}

/// `[rag.reranker]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RerankerConfig {
    /// API root, e.g. `https://api.cohere.com/v2` or a vLLM/Infinity server's `/v1`
    /// (`/rerank` is appended).
    pub url: String,
    pub model: String,
    /// Name of the environment variable holding the API key.
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// How many fused candidates are sent to be reordered (at least k).
    #[serde(default = "default_rerank_depth")]
    pub depth: usize,
}

fn default_rerank_depth() -> usize {
    50
}

/// `[rag.endpoint]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EndpointConfig {
    /// API root, e.g. `https://api.openai.com/v1` (`/embeddings` is appended).
    pub url: String,
    pub model: String,
    /// Name of the environment variable holding the API key (the key itself is never
    /// written in the configuration).
    #[serde(default)]
    pub api_key_env: Option<String>,
}

impl Default for RagConfig {
    fn default() -> Self {
        RagConfig {
            threshold: 30,
            k: 5,
            mode: "hybrid".to_owned(),
            fusion: "convex:0.6".to_owned(),
            model_dir: None,
            endpoint: None,
            reranker: None,
        }
    }
}

impl RagConfig {
    /// The parsed mode; a clear message on a bad value.
    pub fn mode(&self) -> Result<Mode, String> {
        self.mode.parse().map_err(|e| format!("[rag] mode: {e}"))
    }

    pub fn fusion(&self) -> Result<Fusion, String> {
        self.fusion
            .parse()
            .map_err(|e| format!("[rag] fusion: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reranker_depth_defaults_and_unknown_keys_are_refused() {
        let cfg: RagConfig = serde_json::from_value(serde_json::json!({
            "reranker": {"url": "https://api.cohere.com/v2", "model": "rerank-v3.5",
                         "api_key_env": "COHERE_API_KEY"}
        }))
        .unwrap();
        let r = cfg.reranker.unwrap();
        assert_eq!((r.depth, r.model.as_str()), (50, "rerank-v3.5"));
        let err = serde_json::from_value::<RagConfig>(serde_json::json!({
            "reranker": {"url": "u", "model": "m", "api_key": "sk-inline"}
        }))
        .unwrap_err()
        .to_string();
        assert!(err.contains("unknown field `api_key`"), "{err}");
    }
}
