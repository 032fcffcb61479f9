//! The embedded backend of the chat posts: table `approval_posts` in `toolgate.db`. One
//! connection behind a mutex, every statement on the blocking pool; each step is a single
//! statement (the claim: an insert, then a conditional update), so two processes on one
//! file cannot both win.

use std::path::Path;

use async_trait::async_trait;
use rusqlite::{OptionalExtension, params};

use super::{ChatPost, ChatPostBackend};
use crate::db::EmbeddedDb;
use crate::{StoreError, StoreResult};

const COLUMNS: &str =
    "approval_id, channel, chat, message_ref, claimed_at_ms, closed, closed_at_ms";

/// The chat posts in the embedded database.
#[derive(Clone)]
pub struct SqliteChatPosts {
    conn: EmbeddedDb,
}

impl SqliteChatPosts {
    /// Opens the database at `db` on a pool of its own (creating it and every table if
    /// needed). A process with several stores opens one [`EmbeddedDb`] and uses [`Self::new`].
    pub fn open(db: &Path) -> StoreResult<Self> {
        Ok(Self::new(EmbeddedDb::open(db)?))
    }

    /// The tables in `db`, whose schema the pool created.
    pub fn new(db: EmbeddedDb) -> Self {
        SqliteChatPosts { conn: db }
    }
}

fn post_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<ChatPost> {
    Ok(ChatPost {
        approval_id: row.get(0)?,
        channel: row.get(1)?,
        chat: row.get(2)?,
        message_ref: row.get(3)?,
        claimed_at_ms: row.get(4)?,
        closed: row.get(5)?,
        closed_at_ms: row.get(6)?,
    })
}

/// The row's key, owned, to move onto the blocking pool.
fn key(approval_id: &str, channel: &str, chat: &str) -> (String, String, String) {
    (approval_id.to_owned(), channel.to_owned(), chat.to_owned())
}

#[async_trait]
impl ChatPostBackend for SqliteChatPosts {
    async fn claim(
        &self,
        approval_id: &str,
        channel: &str,
        chat: &str,
        now_ms: u64,
        stale_before_ms: u64,
    ) -> StoreResult<bool> {
        let (id, channel, chat) = key(approval_id, channel, chat);
        self.conn
            .run("chat posts", move |conn| {
                let inserted = conn.execute(
                    "INSERT INTO approval_posts (approval_id, channel, chat, claimed_at_ms) \
                     VALUES (?1, ?2, ?3, ?4) ON CONFLICT DO NOTHING",
                    params![id, channel, chat, now_ms],
                )?;
                if inserted == 1 {
                    return Ok(true);
                }
                let taken = conn.execute(
                    "UPDATE approval_posts SET claimed_at_ms = ?4 \
                     WHERE approval_id = ?1 AND channel = ?2 AND chat = ?3 \
                       AND message_ref IS NULL AND closed IS NULL AND claimed_at_ms < ?5",
                    params![id, channel, chat, now_ms, stale_before_ms],
                )?;
                Ok(taken == 1)
            })
            .await
    }

    async fn attach(
        &self,
        approval_id: &str,
        channel: &str,
        chat: &str,
        message_ref: &str,
    ) -> StoreResult<bool> {
        let (id, channel, chat) = key(approval_id, channel, chat);
        let message_ref = message_ref.to_owned();
        self.conn
            .run("chat posts", move |conn| {
                Ok(conn.execute(
                    "UPDATE approval_posts SET message_ref = ?4 \
                     WHERE approval_id = ?1 AND channel = ?2 AND chat = ?3",
                    params![id, channel, chat, message_ref],
                )? == 1)
            })
            .await
    }

    async fn release(&self, approval_id: &str, channel: &str, chat: &str) -> StoreResult<()> {
        let (id, channel, chat) = key(approval_id, channel, chat);
        self.conn
            .run("chat posts", move |conn| {
                conn.execute(
                    "DELETE FROM approval_posts \
                     WHERE approval_id = ?1 AND channel = ?2 AND chat = ?3 \
                       AND message_ref IS NULL AND closed IS NULL",
                    params![id, channel, chat],
                )?;
                Ok(())
            })
            .await
    }

    async fn open_posts(&self, channel: &str) -> StoreResult<Vec<ChatPost>> {
        let channel = channel.to_owned();
        self.conn
            .run("chat posts", move |conn| {
                let mut stmt = conn.prepare_cached(&format!(
                    "SELECT {COLUMNS} FROM approval_posts \
                     WHERE channel = ?1 AND closed IS NULL \
                     ORDER BY claimed_at_ms, approval_id, chat"
                ))?;
                let rows = stmt.query_map(params![channel], post_from_row)?;
                rows.map(|r| r.map_err(StoreError::from)).collect()
            })
            .await
    }

    async fn by_message(
        &self,
        channel: &str,
        chat: &str,
        message_ref: &str,
    ) -> StoreResult<Option<ChatPost>> {
        let (channel, chat, message_ref) = key(channel, chat, message_ref);
        self.conn
            .run("chat posts", move |conn| {
                Ok(conn
                    .query_row(
                        &format!(
                            "SELECT {COLUMNS} FROM approval_posts \
                             WHERE channel = ?1 AND chat = ?2 AND message_ref = ?3 \
                             ORDER BY claimed_at_ms DESC LIMIT 1"
                        ),
                        params![channel, chat, message_ref],
                        post_from_row,
                    )
                    .optional()?)
            })
            .await
    }

    async fn close(
        &self,
        approval_id: &str,
        channel: &str,
        chat: &str,
        status: &str,
        now_ms: u64,
    ) -> StoreResult<bool> {
        let (id, channel, chat) = key(approval_id, channel, chat);
        let status = status.to_owned();
        self.conn
            .run("chat posts", move |conn| {
                Ok(conn.execute(
                    "UPDATE approval_posts SET closed = ?4, closed_at_ms = ?5 \
                     WHERE approval_id = ?1 AND channel = ?2 AND chat = ?3 AND closed IS NULL",
                    params![id, channel, chat, status, now_ms],
                )? == 1)
            })
            .await
    }

    async fn prune(&self, closed_before_ms: u64) -> StoreResult<usize> {
        self.conn
            .run("chat posts", move |conn| {
                Ok(conn.execute(
                    "DELETE FROM approval_posts \
                     WHERE closed IS NOT NULL AND closed_at_ms < ?1",
                    params![closed_before_ms],
                )?)
            })
            .await
    }
}
