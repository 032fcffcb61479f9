//! A local sentence-embedding model loaded from a directory: `model.safetensors`,
//! `config.json` and `tokenizer.json` (the sentence-transformers layout, e.g. all-MiniLM-L6-v2).
//! Mean pooling over the attention mask, then L2 normalisation. Nothing is downloaded.

use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use tokenizers::{Tokenizer, TruncationParams};

use super::bert::{Bert, BertConfig};
use crate::error::RagError;

/// Longest input in tokens (sentence-transformers' `max_seq_length` for MiniLM).
const MAX_TOKENS: usize = 256;
/// Texts per forward pass; sorted by length first so padding stays small.
const BATCH: usize = 16;

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
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &Device::Cpu)
            .map_err(|e| model_err(dir, e))?;
        let model = Bert::load(vb, &cfg).map_err(|e| model_err(dir, e))?;
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

    /// Unit-length embeddings of `texts`, in order.
    pub fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, RagError> {
        let mut ids = Vec::with_capacity(texts.len());
        for t in texts {
            ids.push(self.token_ids(t)?);
        }
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| ids[i].len());
        let mut out = vec![Vec::new(); texts.len()];
        for chunk in order.chunks(BATCH) {
            let batch: Vec<&[u32]> = chunk.iter().map(|&i| ids[i].as_slice()).collect();
            let vecs = self
                .forward(&batch)
                .map_err(|e| RagError::Model(format!("embedding: {e}")))?;
            for (&i, v) in chunk.iter().zip(vecs) {
                out[i] = v;
            }
        }
        Ok(out)
    }

    fn forward(&self, batch: &[&[u32]]) -> candle_core::Result<Vec<Vec<f32>>> {
        let len = batch.iter().map(|b| b.len()).max().unwrap_or(0).max(1);
        let mut flat_ids = Vec::with_capacity(batch.len() * len);
        let mut flat_mask = Vec::with_capacity(batch.len() * len);
        for ids in batch {
            flat_ids.extend_from_slice(ids);
            flat_ids.extend(std::iter::repeat_n(0u32, len - ids.len()));
            flat_mask.extend(std::iter::repeat_n(1f32, ids.len()));
            flat_mask.extend(std::iter::repeat_n(0f32, len - ids.len()));
        }
        let dev = self.model.device();
        let ids = Tensor::from_vec(flat_ids, (batch.len(), len), dev)?;
        let mask = Tensor::from_vec(flat_mask, (batch.len(), len), dev)?;
        let hidden = self.model.forward(&ids, &mask)?;
        // Mean over real tokens, then L2-normalise.
        let m = mask.unsqueeze(2)?;
        let summed = hidden.broadcast_mul(&m)?.sum(1)?;
        let counts = m.sum(1)?.clamp(1e-9, f64::MAX)?;
        let mean = summed.broadcast_div(&counts)?;
        let norm = mean.sqr()?.sum_keepdim(1)?.sqrt()?.clamp(1e-12, f64::MAX)?;
        mean.broadcast_div(&norm)?.to_vec2::<f32>()
    }
}
