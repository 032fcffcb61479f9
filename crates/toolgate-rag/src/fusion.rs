//! Fusing the BM25 and dense rankings into one.
//!
//! Both candidate lists are already filtered (see [`crate::filter`]), so fusion only ever
//! reorders permitted tools. Two methods, compared on the BFCL eval (docs/rag.md):
//! - [`Fusion::Rrf`]: reciprocal rank fusion, Σ 1/(k + rank); ignores score magnitudes.
//! - [`Fusion::Convex`]: α·dense + (1−α)·bm25 after scaling each list's scores to [0, 1]
//!   by its maximum; keeps how far ahead a strong lexical match is.

use std::collections::HashMap;

/// How hybrid search combines the two rankings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fusion {
    Rrf { k: f32 },
    Convex { alpha: f32 },
}

/// Convex with α = 0.6: on the BFCL eval it is never behind either reference at any catalog
/// size, and beats RRF everywhere (docs/rag.md has the sweep).
impl Default for Fusion {
    fn default() -> Self {
        Fusion::Convex { alpha: 0.6 }
    }
}

/// A fusion spec that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseFusionError {
    /// Neither `rrf` nor `convex`.
    #[error("unknown fusion `{0}` (expected rrf[:K] or convex[:ALPHA])")]
    Unknown(String),
    /// The parameter after `:` is not a number.
    #[error("fusion `{spec}`: `{arg}` is not a number")]
    NotANumber { spec: String, arg: String },
    /// A convex weight outside 0..1.
    #[error("fusion `{0}`: alpha must be within 0..1")]
    Alpha(String),
}

impl std::str::FromStr for Fusion {
    type Err = ParseFusionError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (kind, arg) = s.split_once(':').unwrap_or((s, ""));
        let num = |d: f32| -> Result<f32, ParseFusionError> {
            if arg.is_empty() {
                Ok(d)
            } else {
                arg.parse::<f32>()
                    .map_err(|_| ParseFusionError::NotANumber {
                        spec: s.to_owned(),
                        arg: arg.to_owned(),
                    })
            }
        };
        match kind {
            "rrf" => Ok(Fusion::Rrf { k: num(60.0)? }),
            "convex" => {
                let alpha = num(0.5)?;
                if (0.0..=1.0).contains(&alpha) {
                    Ok(Fusion::Convex { alpha })
                } else {
                    Err(ParseFusionError::Alpha(s.to_owned()))
                }
            }
            _ => Err(ParseFusionError::Unknown(s.to_owned())),
        }
    }
}

/// Fuses two best-first lists of `(slot, score)`; returns `(slot, fused score)` best first.
pub fn fuse(fusion: Fusion, lexical: &[(u32, f32)], dense: &[(u32, f32)]) -> Vec<(u32, f32)> {
    let mut acc: HashMap<u32, f32> = HashMap::new();
    match fusion {
        Fusion::Rrf { k } => {
            for list in [lexical, dense] {
                for (rank, &(slot, _)) in list.iter().enumerate() {
                    *acc.entry(slot).or_default() += 1.0 / (k + rank as f32 + 1.0);
                }
            }
        }
        Fusion::Convex { alpha } => {
            for (list, w) in [(lexical, 1.0 - alpha), (dense, alpha)] {
                let max = list.first().map_or(1.0, |x| x.1).max(f32::MIN_POSITIVE);
                for &(slot, s) in list {
                    *acc.entry(slot).or_default() += w * (s.max(0.0) / max);
                }
            }
        }
    }
    let mut out: Vec<(u32, f32)> = acc.into_iter().collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rrf_and_convex() {
        let lex = [(1, 9.0), (2, 1.0)];
        let den = [(2, 0.9), (3, 0.8)];
        let rrf = fuse(Fusion::Rrf { k: 60.0 }, &lex, &den);
        assert_eq!(rrf[0].0, 2);
        let cvx = fuse(Fusion::Convex { alpha: 0.5 }, &lex, &den);
        assert_eq!(cvx.iter().map(|x| x.0).collect::<Vec<_>>(), [2, 1, 3]);
        assert_eq!("rrf".parse(), Ok(Fusion::Rrf { k: 60.0 }));
        assert_eq!("convex:0.3".parse(), Ok(Fusion::Convex { alpha: 0.3 }));
        assert_eq!(
            "convex:2".parse::<Fusion>(),
            Err(ParseFusionError::Alpha("convex:2".into()))
        );
        assert_eq!(
            "rrf:x".parse::<Fusion>(),
            Err(ParseFusionError::NotANumber {
                spec: "rrf:x".into(),
                arg: "x".into()
            })
        );
        assert!(matches!(
            "mean".parse::<Fusion>(),
            Err(ParseFusionError::Unknown(_))
        ));
    }
}
