//! Dense retrieval: sentence embeddings from a local model ([`LocalEmbedder`]) or an
//! OpenAI-compatible endpoint ([`RemoteEmbedder`]), behind one [`Embedder`].

pub mod bert;
pub mod kernel;
pub mod local;
pub mod remote;

pub use local::LocalEmbedder;
pub use remote::RemoteEmbedder;

use crate::error::RagError;

/// Where vectors come from (R-RAG-3); "none" is the absence of an embedder (BM25 only).
#[derive(Debug)]
pub enum Embedder {
    Local(std::sync::Arc<LocalEmbedder>),
    Remote(RemoteEmbedder),
}

impl Embedder {
    /// The model's identity in the vector cache.
    pub fn id(&self) -> &str {
        match self {
            Embedder::Local(m) => m.id(),
            Embedder::Remote(m) => m.id(),
        }
    }

    /// Unit-length vectors for `texts`, in order. The local model runs on the blocking pool,
    /// never on an async worker.
    pub async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, RagError> {
        match self {
            Embedder::Local(m) => {
                let (m, texts) = (std::sync::Arc::clone(m), texts.to_vec());
                tokio::task::spawn_blocking(move || m.embed(&texts))
                    .await
                    .map_err(|e| RagError::Model(format!("the encoder's task failed: {e}")))?
            }
            Embedder::Remote(m) => m.embed(texts).await,
        }
    }
}

/// Scales `v` to unit length (no-op for the zero vector).
pub fn normalize(v: &mut [f32]) {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if n > 0.0 {
        v.iter_mut().for_each(|x| *x /= n);
    }
}
