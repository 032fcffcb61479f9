//! The cluster backend: offloaded results in PostgreSQL (`offloaded_results`, schema 2), so
//! `read_result` of a result stored on one replica works on every other. A page reads only
//! its window (`substring` of the `BYTEA`), never the whole text; retention is one `DELETE`
//! after each insert, newest kept first, the new result never evicted.

use async_trait::async_trait;

use super::{ResultBackend, ResultRetention, Window};
use crate::StoreResult;
use crate::pg::{PgPool, from_ms, ms, pg_error};

/// Offloaded results in one PostgreSQL database.
#[derive(Debug, Clone)]
pub struct PgResults {
    pool: PgPool,
}

impl PgResults {
    pub fn new(pool: PgPool) -> Self {
        PgResults { pool }
    }
}

fn now_ms() -> u64 {
    (crate::clock::system_clock())()
}

#[async_trait]
impl ResultBackend for PgResults {
    async fn put(
        &self,
        id: &str,
        call_id: &str,
        text: &str,
        retention: ResultRetention,
    ) -> StoreResult<()> {
        let now = now_ms();
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await.map_err(pg_error)?;
        tx.execute(
            "INSERT INTO offloaded_results (id, call_id, created_at_ms, bytes, body) \
             VALUES ($1, $2, $3, $4, $5)",
            &[
                &id,
                &call_id,
                &ms(now),
                &i64::try_from(text.len()).unwrap_or(i64::MAX),
                &text.as_bytes(),
            ],
        )
        .await
        .map_err(pg_error)?;
        let max_age_ms = u64::try_from(retention.max_age.as_millis()).unwrap_or(u64::MAX);
        let cutoff = if retention.max_age.is_zero() {
            0
        } else {
            from_ms(ms(now.saturating_sub(max_age_ms)))
        };
        let max_count = i64::try_from(retention.max_count).unwrap_or(i64::MAX);
        tx.execute(
            "DELETE FROM offloaded_results WHERE id <> $1 AND (created_at_ms < $2 OR id IN ( \
               SELECT id FROM ( \
                 SELECT id, \
                   sum(bytes) OVER (ORDER BY created_at_ms DESC, id DESC) AS kept_bytes, \
                   row_number() OVER (ORDER BY created_at_ms DESC, id DESC) AS kept_count \
                 FROM offloaded_results) newest_first \
               WHERE kept_bytes > $3::BIGINT OR ($4::BIGINT > 0 AND kept_count > $4::BIGINT)))",
            &[
                &id,
                &ms(cutoff),
                &i64::try_from(retention.max_total_bytes).unwrap_or(i64::MAX),
                &max_count,
            ],
        )
        .await
        .map_err(pg_error)?;
        tx.commit().await.map_err(pg_error)?;
        Ok(())
    }

    async fn window(&self, id: &str, offset: u64, len: u64) -> StoreResult<Option<Window>> {
        let client = self.pool.get().await?;
        // substring() counts from 1.
        let from = ms(offset.saturating_add(1));
        let row = client
            .query_opt(
                "SELECT bytes, substring(body FROM LEAST($2::BIGINT, 2147483647)::INT \
                 FOR LEAST($3::BIGINT, 2147483647)::INT) FROM offloaded_results WHERE id = $1",
                &[&id, &from, &ms(len)],
            )
            .await
            .map_err(pg_error)?;
        Ok(row.map(|r| Window {
            total: from_ms(r.get(0)),
            bytes: r.get::<_, Vec<u8>>(1),
        }))
    }
}
