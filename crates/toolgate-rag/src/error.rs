//! Errors of the retrieval layer.

use std::path::PathBuf;

pub use crate::endpoint::EndpointError;

#[derive(Debug, thiserror::Error)]
pub enum RagError {
    /// The embedding model could not be loaded or run.
    #[error("embedding model: {0}")]
    Model(String),
    /// The embeddings endpoint refused or failed.
    #[error("embeddings endpoint: {0}")]
    Endpoint(EndpointError),
    /// The reranker endpoint refused or failed.
    #[error("reranker: {0}")]
    Reranker(EndpointError),
    /// The vector cache could not be opened, read or written.
    #[error("vector cache {path}: {message}")]
    Cache { path: PathBuf, message: String },
    /// An endpoint's configured URL does not parse (`what`: embeddings or reranker).
    #[error("[rag] configuration: {what} url `{url}`: {error}")]
    Url {
        what: &'static str,
        url: String,
        error: url::ParseError,
    },
    /// A dense search was asked for without an embedder.
    #[error(
        "[rag] configuration: dense search needs an embedding model: set [rag] model_dir or \
         [rag.endpoint]"
    )]
    NoEmbedder,
}
