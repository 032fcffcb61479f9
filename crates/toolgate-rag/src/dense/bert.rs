//! A BERT encoder (the MiniLM family used by sentence-transformers) on candle, inference
//! only: embeddings → N × (self-attention, feed-forward), post-layer-norm, exact GELU.
//! Written for this crate against the Hugging Face `BertModel` weight layout (tensor names
//! with or without a `bert.` prefix), so candle-transformers is not needed.

use candle_core::{DType, Device, Module, Tensor};
use candle_nn::{Embedding, LayerNorm, Linear, VarBuilder};
use serde::Deserialize;

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

struct Layer {
    query: Linear,
    key: Linear,
    value: Linear,
    attn_out: Linear,
    attn_norm: LayerNorm,
    inter: Linear,
    out: Linear,
    out_norm: LayerNorm,
}

/// The loaded encoder.
pub struct Bert {
    words: Embedding,
    positions: Embedding,
    types: Embedding,
    norm: LayerNorm,
    layers: Vec<Layer>,
    heads: usize,
    head_dim: usize,
    device: Device,
}

fn layer_norm(size: usize, eps: f64, vb: VarBuilder<'_>) -> candle_core::Result<LayerNorm> {
    candle_nn::layer_norm(size, eps, vb)
}

impl Bert {
    /// Loads weights from `vb` (the root of a `BertModel` checkpoint).
    pub fn load(vb: VarBuilder<'_>, cfg: &BertConfig) -> candle_core::Result<Self> {
        if !matches!(cfg.hidden_act.as_str(), "gelu" | "gelu_new") {
            return Err(candle_core::Error::Msg(format!(
                "unsupported hidden_act `{}` (expected gelu)",
                cfg.hidden_act
            )));
        }
        let vb = if vb.contains_tensor("bert.embeddings.word_embeddings.weight") {
            vb.pp("bert")
        } else {
            vb
        };
        let h = cfg.hidden_size;
        let e = vb.pp("embeddings");
        let words = candle_nn::embedding(cfg.vocab_size, h, e.pp("word_embeddings"))?;
        let positions =
            candle_nn::embedding(cfg.max_position_embeddings, h, e.pp("position_embeddings"))?;
        let types = candle_nn::embedding(cfg.type_vocab_size, h, e.pp("token_type_embeddings"))?;
        let norm = layer_norm(h, cfg.layer_norm_eps, e.pp("LayerNorm"))?;
        let mut layers = Vec::with_capacity(cfg.num_hidden_layers);
        for i in 0..cfg.num_hidden_layers {
            let l = vb.pp(format!("encoder.layer.{i}"));
            let a = l.pp("attention");
            layers.push(Layer {
                query: candle_nn::linear(h, h, a.pp("self.query"))?,
                key: candle_nn::linear(h, h, a.pp("self.key"))?,
                value: candle_nn::linear(h, h, a.pp("self.value"))?,
                attn_out: candle_nn::linear(h, h, a.pp("output.dense"))?,
                attn_norm: layer_norm(h, cfg.layer_norm_eps, a.pp("output.LayerNorm"))?,
                inter: candle_nn::linear(h, cfg.intermediate_size, l.pp("intermediate.dense"))?,
                out: candle_nn::linear(cfg.intermediate_size, h, l.pp("output.dense"))?,
                out_norm: layer_norm(h, cfg.layer_norm_eps, l.pp("output.LayerNorm"))?,
            });
        }
        let heads = cfg.num_attention_heads.max(1);
        Ok(Bert {
            words,
            positions,
            types,
            norm,
            layers,
            heads,
            head_dim: h / heads,
            device: vb.device().clone(),
        })
    }

    pub fn device(&self) -> &Device {
        &self.device
    }

    /// Hidden states `[batch, len, hidden]` for `ids` `[batch, len]` (u32) with `mask`
    /// `[batch, len]` (f32, 1 for tokens, 0 for padding).
    pub fn forward(&self, ids: &Tensor, mask: &Tensor) -> candle_core::Result<Tensor> {
        let (b, len) = ids.dims2()?;
        let pos = Tensor::arange(0u32, len as u32, &self.device)?.unsqueeze(0)?;
        let types = ids.zeros_like()?;
        let mut x = self
            .words
            .forward(ids)?
            .broadcast_add(&self.positions.forward(&pos)?)?
            .add(&self.types.forward(&types)?)?;
        x = self.norm.forward(&x)?;
        // Additive attention bias: 0 for tokens, a large negative for padding.
        let bias = ((mask.to_dtype(DType::F32)? - 1.0)? * 1e9)?.reshape((b, 1, 1, len))?;
        let scale = 1.0 / (self.head_dim as f64).sqrt();
        for l in &self.layers {
            let split = |t: Tensor| -> candle_core::Result<Tensor> {
                t.reshape((b, len, self.heads, self.head_dim))?
                    .transpose(1, 2)?
                    .contiguous()
            };
            let q = split(l.query.forward(&x)?)?;
            let k = split(l.key.forward(&x)?)?;
            let v = split(l.value.forward(&x)?)?;
            let scores = (q.matmul(&k.t()?.contiguous()?)? * scale)?.broadcast_add(&bias)?;
            let probs = candle_nn::ops::softmax_last_dim(&scores)?;
            let ctx = probs.matmul(&v)?.transpose(1, 2)?.contiguous()?.reshape((
                b,
                len,
                self.heads * self.head_dim,
            ))?;
            let a = l.attn_norm.forward(&(l.attn_out.forward(&ctx)? + &x)?)?;
            let i = l.inter.forward(&a)?.gelu_erf()?;
            x = l.out_norm.forward(&(l.out.forward(&i)? + &a)?)?;
        }
        Ok(x)
    }
}
