//! The embedded database's schema, every table in one place: created (and brought up) once
//! when a process opens its [`EmbeddedDb`](crate::db::EmbeddedDb) — never again by the stores
//! that draw from it, which know only their columns. PostgreSQL's DDL is `pg/migrations`;
//! `tests/suite/schema_parity.rs` checks that both give each table the same columns. The audit
//! index creates its own table on its own connection (`toolgate-audit`).

use rusqlite::Connection;

use crate::StoreResult;

/// `approvals`.
const APPROVALS: &str = "
CREATE TABLE IF NOT EXISTS approvals (
    id                    TEXT PRIMARY KEY,
    created_at_ms         INTEGER NOT NULL,
    expires_at_ms         INTEGER NOT NULL,
    status                TEXT NOT NULL,
    principal             TEXT NOT NULL,
    session               TEXT NOT NULL,
    role                  TEXT NOT NULL,
    tool                  TEXT NOT NULL,
    risk                  TEXT NOT NULL,
    args_hash             TEXT NOT NULL,
    arguments             TEXT NOT NULL,
    requires_confirmation INTEGER NOT NULL,
    decided_by            TEXT,
    decided_at_ms         INTEGER,
    scope                 TEXT,
    pattern               TEXT,
    reason                TEXT,
    consumed              INTEGER NOT NULL DEFAULT 0,
    issuer                TEXT,
    subject               TEXT,
    decided_via           TEXT
);
CREATE INDEX IF NOT EXISTS approvals_by_call
    ON approvals (principal, tool, args_hash, created_at_ms);
CREATE INDEX IF NOT EXISTS approvals_by_status ON approvals (status, created_at_ms);
CREATE TABLE IF NOT EXISTS approval_grants (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    scope         TEXT NOT NULL,
    principal     TEXT NOT NULL,
    session       TEXT,
    tool          TEXT NOT NULL,
    args_hash     TEXT,
    pattern       TEXT,
    created_by    TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL,
    approval_id   TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS approval_grants_by_tool ON approval_grants (principal, tool);
";

/// `idempotency`.
const IDEMPOTENCY: &str = "
CREATE TABLE IF NOT EXISTS idempotency_keys (
    principal     TEXT NOT NULL,
    tool          TEXT NOT NULL,
    key           TEXT NOT NULL,
    args_hash     TEXT NOT NULL,
    outcome       TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL,
    PRIMARY KEY (principal, tool, key)
);
CREATE TABLE IF NOT EXISTS idempotency_reservations (
    principal      TEXT NOT NULL,
    tool           TEXT NOT NULL,
    key            TEXT NOT NULL,
    args_hash      TEXT NOT NULL,
    owner          TEXT NOT NULL,
    lease_until_ms INTEGER NOT NULL,
    PRIMARY KEY (principal, tool, key)
);
";

/// `pins`.
const PINS: &str = "
CREATE TABLE IF NOT EXISTS tool_pins (
    name              TEXT PRIMARY KEY,
    pinned_hash       TEXT NOT NULL,
    pinned_definition TEXT NOT NULL,
    pinned_at_ms      INTEGER NOT NULL,
    pinned_by         TEXT NOT NULL,
    seen_hash         TEXT,
    seen_definition   TEXT,
    seen_at_ms        INTEGER
);
";

/// `credentials`.
const CREDENTIALS: &str = "
CREATE TABLE IF NOT EXISTS mcp_credentials (
    server        TEXT NOT NULL,
    resource      TEXT NOT NULL,
    issuer        TEXT,
    client_id     TEXT NOT NULL,
    secret        TEXT NOT NULL,
    updated_at_ms INTEGER NOT NULL,
    PRIMARY KEY (server, resource)
);
";

/// `quotas`.
const QUOTAS: &str = "CREATE TABLE IF NOT EXISTS quota_buckets (
    key TEXT PRIMARY KEY,
    tat_us INTEGER NOT NULL
) WITHOUT ROWID;";

/// `tokens`.
const TOKENS: &str = "
CREATE TABLE IF NOT EXISTS api_tokens (
    id              TEXT PRIMARY KEY,
    sha256          TEXT NOT NULL UNIQUE,
    principal       TEXT NOT NULL,
    role            TEXT NOT NULL,
    operator        INTEGER NOT NULL,
    note            TEXT,
    created_at_ms   INTEGER NOT NULL,
    created_by      TEXT NOT NULL,
    expires_at_ms   INTEGER,
    revoked_at_ms   INTEGER,
    last_used_at_ms INTEGER,
    replaces        TEXT
);
";

/// `chat`.
const CHAT_POSTS: &str = "
CREATE TABLE IF NOT EXISTS approval_posts (
    approval_id   TEXT NOT NULL,
    channel       TEXT NOT NULL,
    chat          TEXT NOT NULL,
    message_ref   TEXT,
    claimed_at_ms INTEGER NOT NULL,
    closed        TEXT,
    closed_at_ms  INTEGER,
    PRIMARY KEY (approval_id, channel, chat)
);
CREATE INDEX IF NOT EXISTS approval_posts_by_message
    ON approval_posts (channel, chat, message_ref);
CREATE INDEX IF NOT EXISTS approval_posts_open
    ON approval_posts (channel, claimed_at_ms) WHERE closed IS NULL;
CREATE INDEX IF NOT EXISTS approval_posts_closed
    ON approval_posts (closed_at_ms) WHERE closed IS NOT NULL;
";

/// `conversations`.
const CONVERSATIONS: &str = "
CREATE TABLE IF NOT EXISTS conversations (
    id             TEXT PRIMARY KEY,
    entry          TEXT NOT NULL,
    chat           TEXT NOT NULL,
    user_ref       TEXT NOT NULL,
    principal      TEXT NOT NULL,
    role           TEXT NOT NULL,
    title          TEXT NOT NULL DEFAULT '',
    created_at_ms  INTEGER NOT NULL,
    updated_at_ms  INTEGER NOT NULL,
    closed_at_ms   INTEGER,
    last_seq       INTEGER NOT NULL DEFAULT 0,
    runner         TEXT,
    lease_until_ms INTEGER NOT NULL DEFAULT 0,
    pending        INTEGER NOT NULL DEFAULT 0,
    delivered_seq  INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX IF NOT EXISTS conversations_open
    ON conversations (entry, chat, user_ref) WHERE closed_at_ms IS NULL;
CREATE INDEX IF NOT EXISTS conversations_by_principal
    ON conversations (principal, updated_at_ms);
CREATE INDEX IF NOT EXISTS conversations_pending
    ON conversations (updated_at_ms) WHERE pending = 1;
CREATE TABLE IF NOT EXISTS conversation_events (
    conversation TEXT NOT NULL,
    seq          INTEGER NOT NULL,
    kind         TEXT NOT NULL,
    body         TEXT NOT NULL,
    at_ms        INTEGER NOT NULL,
    PRIMARY KEY (conversation, seq)
);
";

/// Creates every table (and column added since) that is missing; several processes may run
/// this at once on one file.
pub fn create_all(conn: &Connection) -> StoreResult<()> {
    for ddl in [
        APPROVALS,
        IDEMPOTENCY,
        PINS,
        CREDENTIALS,
        QUOTAS,
        TOKENS,
        CHAT_POSTS,
        CONVERSATIONS,
    ] {
        conn.execute_batch(ddl)?;
    }
    // Databases made before schema 4 lack who vouched for the caller, before schema 5 the
    // channel a decision came through; another process may be adding the columns at the same
    // moment (then ours fails as a duplicate, which is fine).
    for column in ["issuer", "subject", "decided_via"] {
        let present = conn
            .prepare("SELECT 1 FROM pragma_table_info('approvals') WHERE name = ?1")?
            .exists([column])?;
        if !present
            && let Err(e) =
                conn.execute_batch(&format!("ALTER TABLE approvals ADD COLUMN {column} TEXT"))
            && !e.to_string().contains("duplicate column")
        {
            return Err(e.into());
        }
    }
    // Before schema 7 a conversation had no delivery cursor (chat apps).
    let present = conn
        .prepare("SELECT 1 FROM pragma_table_info('conversations') WHERE name = 'delivered_seq'")?
        .exists([])?;
    if !present
        && let Err(e) = conn.execute_batch(
            "ALTER TABLE conversations ADD COLUMN delivered_seq INTEGER NOT NULL DEFAULT 0",
        )
        && !e.to_string().contains("duplicate column")
    {
        return Err(e.into());
    }
    conn.execute_batch(
        "CREATE INDEX IF NOT EXISTS conversations_undelivered \
         ON conversations (entry, updated_at_ms) WHERE last_seq > delivered_seq;",
    )?;
    Ok(())
}
