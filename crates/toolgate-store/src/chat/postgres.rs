//! [`PgChatPosts`]: the chat posts in PostgreSQL (`approval_posts`, schema 11), shared by
//! every replica. Each step is one statement whose `WHERE` checks the state it changes (the
//! claim: `INSERT … ON CONFLICT DO NOTHING`, then a conditional `UPDATE`), so of replicas
//! racing for one post exactly one wins: a second `UPDATE` waits for the first's row lock
//! and re-checks its `WHERE` against the row the first left.

use async_trait::async_trait;
use tokio_postgres::Row;

use super::{ChatPost, ChatPostBackend};
use crate::StoreResult;
use crate::pg::{PgPool, from_ms, ms, pg_error};

const COLUMNS: &str =
    "approval_id, channel, chat, message_ref, claimed_at_ms, closed, closed_at_ms";

/// The chat posts in one PostgreSQL database.
#[derive(Clone)]
pub struct PgChatPosts {
    pool: PgPool,
}

impl std::fmt::Debug for PgChatPosts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgChatPosts").finish_non_exhaustive()
    }
}

impl PgChatPosts {
    /// Over `pool`, whose schema is migrated ([`crate::pg::migrate`]).
    pub fn new(pool: PgPool) -> Self {
        PgChatPosts { pool }
    }
}

fn post(row: &Row) -> ChatPost {
    ChatPost {
        approval_id: row.get(0),
        channel: row.get(1),
        chat: row.get(2),
        message_ref: row.get(3),
        claimed_at_ms: from_ms(row.get(4)),
        closed: row.get(5),
        closed_at_ms: row.get::<_, Option<i64>>(6).map(from_ms),
    }
}

#[async_trait]
impl ChatPostBackend for PgChatPosts {
    async fn claim(
        &self,
        approval_id: &str,
        channel: &str,
        chat: &str,
        now_ms: u64,
        stale_before_ms: u64,
    ) -> StoreResult<bool> {
        let client = self.pool.get().await?;
        let inserted = client
            .execute(
                "INSERT INTO approval_posts (approval_id, channel, chat, claimed_at_ms) \
                 VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
                &[&approval_id, &channel, &chat, &ms(now_ms)],
            )
            .await
            .map_err(pg_error)?;
        if inserted == 1 {
            return Ok(true);
        }
        let taken = client
            .execute(
                "UPDATE approval_posts SET claimed_at_ms = $4 \
                 WHERE approval_id = $1 AND channel = $2 AND chat = $3 \
                   AND message_ref IS NULL AND closed IS NULL AND claimed_at_ms < $5",
                &[
                    &approval_id,
                    &channel,
                    &chat,
                    &ms(now_ms),
                    &ms(stale_before_ms),
                ],
            )
            .await
            .map_err(pg_error)?;
        Ok(taken == 1)
    }

    async fn attach(
        &self,
        approval_id: &str,
        channel: &str,
        chat: &str,
        message_ref: &str,
    ) -> StoreResult<bool> {
        let client = self.pool.get().await?;
        let n = client
            .execute(
                "UPDATE approval_posts SET message_ref = $4 \
                 WHERE approval_id = $1 AND channel = $2 AND chat = $3",
                &[&approval_id, &channel, &chat, &message_ref],
            )
            .await
            .map_err(pg_error)?;
        Ok(n == 1)
    }

    async fn release(&self, approval_id: &str, channel: &str, chat: &str) -> StoreResult<()> {
        let client = self.pool.get().await?;
        client
            .execute(
                "DELETE FROM approval_posts \
                 WHERE approval_id = $1 AND channel = $2 AND chat = $3 \
                   AND message_ref IS NULL AND closed IS NULL",
                &[&approval_id, &channel, &chat],
            )
            .await
            .map_err(pg_error)?;
        Ok(())
    }

    async fn open_posts(&self, channel: &str) -> StoreResult<Vec<ChatPost>> {
        let client = self.pool.get().await?;
        let rows = client
            .query(
                &format!(
                    "SELECT {COLUMNS} FROM approval_posts \
                     WHERE channel = $1 AND closed IS NULL \
                     ORDER BY claimed_at_ms, approval_id, chat"
                ),
                &[&channel],
            )
            .await
            .map_err(pg_error)?;
        Ok(rows.iter().map(post).collect())
    }

    async fn by_message(
        &self,
        channel: &str,
        chat: &str,
        message_ref: &str,
    ) -> StoreResult<Option<ChatPost>> {
        let client = self.pool.get().await?;
        let row = client
            .query_opt(
                &format!(
                    "SELECT {COLUMNS} FROM approval_posts \
                     WHERE channel = $1 AND chat = $2 AND message_ref = $3 \
                     ORDER BY claimed_at_ms DESC LIMIT 1"
                ),
                &[&channel, &chat, &message_ref],
            )
            .await
            .map_err(pg_error)?;
        Ok(row.as_ref().map(post))
    }

    async fn close(
        &self,
        approval_id: &str,
        channel: &str,
        chat: &str,
        status: &str,
        now_ms: u64,
    ) -> StoreResult<bool> {
        let client = self.pool.get().await?;
        let n = client
            .execute(
                "UPDATE approval_posts SET closed = $4, closed_at_ms = $5 \
                 WHERE approval_id = $1 AND channel = $2 AND chat = $3 AND closed IS NULL",
                &[&approval_id, &channel, &chat, &status, &ms(now_ms)],
            )
            .await
            .map_err(pg_error)?;
        Ok(n == 1)
    }

    async fn prune(&self, closed_before_ms: u64) -> StoreResult<usize> {
        let client = self.pool.get().await?;
        let n = client
            .execute(
                "DELETE FROM approval_posts WHERE closed IS NOT NULL AND closed_at_ms < $1",
                &[&ms(closed_before_ms)],
            )
            .await
            .map_err(pg_error)?;
        Ok(usize::try_from(n).unwrap_or(usize::MAX))
    }
}
