//! [`PgConversations`]: the conversations in PostgreSQL (`conversations` and
//! `conversation_events`, schema 13), shared by every replica. An append numbers its event
//! with one conditional `UPDATE … RETURNING` and inserts it in the same transaction: a second
//! replica's `UPDATE` waits for the first's row lock and then numbers after it.

use async_trait::async_trait;
use tokio_postgres::Row;

use super::{Append, ConversationBackend, ConversationRow, JournalEvent, NewConversation};
use crate::pg::{PgPool, from_ms, ms, pg_error};
use crate::{StoreError, StoreResult};

const COLUMNS: &str = "id, entry, chat, user_ref, principal, role, title, created_at_ms, \
     updated_at_ms, closed_at_ms, last_seq, runner, lease_until_ms, pending";

/// The conversations in one PostgreSQL database.
#[derive(Clone)]
pub struct PgConversations {
    pool: PgPool,
}

impl std::fmt::Debug for PgConversations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgConversations").finish_non_exhaustive()
    }
}

impl PgConversations {
    /// Over `pool`, whose schema is migrated ([`crate::pg::migrate`]).
    pub fn new(pool: PgPool) -> Self {
        PgConversations { pool }
    }
}

fn row(r: &Row) -> ConversationRow {
    ConversationRow {
        id: r.get(0),
        entry: r.get(1),
        chat: r.get(2),
        user_ref: r.get(3),
        principal: r.get(4),
        role: r.get(5),
        title: r.get(6),
        created_at_ms: from_ms(r.get(7)),
        updated_at_ms: from_ms(r.get(8)),
        closed_at_ms: r.get::<_, Option<i64>>(9).map(from_ms),
        last_seq: from_ms(r.get(10)),
        runner: r.get(11),
        lease_until_ms: from_ms(r.get(12)),
        pending: r.get(13),
    }
}

fn limit(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

#[async_trait]
impl ConversationBackend for PgConversations {
    async fn open(&self, new: &NewConversation, now_ms: u64) -> StoreResult<ConversationRow> {
        let client = self.pool.get().await?;
        client
            .execute(
                "INSERT INTO conversations (id, entry, chat, user_ref, principal, role, \
                   created_at_ms, updated_at_ms) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $7) ON CONFLICT DO NOTHING",
                &[
                    &new.id,
                    &new.entry,
                    &new.chat,
                    &new.user_ref,
                    &new.principal,
                    &new.role,
                    &ms(now_ms),
                ],
            )
            .await
            .map_err(pg_error)?;
        let found = client
            .query_opt(
                &format!(
                    "SELECT {COLUMNS} FROM conversations \
                     WHERE entry = $1 AND chat = $2 AND user_ref = $3 AND closed_at_ms IS NULL"
                ),
                &[&new.entry, &new.chat, &new.user_ref],
            )
            .await
            .map_err(pg_error)?;
        found.as_ref().map(row).ok_or_else(|| {
            StoreError::Conflict(format!(
                "conversation {} could not be opened: its id is taken",
                new.id
            ))
        })
    }

    async fn get(&self, id: &str) -> StoreResult<Option<ConversationRow>> {
        let client = self.pool.get().await?;
        let found = client
            .query_opt(
                &format!("SELECT {COLUMNS} FROM conversations WHERE id = $1"),
                &[&id],
            )
            .await
            .map_err(pg_error)?;
        Ok(found.as_ref().map(row))
    }

    async fn list(&self, principal: Option<&str>, n: usize) -> StoreResult<Vec<ConversationRow>> {
        let client = self.pool.get().await?;
        let rows = client
            .query(
                &format!(
                    "SELECT {COLUMNS} FROM conversations \
                     WHERE $1::TEXT IS NULL OR principal = $1 \
                     ORDER BY updated_at_ms DESC, id LIMIT $2"
                ),
                &[&principal, &limit(n)],
            )
            .await
            .map_err(pg_error)?;
        Ok(rows.iter().map(row).collect())
    }

    async fn close(&self, id: &str, now_ms: u64) -> StoreResult<bool> {
        let client = self.pool.get().await?;
        let n = client
            .execute(
                "UPDATE conversations SET closed_at_ms = $2, updated_at_ms = $2 \
                 WHERE id = $1 AND closed_at_ms IS NULL",
                &[&id, &ms(now_ms)],
            )
            .await
            .map_err(pg_error)?;
        Ok(n == 1)
    }

    async fn append(&self, id: &str, append: Append<'_>, now_ms: u64) -> StoreResult<Option<u64>> {
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await.map_err(pg_error)?;
        let numbered = tx
            .query_opt(
                "UPDATE conversations SET last_seq = last_seq + 1, updated_at_ms = $2, \
                   pending = CASE WHEN $3 THEN TRUE ELSE pending END, \
                   title = CASE WHEN title = '' AND $5::TEXT IS NOT NULL THEN $5 ELSE title END \
                 WHERE id = $1 \
                   AND ($4::TEXT IS NULL OR (runner = $4 AND lease_until_ms >= $2)) \
                   AND (NOT $3 OR closed_at_ms IS NULL) \
                 RETURNING last_seq",
                &[
                    &id,
                    &ms(now_ms),
                    &append.marks_pending,
                    &append.runner,
                    &append.title,
                ],
            )
            .await
            .map_err(pg_error)?;
        let Some(numbered) = numbered else {
            return Ok(None);
        };
        let seq: i64 = numbered.get(0);
        tx.execute(
            "INSERT INTO conversation_events (conversation, seq, kind, body, at_ms) \
             VALUES ($1, $2, $3, $4, $5)",
            &[&id, &seq, &append.kind, &append.body, &ms(now_ms)],
        )
        .await
        .map_err(pg_error)?;
        tx.commit().await.map_err(pg_error)?;
        Ok(Some(from_ms(seq)))
    }

    async fn events(&self, id: &str, after_seq: u64, n: usize) -> StoreResult<Vec<JournalEvent>> {
        let client = self.pool.get().await?;
        let rows = client
            .query(
                "SELECT conversation, seq, kind, body, at_ms FROM conversation_events \
                 WHERE conversation = $1 AND seq > $2 ORDER BY seq LIMIT $3",
                &[&id, &ms(after_seq), &limit(n)],
            )
            .await
            .map_err(pg_error)?;
        Ok(rows
            .iter()
            .map(|r| JournalEvent {
                conversation: r.get(0),
                seq: from_ms(r.get(1)),
                kind: r.get(2),
                body: r.get(3),
                at_ms: from_ms(r.get(4)),
            })
            .collect())
    }

    async fn claim(&self, id: &str, runner: &str, now_ms: u64, until_ms: u64) -> StoreResult<bool> {
        let client = self.pool.get().await?;
        let n = client
            .execute(
                "UPDATE conversations SET runner = $2, lease_until_ms = $4 \
                 WHERE id = $1 AND (runner IS NULL OR runner = $2 OR lease_until_ms < $3)",
                &[&id, &runner, &ms(now_ms), &ms(until_ms)],
            )
            .await
            .map_err(pg_error)?;
        Ok(n == 1)
    }

    async fn release(&self, id: &str, runner: &str) -> StoreResult<()> {
        let client = self.pool.get().await?;
        client
            .execute(
                "UPDATE conversations SET runner = NULL, lease_until_ms = 0 \
                 WHERE id = $1 AND runner = $2",
                &[&id, &runner],
            )
            .await
            .map_err(pg_error)?;
        Ok(())
    }

    async fn settle(&self, id: &str, runner: &str, through_seq: u64) -> StoreResult<bool> {
        let client = self.pool.get().await?;
        let n = client
            .execute(
                "UPDATE conversations SET pending = FALSE, runner = NULL, lease_until_ms = 0 \
                 WHERE id = $1 AND runner = $2 AND last_seq <= $3",
                &[&id, &runner, &ms(through_seq)],
            )
            .await
            .map_err(pg_error)?;
        Ok(n == 1)
    }

    async fn unattended(&self, now_ms: u64, n: usize) -> StoreResult<Vec<String>> {
        let client = self.pool.get().await?;
        let rows = client
            .query(
                "SELECT id FROM conversations \
                 WHERE pending AND (runner IS NULL OR lease_until_ms < $1) \
                 ORDER BY updated_at_ms LIMIT $2",
                &[&ms(now_ms), &limit(n)],
            )
            .await
            .map_err(pg_error)?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    async fn busy(&self, principal: &str) -> StoreResult<usize> {
        let client = self.pool.get().await?;
        let row = client
            .query_one(
                "SELECT count(*) FROM conversations WHERE principal = $1 AND pending",
                &[&principal],
            )
            .await
            .map_err(pg_error)?;
        Ok(usize::try_from(row.get::<_, i64>(0)).unwrap_or(0))
    }

    async fn mark_delivered(&self, id: &str, seq: u64) -> StoreResult<bool> {
        let client = self.pool.get().await?;
        let n = client
            .execute(
                "UPDATE conversations SET delivered_seq = $2 \
                 WHERE id = $1 AND delivered_seq < $2",
                &[&id, &ms(seq)],
            )
            .await
            .map_err(pg_error)?;
        Ok(n == 1)
    }

    async fn delivered(&self, id: &str) -> StoreResult<Option<u64>> {
        let client = self.pool.get().await?;
        let row = client
            .query_opt(
                "SELECT delivered_seq FROM conversations WHERE id = $1",
                &[&id],
            )
            .await
            .map_err(pg_error)?;
        Ok(row.map(|r| u64::try_from(r.get::<_, i64>(0)).unwrap_or(0)))
    }

    async fn undelivered(&self, entry: &str, n: usize) -> StoreResult<Vec<(String, u64)>> {
        let client = self.pool.get().await?;
        let rows = client
            .query(
                "SELECT id, delivered_seq FROM conversations \
                 WHERE entry = $1 AND last_seq > delivered_seq \
                 ORDER BY updated_at_ms LIMIT $2",
                &[&entry, &limit(n)],
            )
            .await
            .map_err(pg_error)?;
        Ok(rows
            .iter()
            .map(|r| (r.get(0), u64::try_from(r.get::<_, i64>(1)).unwrap_or(0)))
            .collect())
    }
}
