//! The embedded backend of the conversations: tables `conversations` and
//! `conversation_events` in `toolgate.db`, every statement on the blocking pool. An append
//! numbers its event and inserts it in one transaction, so two writers on one file never
//! share a number.

use async_trait::async_trait;
use rusqlite::{OptionalExtension, params};

use super::{Append, ConversationBackend, ConversationRow, JournalEvent, NewConversation};
use crate::db::EmbeddedDb;
use crate::{StoreError, StoreResult};

const COLUMNS: &str = "id, entry, chat, user_ref, principal, role, title, created_at_ms, \
     updated_at_ms, closed_at_ms, last_seq, runner, lease_until_ms, pending";

/// The conversations in the embedded database.
#[derive(Clone)]
pub struct SqliteConversations {
    conn: EmbeddedDb,
}

impl SqliteConversations {
    /// The tables in `db`, whose schema the pool created.
    pub fn new(db: EmbeddedDb) -> Self {
        SqliteConversations { conn: db }
    }
}

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ConversationRow> {
    Ok(ConversationRow {
        id: r.get(0)?,
        entry: r.get(1)?,
        chat: r.get(2)?,
        user_ref: r.get(3)?,
        principal: r.get(4)?,
        role: r.get(5)?,
        title: r.get(6)?,
        created_at_ms: r.get(7)?,
        updated_at_ms: r.get(8)?,
        closed_at_ms: r.get(9)?,
        last_seq: r.get(10)?,
        runner: r.get(11)?,
        lease_until_ms: r.get(12)?,
        pending: r.get::<_, i64>(13)? != 0,
    })
}

fn limit(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

#[async_trait]
impl ConversationBackend for SqliteConversations {
    async fn open(&self, new: &NewConversation, now_ms: u64) -> StoreResult<ConversationRow> {
        let new = new.clone();
        self.conn
            .run("conversations", move |conn| {
                conn.execute(
                    "INSERT INTO conversations (id, entry, chat, user_ref, principal, role, \
                       created_at_ms, updated_at_ms) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7) ON CONFLICT DO NOTHING",
                    params![
                        new.id,
                        new.entry,
                        new.chat,
                        new.user_ref,
                        new.principal,
                        new.role,
                        now_ms
                    ],
                )?;
                conn.query_row(
                    &format!(
                        "SELECT {COLUMNS} FROM conversations \
                         WHERE entry = ?1 AND chat = ?2 AND user_ref = ?3 \
                           AND closed_at_ms IS NULL"
                    ),
                    params![new.entry, new.chat, new.user_ref],
                    row,
                )
                .optional()?
                .ok_or_else(|| {
                    StoreError::Conflict(format!(
                        "conversation {} could not be opened: its id is taken",
                        new.id
                    ))
                })
            })
            .await
    }

    async fn get(&self, id: &str) -> StoreResult<Option<ConversationRow>> {
        let id = id.to_owned();
        self.conn
            .run("conversations", move |conn| {
                Ok(conn
                    .query_row(
                        &format!("SELECT {COLUMNS} FROM conversations WHERE id = ?1"),
                        params![id],
                        row,
                    )
                    .optional()?)
            })
            .await
    }

    async fn list(&self, principal: Option<&str>, n: usize) -> StoreResult<Vec<ConversationRow>> {
        let principal = principal.map(str::to_owned);
        self.conn
            .run("conversations", move |conn| {
                let mut stmt = conn.prepare_cached(&format!(
                    "SELECT {COLUMNS} FROM conversations \
                     WHERE ?1 IS NULL OR principal = ?1 \
                     ORDER BY updated_at_ms DESC, id LIMIT ?2"
                ))?;
                let rows = stmt.query_map(params![principal, limit(n)], row)?;
                rows.map(|r| r.map_err(StoreError::from)).collect()
            })
            .await
    }

    async fn close(&self, id: &str, now_ms: u64) -> StoreResult<bool> {
        let id = id.to_owned();
        self.conn
            .run("conversations", move |conn| {
                Ok(conn.execute(
                    "UPDATE conversations SET closed_at_ms = ?2, updated_at_ms = ?2 \
                     WHERE id = ?1 AND closed_at_ms IS NULL",
                    params![id, now_ms],
                )? == 1)
            })
            .await
    }

    async fn append(&self, id: &str, append: Append<'_>, now_ms: u64) -> StoreResult<Option<u64>> {
        let id = id.to_owned();
        let kind = append.kind.to_owned();
        let body = append.body.to_owned();
        let runner = append.runner.map(str::to_owned);
        let title = append.title.map(str::to_owned);
        let pending = append.marks_pending;
        self.conn
            .run("conversations", move |conn| {
                let tx = conn.transaction()?;
                let seq: Option<u64> = tx
                    .query_row(
                        "UPDATE conversations SET last_seq = last_seq + 1, updated_at_ms = ?2, \
                           pending = CASE WHEN ?3 THEN 1 ELSE pending END, \
                           title = CASE WHEN title = '' AND ?5 IS NOT NULL THEN ?5 ELSE title END \
                         WHERE id = ?1 \
                           AND (?4 IS NULL OR (runner = ?4 AND lease_until_ms >= ?2)) \
                           AND (NOT ?3 OR closed_at_ms IS NULL) \
                         RETURNING last_seq",
                        params![id, now_ms, pending, runner, title],
                        |r| r.get(0),
                    )
                    .optional()?;
                let Some(seq) = seq else {
                    return Ok(None);
                };
                tx.execute(
                    "INSERT INTO conversation_events (conversation, seq, kind, body, at_ms) \
                     VALUES (?1, ?2, ?3, ?4, ?5)",
                    params![id, seq, kind, body, now_ms],
                )?;
                tx.commit()?;
                Ok(Some(seq))
            })
            .await
    }

    async fn events(&self, id: &str, after_seq: u64, n: usize) -> StoreResult<Vec<JournalEvent>> {
        let id = id.to_owned();
        self.conn
            .run("conversations", move |conn| {
                let mut stmt = conn.prepare_cached(
                    "SELECT conversation, seq, kind, body, at_ms FROM conversation_events \
                     WHERE conversation = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3",
                )?;
                // Numbers are signed 64-bit in the database: nothing lies past the largest.
                let after = i64::try_from(after_seq).unwrap_or(i64::MAX);
                let rows = stmt.query_map(params![id, after, limit(n)], |r| {
                    Ok(JournalEvent {
                        conversation: r.get(0)?,
                        seq: r.get(1)?,
                        kind: r.get(2)?,
                        body: r.get(3)?,
                        at_ms: r.get(4)?,
                    })
                })?;
                rows.map(|r| r.map_err(StoreError::from)).collect()
            })
            .await
    }

    async fn claim(&self, id: &str, runner: &str, now_ms: u64, until_ms: u64) -> StoreResult<bool> {
        let (id, runner) = (id.to_owned(), runner.to_owned());
        self.conn
            .run("conversations", move |conn| {
                Ok(conn.execute(
                    "UPDATE conversations SET runner = ?2, lease_until_ms = ?4 \
                     WHERE id = ?1 AND (runner IS NULL OR runner = ?2 OR lease_until_ms < ?3)",
                    params![id, runner, now_ms, until_ms],
                )? == 1)
            })
            .await
    }

    async fn release(&self, id: &str, runner: &str) -> StoreResult<()> {
        let (id, runner) = (id.to_owned(), runner.to_owned());
        self.conn
            .run("conversations", move |conn| {
                conn.execute(
                    "UPDATE conversations SET runner = NULL, lease_until_ms = 0 \
                     WHERE id = ?1 AND runner = ?2",
                    params![id, runner],
                )?;
                Ok(())
            })
            .await
    }

    async fn settle(&self, id: &str, runner: &str, through_seq: u64) -> StoreResult<bool> {
        let (id, runner) = (id.to_owned(), runner.to_owned());
        self.conn
            .run("conversations", move |conn| {
                Ok(conn.execute(
                    "UPDATE conversations SET pending = 0, runner = NULL, lease_until_ms = 0 \
                     WHERE id = ?1 AND runner = ?2 AND last_seq <= ?3",
                    params![id, runner, through_seq],
                )? == 1)
            })
            .await
    }

    async fn unattended(&self, now_ms: u64, n: usize) -> StoreResult<Vec<String>> {
        self.conn
            .run("conversations", move |conn| {
                let mut stmt = conn.prepare_cached(
                    "SELECT id FROM conversations \
                     WHERE pending = 1 AND (runner IS NULL OR lease_until_ms < ?1) \
                     ORDER BY updated_at_ms LIMIT ?2",
                )?;
                let rows = stmt.query_map(params![now_ms, limit(n)], |r| r.get(0))?;
                rows.map(|r| r.map_err(StoreError::from)).collect()
            })
            .await
    }

    async fn busy(&self, principal: &str) -> StoreResult<usize> {
        let principal = principal.to_owned();
        self.conn
            .run("conversations", move |conn| {
                let n: i64 = conn.query_row(
                    "SELECT count(*) FROM conversations WHERE principal = ?1 AND pending = 1",
                    params![principal],
                    |r| r.get(0),
                )?;
                Ok(usize::try_from(n).unwrap_or(0))
            })
            .await
    }

    async fn mark_delivered(&self, id: &str, seq: u64) -> StoreResult<bool> {
        let id = id.to_owned();
        self.conn
            .run("conversations", move |conn| {
                Ok(conn.execute(
                    "UPDATE conversations SET delivered_seq = ?2 \
                     WHERE id = ?1 AND delivered_seq < ?2",
                    params![id, seq],
                )? == 1)
            })
            .await
    }

    async fn delivered(&self, id: &str) -> StoreResult<Option<u64>> {
        let id = id.to_owned();
        self.conn
            .run("conversations", move |conn| {
                Ok(conn
                    .query_row(
                        "SELECT delivered_seq FROM conversations WHERE id = ?1",
                        params![id],
                        |r| r.get(0),
                    )
                    .optional()?)
            })
            .await
    }

    async fn undelivered(&self, entry: &str, n: usize) -> StoreResult<Vec<(String, u64)>> {
        let entry = entry.to_owned();
        self.conn
            .run("conversations", move |conn| {
                let mut stmt = conn.prepare_cached(
                    "SELECT id, delivered_seq FROM conversations \
                     WHERE entry = ?1 AND last_seq > delivered_seq \
                     ORDER BY updated_at_ms LIMIT ?2",
                )?;
                let rows =
                    stmt.query_map(params![entry, limit(n)], |r| Ok((r.get(0)?, r.get(1)?)))?;
                rows.map(|r| r.map_err(StoreError::from)).collect()
            })
            .await
    }
}
