//! A local sentence-embedding model loaded from a directory: `model.safetensors`,
//! `config.json` and `tokenizer.json` (the sentence-transformers layout, e.g. all-MiniLM-L6-v2).
//! Mean pooling over the tokens, then L2 normalisation. Nothing is downloaded.

use std::path::{Path, PathBuf};

use rayon::prelude::*;
use tokenizers::{Tokenizer, TruncationParams};

use super::bert::{Bert, BertConfig};
use super::normalize;
use crate::error::RagError;

/// Longest input in tokens (sentence-transformers' `max_seq_length` for MiniLM).
const MAX_TOKENS: usize = 256;

/// A BERT-family sentence encoder on the CPU.
pub struct LocalEmbedder {
    model: Bert,
    tokenizer: Tokenizer,
    dim: usize,
    id: String,
}

impl std::fmt::Debug for LocalEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalEmbedder")
            .field("id", &self.id)
            .field("dim", &self.dim)
            .finish()
    }
}

fn model_err(dir: &Path, what: impl std::fmt::Display) -> RagError {
    RagError::Model(format!("{}: {what}", dir.display()))
}

impl LocalEmbedder {
    /// Loads the model in `dir`. Fails with a message naming the missing file.
    pub fn load(dir: impl AsRef<Path>) -> Result<Self, RagError> {
        let dir = dir.as_ref();
        let file = |name: &str| -> Result<PathBuf, RagError> {
            let p = dir.join(name);
            if p.is_file() {
                Ok(p)
            } else {
                Err(model_err(
                    dir,
                    format!(
                        "missing `{name}` (expected a sentence-transformers model directory with model.safetensors, config.json and tokenizer.json)"
                    ),
                ))
            }
        };
        let config_text =
            std::fs::read_to_string(file("config.json")?).map_err(|e| model_err(dir, e))?;
        let cfg: BertConfig = serde_json::from_str(&config_text)
            .map_err(|e| model_err(dir, format!("config.json: {e}")))?;
        let weights = std::fs::read(file("model.safetensors")?).map_err(|e| model_err(dir, e))?;
        let model = Bert::load(&weights, &cfg)
            .map_err(|e| model_err(dir, format!("model.safetensors: {e}")))?;
        let mut tokenizer = Tokenizer::from_file(file("tokenizer.json")?)
            .map_err(|e| model_err(dir, format!("tokenizer.json: {e}")))?;
        // tokenizer.json pads every input to 128; pooling must see real tokens only.
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS.min(cfg.max_position_embeddings),
                ..TruncationParams::default()
            }))
            .map_err(|e| model_err(dir, e))?;
        let name = dir
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("model")
            .to_owned();
        Ok(LocalEmbedder {
            model,
            tokenizer,
            dim: cfg.hidden_size,
            id: format!("local:{name}:{}x{}", cfg.num_hidden_layers, cfg.hidden_size),
        })
    }

    /// Identifies the model in the vector cache.
    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The token ids of `text` (with `[CLS]`/`[SEP]`, no padding).
    pub fn token_ids(&self, text: &str) -> Result<Vec<u32>, RagError> {
        let enc = self
            .tokenizer
            .encode(text, true)
            .map_err(|e| RagError::Model(format!("tokenizing: {e}")))?;
        Ok(enc.get_ids().to_vec())
    }

    /// Unit-length embeddings of `texts`, in order. Several texts are spread over the CPUs.
    pub fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, RagError> {
        let ids = texts
            .iter()
            .map(|t| self.token_ids(t))
            .collect::<Result<Vec<_>, _>>()?;
        let one = |ids: &Vec<u32>| {
            let mut v = self.model.mean_pooled(ids);
            normalize(&mut v);
            v
        };
        Ok(if ids.len() == 1 {
            ids.iter().map(one).collect()
        } else {
            ids.par_iter().map(one).collect()
        })
    }
}
