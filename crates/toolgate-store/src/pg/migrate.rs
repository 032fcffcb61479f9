//! The PostgreSQL schema, versioned: [`MIGRATIONS`] in order, each applied once in its own
//! transaction and recorded in `toolgate_schema`. Applying runs under a session advisory lock
//! ([`LOCK_KEY`]), so replicas starting together migrate once: the first applies, the others
//! wait for the lock and then find nothing left to do. A database whose schema is newer than
//! this binary knows is refused ([`StoreError::SchemaTooNew`]): an old replica must not write
//! rows a newer one reads differently.

use crate::pg::{PgPool, pg_error};
use crate::{StoreError, StoreResult};

/// `pg_advisory_lock` key of schema changes (ASCII "toolgate" as a big-endian i64).
pub const LOCK_KEY: i64 = 0x746f_6f6c_6761_7465;

/// One step of the schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Migration {
    pub version: i32,
    pub name: &'static str,
    pub sql: &'static str,
}

/// Every schema step this binary knows, oldest first; versions count up from 1.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "approvals, grants and idempotency keys with reservations; change notifications",
        sql: include_str!("migrations/0001_approvals_idempotency.sql"),
    },
    Migration {
        version: 2,
        name: "offloaded results",
        sql: include_str!("migrations/0002_offloaded_results.sql"),
    },
    Migration {
        version: 3,
        name: "MCP sessions any replica can continue",
        sql: include_str!("migrations/0003_mcp_sessions.sql"),
    },
    Migration {
        version: 4,
        name: "the cluster's audit log: a chain per writer, MACed heads",
        sql: include_str!("migrations/0004_audit.sql"),
    },
    Migration {
        version: 5,
        name: "MCP OAuth credentials, encrypted",
        sql: include_str!("migrations/0005_mcp_credentials.sql"),
    },
    Migration {
        version: 6,
        name: "pinned tool definitions",
        sql: include_str!("migrations/0006_tool_pins.sql"),
    },
    Migration {
        version: 7,
        name: "run/chat conversations",
        sql: include_str!("migrations/0007_chat_sessions.sql"),
    },
    Migration {
        version: 8,
        name: "issued bearer tokens",
        sql: include_str!("migrations/0008_api_tokens.sql"),
    },
    Migration {
        version: 9,
        name: "quota buckets",
        sql: include_str!("migrations/0009_quota_buckets.sql"),
    },
    Migration {
        version: 10,
        name: "approval requesters",
        sql: include_str!("migrations/0010_approval_requesters.sql"),
    },
    Migration {
        version: 11,
        name: "approval channels",
        sql: include_str!("migrations/0011_approval_channels.sql"),
    },
    Migration {
        version: 12,
        name: "the audit log's register of chains",
        sql: include_str!("migrations/0012_audit_roster.sql"),
    },
    Migration {
        version: 13,
        name: "the agent's conversations and their journals",
        sql: include_str!("migrations/0013_conversations.sql"),
    },
    Migration {
        version: 14,
        name: "a conversation's delivery cursor",
        sql: include_str!("migrations/0014_conversation_delivery.sql"),
    },
];

/// The newest schema this binary knows.
pub fn latest() -> i32 {
    MIGRATIONS.last().map_or(0, |m| m.version)
}

/// Where a database's schema stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaStatus {
    /// The newest applied version (0: none).
    pub current: i32,
    /// The newest this binary knows.
    pub latest: i32,
    /// Known steps not applied yet, in order.
    pub pending: Vec<Migration>,
}

impl SchemaStatus {
    /// Whether this binary may use the database as it is.
    pub fn check(&self) -> StoreResult<()> {
        if self.current > self.latest {
            return Err(StoreError::SchemaTooNew {
                found: self.current,
                known: self.latest,
            });
        }
        if !self.pending.is_empty() {
            return Err(StoreError::Config(format!(
                "the database schema is at version {} and this toolgate needs {}; run \
                 `toolgate store migrate`",
                self.current, self.latest
            )));
        }
        Ok(())
    }
}

const CREATE_SCHEMA_TABLE: &str = "CREATE TABLE IF NOT EXISTS toolgate_schema (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
)";

/// Reads where the schema stands, changing nothing.
pub async fn status(pool: &PgPool) -> StoreResult<SchemaStatus> {
    let client = pool.get().await?;
    let current = current_version(&client).await?;
    Ok(SchemaStatus {
        current,
        latest: latest(),
        pending: MIGRATIONS
            .iter()
            .filter(|m| m.version > current)
            .copied()
            .collect(),
    })
}

/// The newest applied step (0 before the first).
async fn current_version(client: &deadpool_postgres::Client) -> StoreResult<i32> {
    let exists: bool = client
        .query_one("SELECT to_regclass('toolgate_schema') IS NOT NULL", &[])
        .await
        .map_err(pg_error)?
        .get(0);
    if !exists {
        return Ok(0);
    }
    Ok(client
        .query_one("SELECT COALESCE(MAX(version), 0) FROM toolgate_schema", &[])
        .await
        .map_err(pg_error)?
        .get(0))
}

/// Applies every pending step (none with `dry_run`) under the advisory lock and returns the
/// steps applied (or that would be). Refuses a schema newer than this binary.
pub async fn migrate(pool: &PgPool, dry_run: bool) -> StoreResult<Vec<Migration>> {
    let mut client = pool.get().await?;
    client
        .execute("SELECT pg_advisory_lock($1)", &[&LOCK_KEY])
        .await
        .map_err(pg_error)?;
    let outcome = apply(&mut client, dry_run).await;
    // The lock is the session's: release it on the same connection, whatever happened.
    let unlocked = client
        .execute("SELECT pg_advisory_unlock($1)", &[&LOCK_KEY])
        .await
        .map_err(pg_error);
    let applied = outcome?;
    unlocked?;
    Ok(applied)
}

async fn apply(
    client: &mut deadpool_postgres::Object,
    dry_run: bool,
) -> StoreResult<Vec<Migration>> {
    if !dry_run {
        client
            .batch_execute(CREATE_SCHEMA_TABLE)
            .await
            .map_err(pg_error)?;
    }
    let current = current_version(client).await?;
    if current > latest() {
        return Err(StoreError::SchemaTooNew {
            found: current,
            known: latest(),
        });
    }
    let pending: Vec<Migration> = MIGRATIONS
        .iter()
        .filter(|m| m.version > current)
        .copied()
        .collect();
    if dry_run {
        return Ok(pending);
    }
    for step in &pending {
        let tx = client.transaction().await.map_err(pg_error)?;
        tx.batch_execute(step.sql).await.map_err(|e| {
            StoreError::Postgres(format!(
                "schema step {} ({}) failed: {}",
                step.version,
                step.name,
                pg_error(e)
            ))
        })?;
        tx.execute(
            "INSERT INTO toolgate_schema (version, name) VALUES ($1, $2)",
            &[&step.version, &step.name],
        )
        .await
        .map_err(pg_error)?;
        tx.commit().await.map_err(pg_error)?;
        tracing::info!(
            version = step.version,
            name = step.name,
            "applied a schema step"
        );
    }
    Ok(pending)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_count_up_from_one() {
        for (i, m) in MIGRATIONS.iter().enumerate() {
            assert_eq!(m.version, i32::try_from(i).unwrap() + 1, "{}", m.name);
        }
    }

    #[test]
    fn a_newer_schema_is_refused_and_a_pending_one_named() {
        let newer = SchemaStatus {
            current: latest() + 1,
            latest: latest(),
            pending: vec![],
        };
        assert!(matches!(
            newer.check(),
            Err(StoreError::SchemaTooNew { .. })
        ));
        let behind = SchemaStatus {
            current: 0,
            latest: latest(),
            pending: MIGRATIONS.to_vec(),
        };
        assert!(
            behind
                .check()
                .unwrap_err()
                .to_string()
                .contains("toolgate store migrate")
        );
    }
}
