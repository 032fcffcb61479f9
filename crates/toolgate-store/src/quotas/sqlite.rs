//! [`SqliteBuckets`]: the buckets in the embedded database (`quota_buckets`), so every
//! process on one data dir — `toolgate serve` and each one-shot `toolgate call` — draws from
//! the same bucket. A bucket kept in a process's memory refills with every new process, and
//! a CLI call is a new process.
//!
//! Each take is one `BEGIN IMMEDIATE` transaction (read the TAT, write the new one) on the
//! blocking pool, timed by the wall clock (the processes share no monotonic one). A take
//! commits with `synchronous = NORMAL` (set for its transaction on the pooled connection, and
//! back to `FULL` after): in WAL mode such a commit is not synced, so a power loss may refill
//! a bucket by its last few calls, and a take costs no fsync.

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use rusqlite::{OptionalExtension, TransactionBehavior, params};

use super::{Admission, QuotaBuckets, Rate, gcra};
use crate::StoreResult;
use crate::db::EmbeddedDb;

/// Buckets in the embedded database, shared by the processes that open it.
#[derive(Clone)]
pub struct SqliteBuckets {
    conn: EmbeddedDb,
}

impl std::fmt::Debug for SqliteBuckets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteBuckets").finish_non_exhaustive()
    }
}

impl SqliteBuckets {
    /// Opens the database at `db` on a pool of its own (creating it and every table if
    /// needed). A process with several stores opens one [`EmbeddedDb`] and uses [`Self::new`].
    pub fn open(db: &Path) -> StoreResult<Self> {
        Ok(Self::new(EmbeddedDb::open(db)?))
    }

    /// The tables in `db`, whose schema the pool created.
    pub fn new(db: EmbeddedDb) -> Self {
        SqliteBuckets { conn: db }
    }
}

fn now_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
}

#[async_trait]
impl QuotaBuckets for SqliteBuckets {
    async fn take(&self, key: &str, rate: Rate) -> StoreResult<Admission> {
        let key = key.to_owned();
        self.conn
            .run("quota buckets", move |conn| {
                conn.pragma_update(None, "synchronous", "NORMAL")?;
                let taken = take(conn, &key, rate);
                conn.pragma_update(None, "synchronous", "FULL")?;
                taken
            })
            .await
    }
}

/// One take: read the bucket's TAT and write the next one in a `BEGIN IMMEDIATE` transaction.
fn take(conn: &mut rusqlite::Connection, key: &str, rate: Rate) -> StoreResult<Admission> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let tat: Option<i64> = tx
        .query_row(
            "SELECT tat_us FROM quota_buckets WHERE key = ?1",
            params![key],
            |r| r.get(0),
        )
        .optional()?;
    let tat = tat.map_or(0, |t| u64::try_from(t).unwrap_or(0));
    let admission = match gcra(tat, now_us(), rate) {
        Ok(next) => {
            tx.execute(
                "INSERT INTO quota_buckets (key, tat_us) VALUES (?1, ?2) \
                 ON CONFLICT(key) DO UPDATE SET tat_us = excluded.tat_us",
                params![key, i64::try_from(next).unwrap_or(i64::MAX)],
            )?;
            Admission::Admitted
        }
        Err(wait) => Admission::Refused {
            retry_after_us: wait,
        },
    };
    tx.commit()?;
    Ok(admission)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Two handles on one file (two processes) draw from the same bucket.
    #[tokio::test]
    async fn handles_on_one_database_share_each_bucket() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("toolgate.db");
        let rate = Rate::new(2, Duration::from_secs(3600), 2);
        let a = SqliteBuckets::open(&db).unwrap();
        assert_eq!(a.take("alice", rate).await.unwrap(), Admission::Admitted);
        let b = SqliteBuckets::open(&db).unwrap();
        assert_eq!(b.take("alice", rate).await.unwrap(), Admission::Admitted);
        let third = SqliteBuckets::open(&db).unwrap();
        assert!(matches!(
            third.take("alice", rate).await.unwrap(),
            Admission::Refused { retry_after_us } if retry_after_us > 0
        ));
        assert_eq!(third.take("bob", rate).await.unwrap(), Admission::Admitted);
    }
}
