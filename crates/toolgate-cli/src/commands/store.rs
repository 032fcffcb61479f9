//! `toolgate store status|migrate`: where shared state lives and, for PostgreSQL, the schema
//! version this database is at against the one this binary knows.

use anyhow::Context;
use serde_json::json;
use toolgate_app::Config;
use toolgate_app::config::StoreLocation;
use toolgate_store::StoreError;
use toolgate_store::pg::{PgPool, migrate};

use crate::cli::StoreCommand;
use crate::output;

/// Exit code of `status` when steps are pending.
const PENDING: i32 = 3;
/// Exit code when the schema is newer than this binary.
const TOO_NEW: i32 = 2;

pub async fn run(settings: &Config, cmd: StoreCommand) -> anyhow::Result<i32> {
    let url = match settings.store() {
        StoreLocation::Embedded { .. } => {
            let where_ = settings.db_path();
            let schema = toolgate_store::db::embedded_schema(&where_)?;
            let known = toolgate_store::db::EMBEDDED_SCHEMA;
            match cmd {
                StoreCommand::Status { json: true } => output::json(&json!({
                    "backend": "embedded",
                    "database": where_,
                    "audit": settings.audit_path(),
                    "schema": schema,
                    "known": known,
                }))?,
                StoreCommand::Status { json: false } => output::line(&format!(
                    "embedded store: {} and {}: schema {schema} (this toolgate knows {known}; \
                     an older one is brought up when opened)",
                    where_.display(),
                    settings.audit_path().display()
                )),
                StoreCommand::Migrate { .. } => output::line(
                    "embedded store: nothing to migrate (set [store] url or TOOLGATE_STORE_URL for PostgreSQL)",
                ),
            }
            return Ok(if schema > known { TOO_NEW } else { 0 });
        }
        StoreLocation::Postgres(url) => url.clone(),
    };
    let pool = PgPool::new(&url)?;
    match cmd {
        StoreCommand::Status { json } => {
            let status = migrate::status(&pool)
                .await
                .with_context(|| format!("reading the schema of {url}"))?;
            let pending: Vec<_> = status
                .pending
                .iter()
                .map(|m| json!({"version": m.version, "name": m.name}))
                .collect();
            if json {
                output::json(&json!({
                    "backend": "postgres",
                    "url": url.to_string(),
                    "schema": status.current,
                    "known": status.latest,
                    "pending": pending,
                }))?;
            } else {
                output::line(&format!(
                    "postgres store {url}: schema {} (this toolgate knows {})",
                    status.current, status.latest
                ));
                for m in &status.pending {
                    output::line(&format!("  pending {}: {}", m.version, m.name));
                }
            }
            Ok(match status.check() {
                Ok(()) => 0,
                Err(StoreError::SchemaTooNew { .. }) => TOO_NEW,
                Err(_) => PENDING,
            })
        }
        StoreCommand::Migrate { dry_run } => {
            let steps = match migrate::migrate(&pool, dry_run).await {
                Ok(steps) => steps,
                Err(e @ StoreError::SchemaTooNew { .. }) => {
                    eprintln!("toolgate: {e}");
                    return Ok(TOO_NEW);
                }
                Err(e) => return Err(e).with_context(|| format!("migrating {url}")),
            };
            let verb = if dry_run { "would apply" } else { "applied" };
            if steps.is_empty() {
                output::line(&format!("postgres store {url}: up to date"));
            }
            for m in &steps {
                output::line(&format!("{verb} {}: {}", m.version, m.name));
            }
            Ok(0)
        }
    }
}
