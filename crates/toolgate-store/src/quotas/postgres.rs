//! [`PgBuckets`]: the buckets of a cluster, one row per key in `quota_buckets`. One statement
//! takes a call: an upsert that locks the key's row, applies the GCRA step with the database's
//! clock and writes the new TAT only when the call is admitted — replicas never race and never
//! disagree about the time. An admitted call costs one round trip, a refused one two.

use async_trait::async_trait;

use super::{Admission, QuotaBuckets, Rate};
use crate::StoreResult;
use crate::pg::{PgPool, pg_error};

/// Buckets shared by every replica on one PostgreSQL database.
#[derive(Clone)]
pub struct PgBuckets {
    pool: PgPool,
}

impl std::fmt::Debug for PgBuckets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgBuckets").finish_non_exhaustive()
    }
}

impl PgBuckets {
    pub fn new(pool: PgPool) -> Self {
        PgBuckets { pool }
    }
}

/// Admits a call, writing the new TAT, or returns no row. `$2` emission, `$3` capacity, in
/// microseconds; `EXCLUDED.tat_us - $2` is the database's now. A key seen for the first time
/// starts full (its first call is admitted: capacity is at least one emission).
const TAKE: &str = "
INSERT INTO quota_buckets AS b (key, tat_us)
SELECT $1, (extract(epoch FROM clock_timestamp()) * 1000000)::bigint + $2
ON CONFLICT (key) DO UPDATE SET tat_us = GREATEST(b.tat_us, EXCLUDED.tat_us - $2) + $2
WHERE GREATEST(b.tat_us, EXCLUDED.tat_us - $2) + $2 - (EXCLUDED.tat_us - $2) <= $3
RETURNING tat_us
";

/// After a refusal: how long until the bucket admits a call.
const WAIT: &str = "
SELECT GREATEST(tat_us, now.us) + $2 - now.us - $3
FROM quota_buckets, (SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint AS us) now
WHERE key = $1
";

#[async_trait]
impl QuotaBuckets for PgBuckets {
    async fn take(&self, key: &str, rate: Rate) -> StoreResult<Admission> {
        let client = self.pool.get().await?;
        let emission = i64::try_from(rate.emission_us).unwrap_or(i64::MAX);
        let capacity = i64::try_from(rate.capacity_us()).unwrap_or(i64::MAX);
        let admitted = client
            .query_opt(TAKE, &[&key, &emission, &capacity])
            .await
            .map_err(pg_error)?;
        if admitted.is_some() {
            return Ok(Admission::Admitted);
        }
        let wait: i64 = client
            .query_opt(WAIT, &[&key, &emission, &capacity])
            .await
            .map_err(pg_error)?
            .map_or(0, |r| r.get(0));
        Ok(Admission::Refused {
            retry_after_us: u64::try_from(wait).unwrap_or(0).max(1),
        })
    }
}
