//! Which embeddings retrieval uses, decided from the configuration and the model cache
//! without loading anything: `[rag] model_dir` (an offline copy) first, then
//! `[rag.endpoint]`, then the default model if `toolgate rag model pull` put it in the cache
//! — so a pulled model upgrades BM25 to hybrid with no configuration, and an air-gapped
//! site's `model_dir` always wins. Nothing here downloads: only that command does.

use std::path::PathBuf;

use toolgate_rag::hub::{DEFAULT_REPO, ModelCache, ModelRef};
use toolgate_rag::{Mode, RagConfig};

use crate::config::Config;

/// The command that fetches the default model.
pub const UPGRADE_COMMAND: &str = "toolgate rag model pull";

/// Where dense vectors come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EmbeddingSource {
    /// `[rag] model_dir`, resolved against the workspace.
    ModelDir(PathBuf),
    /// `[rag.endpoint]`.
    Endpoint { url: String, model: String },
    /// The default model in the cache, pulled by [`UPGRADE_COMMAND`].
    Pulled(PathBuf),
    /// No embeddings: BM25 only.
    None,
}

/// The source `[rag]` and the cache give (see the module docs).
pub fn embedding_source(config: &Config, cfg: &RagConfig) -> EmbeddingSource {
    if let Some(dir) = &cfg.model_dir {
        let dir = if dir.is_absolute() {
            dir.clone()
        } else {
            config.workspace.join(dir)
        };
        return EmbeddingSource::ModelDir(dir);
    }
    if let Some(ep) = &cfg.endpoint {
        return EmbeddingSource::Endpoint {
            url: ep.url.clone(),
            model: ep.model.clone(),
        };
    }
    pulled_default().map_or(EmbeddingSource::None, EmbeddingSource::Pulled)
}

/// The default model's directory when a pull completed it.
pub fn pulled_default() -> Option<PathBuf> {
    ModelCache::from_env()
        .ok()?
        .complete(&ModelRef::default_model())
}

/// One line saying which retrieval is active under `mode` and, when it is BM25 only for
/// want of a model, the command that upgrades it.
pub fn describe(source: &EmbeddingSource, mode: Mode) -> String {
    let kind = match mode {
        Mode::Bm25 => return "BM25 only ([rag] mode = \"bm25\")".to_owned(),
        Mode::Dense => "dense",
        Mode::Hybrid => "hybrid (BM25 + dense)",
    };
    match source {
        EmbeddingSource::ModelDir(dir) => {
            format!("{kind} with model at {} ([rag] model_dir)", dir.display())
        }
        EmbeddingSource::Pulled(dir) => format!(
            "{kind} with model at {} (pulled by `{UPGRADE_COMMAND}`)",
            dir.display()
        ),
        EmbeddingSource::Endpoint { url, model } => {
            format!("{kind} with embeddings endpoint {url} (model {model})")
        }
        EmbeddingSource::None => format!(
            "BM25 only: no embedding model; `{UPGRADE_COMMAND}` fetches {DEFAULT_REPO} and makes it hybrid"
        ),
    }
}
