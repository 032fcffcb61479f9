//! What a run cost: [`Tokens`] per answered entry, a [`Price`] per million tokens, and the
//! [`CostFigures`] reported beside accuracy — tokens in and out, tokens per solved entry,
//! the run's cost in USD and pass@1 per dollar (MCPMark's cost efficiency: accuracy divided
//! by what the run cost).
//!
//! Pure arithmetic, no IO: the price comes from `[model.prices]` through the binary, the
//! token counts from the model's answers (or an outputs file that kept them).

use serde::{Deserialize, Serialize};

/// Tokens one answer used, as the provider reported them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tokens {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

impl Tokens {
    /// Input plus output.
    pub fn total(self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }

    /// Both counts added.
    pub fn add(&mut self, other: Tokens) {
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
    }
}

/// A model's price in USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Price {
    pub input_usd_per_mtok: f64,
    pub output_usd_per_mtok: f64,
}

impl Price {
    /// What `tokens` cost. One division at the end, so whole-dollar prices give the
    /// correctly rounded figure (`6800 / 1e6` is the same double as `0.0068`).
    pub fn cost_usd(self, tokens: Tokens) -> f64 {
        (tokens.input_tokens as f64 * self.input_usd_per_mtok
            + tokens.output_tokens as f64 * self.output_usd_per_mtok)
            / 1_000_000.0
    }
}

/// The cost columns of one row of the report (a category or the whole run).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CostFigures {
    /// Entries whose answer carried token counts (the others count no tokens).
    pub metered: usize,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// (input + output) / passed; `None` when nothing passed.
    pub tokens_per_solved: Option<f64>,
    /// `None` without a price for the model.
    pub cost_usd: Option<f64>,
    /// pass@1 (passed / total) / cost; `None` without a price or when the run cost nothing.
    pub pass_at_1_per_usd: Option<f64>,
}

impl CostFigures {
    /// The figures of a row that judged `total` entries, `passed` of them passing, using
    /// `tokens` over `metered` entries.
    pub fn of(
        passed: usize,
        total: usize,
        metered: usize,
        tokens: Tokens,
        price: Option<Price>,
    ) -> CostFigures {
        let cost_usd = price.map(|p| p.cost_usd(tokens));
        let accuracy = if total == 0 {
            0.0
        } else {
            passed as f64 / total as f64
        };
        CostFigures {
            metered,
            input_tokens: tokens.input_tokens,
            output_tokens: tokens.output_tokens,
            tokens_per_solved: (passed > 0).then(|| tokens.total() as f64 / passed as f64),
            cost_usd,
            pass_at_1_per_usd: cost_usd.filter(|c| *c > 0.0).map(|c| accuracy / c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PRICE: Price = Price {
        input_usd_per_mtok: 2.0,
        output_usd_per_mtok: 8.0,
    };

    #[test]
    fn figures_follow_from_tokens_and_price() {
        let tokens = Tokens {
            input_tokens: 3000,
            output_tokens: 100,
        };
        assert_eq!(
            CostFigures::of(1, 3, 3, tokens, Some(PRICE)),
            CostFigures {
                metered: 3,
                input_tokens: 3000,
                output_tokens: 100,
                tokens_per_solved: Some(3100.0),
                cost_usd: Some(0.0068),
                pass_at_1_per_usd: Some((1.0 / 3.0) / 0.0068),
            }
        );
    }

    #[test]
    fn nothing_solved_or_nothing_paid_leaves_ratios_empty() {
        let none = CostFigures::of(0, 2, 0, Tokens::default(), Some(PRICE));
        assert_eq!(
            (
                none.tokens_per_solved,
                none.cost_usd,
                none.pass_at_1_per_usd
            ),
            (None, Some(0.0), None)
        );
        let unpriced = CostFigures::of(
            2,
            2,
            2,
            Tokens {
                input_tokens: 10,
                output_tokens: 0,
            },
            None,
        );
        assert_eq!(
            (
                unpriced.tokens_per_solved,
                unpriced.cost_usd,
                unpriced.pass_at_1_per_usd
            ),
            (Some(5.0), None, None)
        );
    }
}
