//! `[rag]` in toolgate.toml.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::fusion::{Fusion, ParseFusionError};
use crate::index::{Mode, ParseModeError};

/// A `[rag]` value that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("[rag] mode: {0}")]
    Mode(ParseModeError),
    #[error("[rag] fusion: {0}")]
    Fusion(ParseFusionError),
}

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
    pub fn mode(&self) -> Result<Mode, ConfigError> {
        self.mode.parse().map_err(ConfigError::Mode)
    }

    /// The parsed fusion; a clear message on a bad value.
    pub fn fusion(&self) -> Result<Fusion, ConfigError> {
        self.fusion.parse().map_err(ConfigError::Fusion)
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

    #[test]
    fn a_bad_mode_or_fusion_names_its_key() {
        let cfg = RagConfig {
            mode: "sparse".into(),
            fusion: "convex:2".into(),
            ..RagConfig::default()
        };
        let err = cfg.mode().unwrap_err();
        assert_eq!(err, ConfigError::Mode(ParseModeError("sparse".into())));
        assert_eq!(
            err.to_string(),
            "[rag] mode: unknown retriever `sparse` (expected bm25, dense or hybrid)"
        );
        let err = cfg.fusion().unwrap_err();
        assert_eq!(
            err,
            ConfigError::Fusion(ParseFusionError::Alpha("convex:2".into()))
        );
        assert_eq!(
            err.to_string(),
            "[rag] fusion: fusion `convex:2`: alpha must be within 0..1"
        );
    }
}
