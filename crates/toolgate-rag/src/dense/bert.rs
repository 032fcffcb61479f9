//! A BERT encoder (the MiniLM family used by sentence-transformers), inference only, one text
//! at a time: embeddings → N × (self-attention, feed-forward), post-layer-norm, exact GELU.
//! Written for this crate against the Hugging Face `BertModel` weight layout (tensor names
//! with or without a `bert.` prefix, read from `model.safetensors`).
//!
//! One text per pass means no padding and no attention mask; the dense layers, which are
//! nearly all of the work, run in [`kernel`](super::kernel).

use safetensors::{Dtype, SafeTensorError, SafeTensors};
use serde::Deserialize;

use super::kernel::{Dense, gelu_in_place};

/// Why the encoder could not be built from `config.json` and `model.safetensors`.
#[derive(Debug, thiserror::Error)]
pub enum WeightsError {
    /// `hidden_act` is not a GELU.
    #[error("unsupported hidden_act `{0}` (expected gelu)")]
    Activation(String),
    /// The hidden size does not split into the heads.
    #[error("hidden_size {hidden} is not a multiple of {heads} heads")]
    Heads { hidden: usize, heads: usize },
    /// The file is not a safetensors file.
    #[error("{0}")]
    Format(SafeTensorError),
    /// A tensor the layout needs is absent (or unreadable).
    #[error("tensor `{name}`: {error}")]
    Tensor {
        name: String,
        error: SafeTensorError,
    },
    /// A tensor has another shape than the configuration implies.
    #[error("tensor `{name}` has shape {found:?}, expected {expected:?}")]
    Shape {
        name: String,
        found: Vec<usize>,
        expected: Vec<usize>,
    },
    /// A tensor is not f32, bf16 or f16.
    #[error("tensor `{name}`: unsupported dtype {dtype:?}")]
    Dtype { name: String, dtype: Dtype },
}

/// The fields of `config.json` the encoder needs.
#[derive(Debug, Clone, Deserialize)]
pub struct BertConfig {
    pub vocab_size: usize,
    pub hidden_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub intermediate_size: usize,
    pub max_position_embeddings: usize,
    #[serde(default = "two")]
    pub type_vocab_size: usize,
    #[serde(default = "eps")]
    pub layer_norm_eps: f64,
    #[serde(default = "gelu")]
    pub hidden_act: String,
}

fn two() -> usize {
    2
}
fn eps() -> f64 {
    1e-12
}
fn gelu() -> String {
    "gelu".to_owned()
}

struct LayerNorm {
    gamma: Vec<f32>,
    beta: Vec<f32>,
    eps: f32,
}

impl LayerNorm {
    /// Normalises each row of `x` (rows of `gamma.len()` values) in place.
    fn apply(&self, x: &mut [f32]) {
        let h = self.gamma.len();
        for row in x.chunks_exact_mut(h) {
            let mean = row.iter().sum::<f32>() / h as f32;
            let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / h as f32;
            let inv = 1.0 / (var + self.eps).sqrt();
            for ((v, g), b) in row.iter_mut().zip(&self.gamma).zip(&self.beta) {
                *v = (*v - mean) * inv * g + b;
            }
        }
    }
}

struct Layer {
    /// Query, key and value fused: `[3 × hidden, hidden]`.
    qkv: Dense,
    attn_out: Dense,
    attn_norm: LayerNorm,
    inter: Dense,
    out: Dense,
    out_norm: LayerNorm,
}

/// The loaded encoder.
pub struct Bert {
    words: Vec<f32>,
    positions: Vec<f32>,
    token_type: Vec<f32>,
    norm: LayerNorm,
    layers: Vec<Layer>,
    hidden: usize,
    heads: usize,
    max_positions: usize,
}

/// The tensors of a safetensors file, by name, as f32.
struct Weights<'a> {
    file: SafeTensors<'a>,
    prefix: &'static str,
}

impl Weights<'_> {
    fn get(&self, name: &str, shape: &[usize]) -> Result<Vec<f32>, WeightsError> {
        let full = format!("{}{name}", self.prefix);
        let t = match self.file.tensor(&full) {
            Ok(t) => t,
            Err(error) => return Err(WeightsError::Tensor { name: full, error }),
        };
        if t.shape() != shape {
            return Err(WeightsError::Shape {
                found: t.shape().to_vec(),
                expected: shape.to_vec(),
                name: full,
            });
        }
        let bytes = t.data();
        Ok(match t.dtype() {
            Dtype::F32 => bytes
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
            Dtype::BF16 => bytes
                .chunks_exact(2)
                .map(|b| f32::from_bits(u32::from(u16::from_le_bytes([b[0], b[1]])) << 16))
                .collect(),
            Dtype::F16 => bytes
                .chunks_exact(2)
                .map(|b| f16_to_f32(u16::from_le_bytes([b[0], b[1]])))
                .collect(),
            dtype => return Err(WeightsError::Dtype { name: full, dtype }),
        })
    }

    fn dense(&self, name: &str, inputs: usize, outputs: usize) -> Result<Dense, WeightsError> {
        let weight = self.get(&format!("{name}.weight"), &[outputs, inputs])?;
        let bias = self.get(&format!("{name}.bias"), &[outputs])?;
        Ok(Dense::new(&weight, &bias, inputs, outputs))
    }

    fn layer_norm(&self, name: &str, size: usize, eps: f64) -> Result<LayerNorm, WeightsError> {
        // Old BERT checkpoints call the parameters gamma/beta.
        let (g, b) = if self.has(&format!("{name}.weight")) {
            ("weight", "bias")
        } else {
            ("gamma", "beta")
        };
        Ok(LayerNorm {
            gamma: self.get(&format!("{name}.{g}"), &[size])?,
            beta: self.get(&format!("{name}.{b}"), &[size])?,
            eps: eps as f32,
        })
    }

    fn has(&self, name: &str) -> bool {
        self.file.tensor(&format!("{}{name}", self.prefix)).is_ok()
    }
}

fn f16_to_f32(h: u16) -> f32 {
    let sign = u32::from(h >> 15) << 31;
    let exp = u32::from((h >> 10) & 0x1f);
    let frac = u32::from(h & 0x3ff);
    let bits = match (exp, frac) {
        (0, 0) => sign,
        (0, _) => {
            // Subnormal: renormalise.
            let shift = frac.leading_zeros() - 21;
            sign | ((113 - shift) << 23) | (((frac << shift) & 0x3ff) << 13)
        }
        (0x1f, _) => sign | 0x7f80_0000 | (frac << 13),
        _ => sign | ((exp + 112) << 23) | (frac << 13),
    };
    f32::from_bits(bits)
}

impl Bert {
    /// Loads the encoder from the bytes of `model.safetensors`.
    pub fn load(safetensors: &[u8], cfg: &BertConfig) -> Result<Self, WeightsError> {
        if !matches!(cfg.hidden_act.as_str(), "gelu" | "gelu_new") {
            return Err(WeightsError::Activation(cfg.hidden_act.clone()));
        }
        let file = SafeTensors::deserialize(safetensors).map_err(WeightsError::Format)?;
        let mut w = Weights { file, prefix: "" };
        if w.has("bert.embeddings.word_embeddings.weight") {
            w.prefix = "bert.";
        }
        let h = cfg.hidden_size;
        let heads = cfg.num_attention_heads.max(1);
        if !h.is_multiple_of(heads) {
            return Err(WeightsError::Heads { hidden: h, heads });
        }
        let e = "embeddings";
        let types = w.get(
            &format!("{e}.token_type_embeddings.weight"),
            &[cfg.type_vocab_size, h],
        )?;
        let mut layers = Vec::with_capacity(cfg.num_hidden_layers);
        for i in 0..cfg.num_hidden_layers {
            let l = format!("encoder.layer.{i}");
            let a = format!("{l}.attention");
            let mut weight = Vec::with_capacity(3 * h * h);
            let mut bias = Vec::with_capacity(3 * h);
            for part in ["query", "key", "value"] {
                weight.extend(w.get(&format!("{a}.self.{part}.weight"), &[h, h])?);
                bias.extend(w.get(&format!("{a}.self.{part}.bias"), &[h])?);
            }
            let qkv = Dense::new(&weight, &bias, h, 3 * h);
            layers.push(Layer {
                qkv,
                attn_out: w.dense(&format!("{a}.output.dense"), h, h)?,
                attn_norm: w.layer_norm(&format!("{a}.output.LayerNorm"), h, cfg.layer_norm_eps)?,
                inter: w.dense(&format!("{l}.intermediate.dense"), h, cfg.intermediate_size)?,
                out: w.dense(&format!("{l}.output.dense"), cfg.intermediate_size, h)?,
                out_norm: w.layer_norm(&format!("{l}.output.LayerNorm"), h, cfg.layer_norm_eps)?,
            });
        }
        Ok(Bert {
            words: w.get(&format!("{e}.word_embeddings.weight"), &[cfg.vocab_size, h])?,
            positions: w.get(
                &format!("{e}.position_embeddings.weight"),
                &[cfg.max_position_embeddings, h],
            )?,
            token_type: types[..h].to_vec(),
            norm: w.layer_norm(&format!("{e}.LayerNorm"), h, cfg.layer_norm_eps)?,
            layers,
            hidden: h,
            heads,
            max_positions: cfg.max_position_embeddings,
        })
    }

    pub fn hidden_size(&self) -> usize {
        self.hidden
    }

    /// The mean of the last hidden states over the tokens of `ids` (`[CLS] … [SEP]`),
    /// `hidden_size` values. Ids past the vocabulary read as `[PAD]` (0).
    pub fn mean_pooled(&self, ids: &[u32]) -> Vec<f32> {
        let h = self.hidden;
        let len = ids.len().min(self.max_positions).max(1);
        let mut x = vec![0f32; len * h];
        for (p, row) in x.chunks_exact_mut(h).enumerate() {
            let id = ids.get(p).map_or(0, |&i| i as usize);
            let id = if (id + 1) * h <= self.words.len() {
                id
            } else {
                0
            };
            let word = &self.words[id * h..(id + 1) * h];
            let pos = &self.positions[p * h..(p + 1) * h];
            for i in 0..h {
                row[i] = word[i] + pos[i] + self.token_type[i];
            }
        }
        self.norm.apply(&mut x);
        for l in &self.layers {
            let qkv = l.qkv.forward(&x, len);
            let ctx = self.attention(&qkv, len);
            let mut a = l.attn_out.forward(&ctx, len);
            add(&mut a, &x);
            l.attn_norm.apply(&mut a);
            let mut i = l.inter.forward(&a, len);
            gelu_in_place(&mut i);
            let mut o = l.out.forward(&i, len);
            add(&mut o, &a);
            l.out_norm.apply(&mut o);
            x = o;
        }
        let mut mean = vec![0f32; h];
        for row in x.chunks_exact(h) {
            add(&mut mean, row);
        }
        mean.iter_mut().for_each(|v| *v /= len as f32);
        mean
    }

    /// Multi-head self-attention over `qkv` (`len` rows of query | key | value); returns the
    /// heads' outputs concatenated, `len` rows of `hidden`.
    fn attention(&self, qkv: &[f32], len: usize) -> Vec<f32> {
        let h = self.hidden;
        let d = h / self.heads;
        let scale = 1.0 / (d as f32).sqrt();
        let mut ctx = vec![0f32; len * h];
        let mut scores = vec![0f32; len];
        for head in 0..self.heads {
            let at = |row: usize, part: usize| {
                let start = row * 3 * h + part * h + head * d;
                &qkv[start..start + d]
            };
            for i in 0..len {
                let q = at(i, 0);
                for (j, s) in scores.iter_mut().enumerate() {
                    *s = q.iter().zip(at(j, 1)).map(|(a, b)| a * b).sum::<f32>() * scale;
                }
                let max = scores.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                let mut total = 0.0;
                for s in scores.iter_mut() {
                    *s = (*s - max).exp();
                    total += *s;
                }
                let out = &mut ctx[i * h + head * d..i * h + (head + 1) * d];
                for (j, s) in scores.iter().enumerate() {
                    let p = s / total;
                    for (o, v) in out.iter_mut().zip(at(j, 2)) {
                        *o += p * v;
                    }
                }
            }
        }
        ctx
    }
}

fn add(into: &mut [f32], other: &[f32]) {
    into.iter_mut().zip(other).for_each(|(a, b)| *a += b);
}

#[cfg(test)]
mod tests {
    use super::f16_to_f32;

    #[test]
    fn half_floats_convert_exactly() {
        for (bits, want) in [
            (0x3c00u16, 1.0f32),
            (0xc000, -2.0),
            (0x3555, 0.333_251_95),
            (0x0001, 5.960_464_5e-8),
            (0x7bff, 65504.0),
            (0x0000, 0.0),
        ] {
            assert_eq!(f16_to_f32(bits), want, "{bits:#06x}");
        }
        assert!(f16_to_f32(0x7c00).is_infinite());
        assert!(f16_to_f32(0x7e00).is_nan());
    }
}
