//! Retrieval metrics for one query and their mean over a query set: recall@1/5/10, MRR and
//! nDCG@10 with binary relevance. Recall@k is the fraction of the query's relevant tools
//! found in the top k (a query with two ground-truth functions needs both for 1.0).

use std::collections::HashSet;

use serde::Serialize;

/// The metrics of one ranking.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Metrics {
    pub recall_at_1: f64,
    pub recall_at_5: f64,
    pub recall_at_10: f64,
    pub mrr: f64,
    pub ndcg_at_10: f64,
}

impl Metrics {
    /// Scores `ranked` (best first) against the `relevant` set.
    pub fn of<S: AsRef<str>>(ranked: &[S], relevant: &HashSet<String>) -> Metrics {
        if relevant.is_empty() {
            return Metrics::default();
        }
        let total = relevant.len() as f64;
        let hit = |i: usize| ranked.get(i).is_some_and(|n| relevant.contains(n.as_ref()));
        let recall = |k: usize| (0..k.min(ranked.len())).filter(|&i| hit(i)).count() as f64 / total;
        let mrr = (0..ranked.len())
            .find(|&i| hit(i))
            .map_or(0.0, |i| 1.0 / (i as f64 + 1.0));
        let dcg: f64 = (0..10.min(ranked.len()))
            .filter(|&i| hit(i))
            .map(|i| 1.0 / (i as f64 + 2.0).log2())
            .sum();
        let ideal: f64 = (0..relevant.len().min(10))
            .map(|i| 1.0 / (i as f64 + 2.0).log2())
            .sum();
        Metrics {
            recall_at_1: recall(1),
            recall_at_5: recall(5),
            recall_at_10: recall(10),
            mrr,
            ndcg_at_10: if ideal > 0.0 { dcg / ideal } else { 0.0 },
        }
    }
}

/// A running mean of [`Metrics`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct MetricsSum {
    sum: Metrics,
    pub queries: usize,
}

impl MetricsSum {
    pub fn add(&mut self, m: Metrics) {
        self.sum.recall_at_1 += m.recall_at_1;
        self.sum.recall_at_5 += m.recall_at_5;
        self.sum.recall_at_10 += m.recall_at_10;
        self.sum.mrr += m.mrr;
        self.sum.ndcg_at_10 += m.ndcg_at_10;
        self.queries += 1;
    }

    pub fn mean(&self) -> Metrics {
        let n = self.queries.max(1) as f64;
        Metrics {
            recall_at_1: self.sum.recall_at_1 / n,
            recall_at_5: self.sum.recall_at_5 / n,
            recall_at_10: self.sum.recall_at_10 / n,
            mrr: self.sum.mrr / n,
            ndcg_at_10: self.sum.ndcg_at_10 / n,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_query() {
        let rel: HashSet<String> = ["b".to_owned(), "z".to_owned()].into();
        let m = Metrics::of(&["a", "b", "c"], &rel);
        assert_eq!(m.recall_at_1, 0.0);
        assert_eq!(m.recall_at_5, 0.5);
        assert_eq!(m.mrr, 0.5);
        let ideal = 1.0 + 1.0 / 3f64.log2();
        assert!((m.ndcg_at_10 - (1.0 / 3f64.log2()) / ideal).abs() < 1e-12);
        let mut s = MetricsSum::default();
        s.add(m);
        s.add(Metrics::of(&["b", "z"], &rel));
        assert_eq!(s.mean().recall_at_1, 0.25);
        assert_eq!(s.mean().recall_at_5, 0.75);
    }
}
