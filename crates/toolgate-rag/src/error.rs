//! Errors of the retrieval layer.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum RagError {
    /// The embedding model could not be loaded or run.
    #[error("embedding model: {0}")]
    Model(String),
    /// The embeddings endpoint refused or failed.
    #[error("embeddings endpoint: {0}")]
    Endpoint(String),
    /// The reranker endpoint refused or failed.
    #[error("reranker: {0}")]
    Reranker(String),
    /// The vector cache could not be opened, read or written.
    #[error("vector cache {path}: {message}")]
    Cache { path: PathBuf, message: String },
    /// A configuration value is unusable.
    #[error("[rag] configuration: {0}")]
    Config(String),
}
