//! Quota buckets (R-SRV-5): how many calls a key (a principal, a tool, or both) may make per
//! interval, as a token bucket kept in the GCRA form — one number per key, the *theoretical
//! arrival time* (TAT) of the next call. A call at `now` with emission interval `T` (interval
//! ÷ rate) and burst `B` is admitted when `max(TAT, now) + T − now ≤ B·T`, which then becomes
//! the new TAT; otherwise it is refused and may retry after the excess.
//!
//! - [`MemoryBuckets`]: one process's buckets, in memory (tests; a restart refills every
//!   bucket).
//! - [`SqliteBuckets`]: one row per key in the embedded database (`quota_buckets`), shared by
//!   every process on the data dir — a one-shot `toolgate call` included.
//! - [`PgBuckets`]: one row per key in PostgreSQL (`quota_buckets`, schema 9), updated in one
//!   statement under the row's lock with the database's clock — so every replica of a cluster
//!   draws from the same bucket and the limit is exact across them.

mod memory;
mod postgres;
mod sqlite;

use async_trait::async_trait;

pub use memory::MemoryBuckets;
pub use postgres::PgBuckets;
pub use sqlite::SqliteBuckets;

use crate::StoreResult;

/// A bucket's shape: one call every `emission_us` on average, `burst` calls at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    /// Interval ÷ calls, in microseconds (at least 1).
    pub emission_us: u64,
    /// Calls a full bucket admits back to back (at least 1).
    pub burst: u32,
}

impl Rate {
    /// `calls` per `interval`, bursts of up to `burst`.
    pub fn new(calls: u32, interval: std::time::Duration, burst: u32) -> Rate {
        let interval_us = u64::try_from(interval.as_micros()).unwrap_or(u64::MAX);
        Rate {
            emission_us: (interval_us / u64::from(calls.max(1))).max(1),
            burst: burst.max(1),
        }
    }

    /// The most the TAT may run ahead of now: `burst × emission`.
    pub fn capacity_us(&self) -> u64 {
        self.emission_us.saturating_mul(u64::from(self.burst))
    }
}

/// Whether a call was admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    Admitted,
    /// Refused; the bucket admits a call again after this many microseconds.
    Refused {
        retry_after_us: u64,
    },
}

/// Where buckets live.
#[async_trait]
pub trait QuotaBuckets: Send + Sync + 'static {
    /// Takes one call from `key`'s bucket of shape `rate`, or says when it could.
    async fn take(&self, key: &str, rate: Rate) -> StoreResult<Admission>;
}

/// The GCRA step: the new TAT when admitted, or how long until it would be.
pub fn gcra(tat_us: u64, now_us: u64, rate: Rate) -> Result<u64, u64> {
    let next = tat_us.max(now_us).saturating_add(rate.emission_us);
    let ahead = next - now_us;
    if ahead <= rate.capacity_us() {
        Ok(next)
    } else {
        Err(ahead - rate.capacity_us())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_bucket_admits_its_burst_then_one_per_emission() {
        let rate = Rate::new(10, Duration::from_secs(1), 3);
        assert_eq!(rate.emission_us, 100_000);
        let mut tat = 0;
        for _ in 0..3 {
            tat = gcra(tat, 1_000_000, rate).unwrap();
        }
        assert_eq!(gcra(tat, 1_000_000, rate), Err(100_000));
        assert_eq!(gcra(tat, 1_050_000, rate), Err(50_000));
        assert!(gcra(tat, 1_100_000, rate).is_ok());
    }
}
