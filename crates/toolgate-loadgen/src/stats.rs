//! Latency percentiles by nearest rank over every sample (no histogram buckets: a run holds
//! at most a few million samples).

use serde::{Deserialize, Serialize};

/// Latencies of the measured calls, in microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Latency {
    pub p50_us: u64,
    pub p90_us: u64,
    pub p99_us: u64,
    pub max_us: u64,
    pub mean_us: u64,
}

/// The percentiles of `samples` (µs); `None` when there are none.
pub fn summarize(mut samples: Vec<u64>) -> Option<Latency> {
    if samples.is_empty() {
        return None;
    }
    samples.sort_unstable();
    let sum: u64 = samples.iter().sum();
    let count = samples.len() as u64;
    Some(Latency {
        p50_us: percentile(&samples, 50),
        p90_us: percentile(&samples, 90),
        p99_us: percentile(&samples, 99),
        max_us: samples[samples.len() - 1],
        mean_us: sum / count,
    })
}

/// Nearest rank: the smallest sample with at least `pct`% of the samples at or below it.
fn percentile(sorted: &[u64], pct: usize) -> u64 {
    let rank = (pct * sorted.len()).div_ceil(100).max(1);
    sorted[rank - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let samples: Vec<u64> = (1..=200).rev().collect();
        assert_eq!(
            summarize(samples),
            Some(Latency {
                p50_us: 100,
                p90_us: 180,
                p99_us: 198,
                max_us: 200,
                mean_us: 100,
            })
        );
    }

    #[test]
    fn one_sample_is_every_percentile() {
        assert_eq!(
            summarize(vec![42]),
            Some(Latency {
                p50_us: 42,
                p90_us: 42,
                p99_us: 42,
                max_us: 42,
                mean_us: 42,
            })
        );
        assert_eq!(summarize(Vec::new()), None);
    }
}
