//! Sessions kept in PostgreSQL as text the layer above defines:
//! - [`PgSessions`]: the state a replica needs to continue an MCP session another replica
//!   opened (`toolgate serve`'s Streamable HTTP endpoint). Sessions nobody touched for
//!   [`IDLE`] are removed when another is stored.
//! - [`PgChatSessions`]: `toolgate run` / `toolgate chat` conversations by session id.

use std::time::Duration;

use crate::StoreResult;
use crate::pg::{PgPool, ms, pg_error};

/// How long an untouched session is kept.
pub const IDLE: Duration = Duration::from_secs(7 * 24 * 3600);

/// MCP session states in PostgreSQL (`mcp_sessions`, schema 3).
#[derive(Debug, Clone)]
pub struct PgSessions {
    pool: PgPool,
}

impl PgSessions {
    pub fn new(pool: PgPool) -> Self {
        PgSessions { pool }
    }

    fn now_ms() -> u64 {
        (crate::clock::system_clock())()
    }

    /// The stored state of session `id`.
    pub async fn load(&self, id: &str) -> StoreResult<Option<String>> {
        let client = self.pool.get().await?;
        let row = client
            .query_opt("SELECT state FROM mcp_sessions WHERE id = $1", &[&id])
            .await
            .map_err(pg_error)?;
        Ok(row.map(|r| r.get(0)))
    }

    /// Stores (or replaces) session `id`'s state, and drops sessions idle past [`IDLE`].
    pub async fn store(&self, id: &str, state: &str) -> StoreResult<()> {
        let now = Self::now_ms();
        let idle = u64::try_from(IDLE.as_millis()).unwrap_or(u64::MAX);
        let client = self.pool.get().await?;
        client
            .execute(
                "INSERT INTO mcp_sessions (id, state, updated_at_ms) VALUES ($1, $2, $3) \
                 ON CONFLICT (id) DO UPDATE SET state = EXCLUDED.state, \
                   updated_at_ms = EXCLUDED.updated_at_ms",
                &[&id, &state, &ms(now)],
            )
            .await
            .map_err(pg_error)?;
        client
            .execute(
                "DELETE FROM mcp_sessions WHERE updated_at_ms < $1",
                &[&ms(now.saturating_sub(idle))],
            )
            .await
            .map_err(pg_error)?;
        Ok(())
    }

    /// Forgets session `id` (the client ended it).
    pub async fn delete(&self, id: &str) -> StoreResult<()> {
        let client = self.pool.get().await?;
        client
            .execute("DELETE FROM mcp_sessions WHERE id = $1", &[&id])
            .await
            .map_err(pg_error)?;
        Ok(())
    }
}

/// `toolgate run` / `toolgate chat` conversations in PostgreSQL (`chat_sessions`, schema 7).
#[derive(Debug, Clone)]
pub struct PgChatSessions {
    pool: PgPool,
}

impl PgChatSessions {
    pub fn new(pool: PgPool) -> Self {
        PgChatSessions { pool }
    }

    /// The saved conversation of `id`, as stored.
    pub async fn load(&self, id: &str) -> StoreResult<Option<String>> {
        let client = self.pool.get().await?;
        let row = client
            .query_opt("SELECT doc FROM chat_sessions WHERE id = $1", &[&id])
            .await
            .map_err(pg_error)?;
        Ok(row.map(|r| r.get(0)))
    }

    /// Saves (or replaces) the conversation of `id`.
    pub async fn save(&self, id: &str, doc: &str) -> StoreResult<()> {
        let now = PgSessions::now_ms();
        let client = self.pool.get().await?;
        client
            .execute(
                "INSERT INTO chat_sessions (id, doc, updated_at_ms) VALUES ($1, $2, $3) \
                 ON CONFLICT (id) DO UPDATE SET doc = EXCLUDED.doc, \
                   updated_at_ms = EXCLUDED.updated_at_ms",
                &[&id, &doc, &ms(now)],
            )
            .await
            .map_err(pg_error)?;
        Ok(())
    }
}
