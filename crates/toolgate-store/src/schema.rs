//! The embedded database's schema: every table of every store, created once when a process
//! opens its [`EmbeddedDb`](crate::db::EmbeddedDb) — never again by the stores that draw from
//! it. Each table's DDL is written once for SQLite (beside the store that reads it) and once
//! for PostgreSQL (`pg/migrations`); `tests/suite/schema_parity.rs` checks that both give each
//! table the same columns. The audit index creates its own table on its own connection
//! (`toolgate-audit`).

use rusqlite::Connection;

use crate::StoreResult;

/// Creates every table (and column added since) that is missing; several processes may run
/// this at once on one file.
pub fn create_all(conn: &Connection) -> StoreResult<()> {
    crate::approvals::create_tables(conn)?;
    for ddl in [
        crate::idempotency::sqlite::SCHEMA,
        crate::pins::sqlite::SCHEMA,
        crate::credentials::sqlite::SCHEMA,
        crate::quotas::sqlite::SCHEMA,
        crate::tokens::sqlite::SCHEMA,
        crate::chat::sqlite::SCHEMA,
    ] {
        conn.execute_batch(ddl)?;
    }
    Ok(())
}
