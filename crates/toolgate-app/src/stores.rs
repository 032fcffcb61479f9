//! The stores in the data directory (`toolgate.db`, the audit log, results), each opened
//! with an error that names the file and what to do, and the audit key beside them; and the
//! shared stores ([`SharedStores`]: approvals, idempotency keys, the approval channels' chat
//! posts, …) on whichever backend `[store]` chose — the embedded database, or PostgreSQL for
//! a cluster.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, bail};
use tokio_util::sync::CancellationToken;
use toolgate_gateway::approve::Decisions;
use toolgate_registry::PinBook;
use toolgate_store::approvals::ApprovalStore;
use toolgate_store::audit::{AuditKey, AuditLog, default_key_dir, resolved_path};
use toolgate_store::credentials::{CredentialKey, PgCredentials};
use toolgate_store::idempotency::IdempotencyStore;
use toolgate_store::pg::{PgBackend, PgPool, migrate};
use toolgate_store::pins::PgPins;
use toolgate_store::quotas::{QuotaBuckets, SqliteBuckets};
use toolgate_store::results::ResultStore;
use toolgate_store::{ChatPosts, CredentialStore, PinStore, TokenStore};

use crate::config::{Config, StoreLocation};

/// Creates the data directory, with an error that says what to do when it can't.
pub fn ensure_data_dir(config: &Config) -> anyhow::Result<()> {
    let logs = config.data_dir.join("logs");
    std::fs::create_dir_all(&logs).with_context(|| {
        format!(
            "cannot create the data directory {} (choose a writable one with --data-dir or data_dir in toolgate.toml)",
            config.data_dir.display()
        )
    })?;
    let probe = config.data_dir.join(".write-test");
    std::fs::write(&probe, b"").with_context(|| {
        format!(
            "the data directory {} is not writable (choose a writable one with --data-dir or data_dir in toolgate.toml)",
            config.data_dir.display()
        )
    })?;
    let _ = std::fs::remove_file(probe);
    Ok(())
}

/// The stores every replica of a cluster shares, on the backend `[store]` chose.
#[derive(Clone)]
pub struct SharedStores {
    pub approvals: ApprovalStore,
    pub idempotency: IdempotencyStore,
    /// Offloaded results (`read_result`), retention from `[limits]`.
    pub results: ResultStore,
    /// MCP sessions any replica can continue (PostgreSQL only).
    pub sessions: Option<toolgate_store::sessions::PgSessions>,
    /// The cluster's audit log (PostgreSQL only; the embedded one is [`open_audit`]).
    pub audit: Option<AuditLog>,
    /// The pinned tool definitions, on the same pool as the rest.
    pub pins: Arc<dyn PinBook>,
    /// The bearer tokens `toolgate token create` and the console issue.
    pub tokens: TokenStore,
    /// The `[[quotas]]` buckets: in the embedded database (shared by every process on the
    /// data dir) or in PostgreSQL (shared by the cluster).
    pub quotas: Arc<dyn QuotaBuckets>,
    /// Which approval request the approval channels (chat bots) posted as which message.
    pub chat_posts: ChatPosts,
    /// Stops the PostgreSQL change feed's listener (nothing to stop when embedded).
    pub stop: CancellationToken,
}

impl std::fmt::Debug for SharedStores {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedStores").finish_non_exhaustive()
    }
}

/// Opens the shared stores: the embedded database in the data dir, or PostgreSQL — its
/// schema migrated under the advisory lock and its change feed listening.
pub async fn open_shared(config: &Config) -> anyhow::Result<SharedStores> {
    let stop = CancellationToken::new();
    match config.store()? {
        StoreLocation::Embedded => {
            ensure_data_dir(config)?;
            let db = config.db_path();
            let approvals = ApprovalStore::open(&db)
                .with_context(|| format!("cannot open the approvals store {}", db.display()))?;
            let idempotency = IdempotencyStore::open(&db)
                .with_context(|| format!("cannot open the idempotency store {}", db.display()))?;
            let results = ResultStore::open(&config.results_dir())
                .context("cannot open the result store")?
                .with_retention(config.file.limits.result_retention());
            Ok(SharedStores {
                approvals,
                idempotency,
                results,
                sessions: None,
                audit: None,
                pins: open_pins(config)?,
                // In the database, not this process's memory: a one-shot `toolgate call` is
                // a new process, and would start with a full bucket every time.
                quotas: Arc::new(SqliteBuckets::open(&db).with_context(|| {
                    format!("cannot open the quota buckets in {}", db.display())
                })?),
                tokens: TokenStore::open(&db).with_context(|| {
                    format!("cannot open the issued tokens in {}", db.display())
                })?,
                chat_posts: ChatPosts::open(&db).with_context(|| {
                    format!(
                        "cannot open the approval channels' posts in {}",
                        db.display()
                    )
                })?,
                stop,
            })
        }
        StoreLocation::Postgres(url) => {
            let backend = PgBackend::open(&url, stop.clone())
                .await
                .with_context(|| format!("cannot open the store at {url}"))?;
            // Every replica MACs its chain with the same key: copy the key dir's audit.key to
            // each (docs/deployment.md).
            let audit = AuditLog::open_postgres(
                backend.pool.clone(),
                config.durability(),
                Some(open_key(config)?),
            )
            .await
            .with_context(|| format!("cannot open the audit log at {url}"))?;
            Ok(SharedStores {
                approvals: backend.approvals(),
                idempotency: backend.idempotency(),
                results: backend
                    .results()
                    .with_retention(config.file.limits.result_retention()),
                sessions: Some(backend.sessions()),
                audit: Some(audit),
                pins: Arc::new(backend.pins()),
                tokens: backend.tokens(),
                quotas: Arc::new(backend.quotas()),
                chat_posts: backend.chat_posts(),
                stop,
            })
        }
    }
}

/// The issued bearer tokens, wherever `[store]` keeps them.
/// (PostgreSQL: the schema is migrated first, as at a server's start.)
pub async fn open_tokens(config: &Config) -> anyhow::Result<TokenStore> {
    match config.store()? {
        StoreLocation::Embedded => {
            ensure_data_dir(config)?;
            let db = config.db_path();
            TokenStore::open(&db)
                .with_context(|| format!("cannot open the issued tokens in {}", db.display()))
        }
        StoreLocation::Postgres(url) => {
            let backend = PgBackend::open(&url, CancellationToken::new())
                .await
                .with_context(|| format!("cannot open the store at {url}"))?;
            Ok(backend.tokens())
        }
    }
}

/// The approvals, wherever `[store]` keeps them.
pub async fn open_approvals(config: &Config) -> anyhow::Result<ApprovalStore> {
    Ok(open_shared(config).await?.approvals)
}

/// The decision desk over the approvals and the audit log `[store]` chose (the cluster's,
/// with PostgreSQL): how a command outside a running server decides an approval, recorded
/// like every front end's decision.
pub async fn open_decisions(config: &Config) -> anyhow::Result<Decisions> {
    let shared = open_shared(config).await?;
    let audit = match shared.audit {
        Some(audit) => audit,
        None => open_audit(config)?,
    };
    Ok(Decisions::new(Arc::new(shared.approvals), Arc::new(audit)))
}

/// The pinned tool definitions (R-REG-5): `tool_pins` in the embedded database, or in
/// PostgreSQL where every replica shares them (the pool connects on first use; the schema
/// is the one the runtime, or [`ensure_schema`], migrated).
pub fn open_pins(config: &Config) -> anyhow::Result<Arc<dyn PinBook>> {
    match config.store()? {
        StoreLocation::Embedded => {
            ensure_data_dir(config)?;
            let store = PinStore::open(&config.db_path()).with_context(|| {
                format!(
                    "cannot open the pinned tool definitions in {}",
                    config.db_path().display()
                )
            })?;
            Ok(Arc::new(store))
        }
        StoreLocation::Postgres(url) => Ok(Arc::new(PgPins::new(PgPool::new(&url)?))),
    }
}

pub fn open_audit(config: &Config) -> anyhow::Result<AuditLog> {
    ensure_data_dir(config)?;
    let key = open_key(config)?;
    AuditLog::open_keyed(
        &config.audit_path(),
        &config.db_path(),
        config.durability(),
        key,
    )
    .with_context(|| {
        format!(
            "cannot open the audit log {}",
            config.audit_path().display()
        )
    })
}

/// The OAuth tokens of MCP servers: `mcp_credentials` in the embedded store (files 0600), or
/// in PostgreSQL encrypted under `TOOLGATE_CREDENTIALS_KEY` (shared by every replica). The
/// pool connects on first use; the schema is the one the runtime (or
/// [`ensure_schema`]) migrated.
pub fn open_credentials(config: &Config) -> anyhow::Result<Arc<CredentialStore>> {
    match config.store()? {
        StoreLocation::Embedded => {
            ensure_data_dir(config)?;
            let store = CredentialStore::open(&config.db_path()).with_context(|| {
                format!(
                    "cannot open the credential store in {}",
                    config.db_path().display()
                )
            })?;
            Ok(Arc::new(store))
        }
        StoreLocation::Postgres(url) => {
            let key = CredentialKey::from_env()?;
            let backend = PgCredentials::new(PgPool::new(&url)?, key);
            Ok(Arc::new(CredentialStore::with_backend(Arc::new(backend))))
        }
    }
}

/// Applies pending schema steps when the store is PostgreSQL (commands that use a store
/// without opening the runtime).
pub async fn ensure_schema(config: &Config) -> anyhow::Result<()> {
    if let StoreLocation::Postgres(url) = config.store()? {
        migrate::migrate(&PgPool::new(&url)?, false)
            .await
            .with_context(|| format!("migrating the store at {url}"))?;
    }
    Ok(())
}

/// The audit key's directory: `$TOOLGATE_KEY_DIR`, else `$XDG_CONFIG_HOME/toolgate/keys`,
/// else `~/.config/toolgate/keys`. Not from the configuration file, which lives in the
/// workspace. Refused beneath the workspace, the data dir or a path the shell sandbox may
/// read or write: whoever can read the key can forge the log.
pub fn key_dir(config: &Config) -> anyhow::Result<PathBuf> {
    let var = |k: &str| std::env::var(k).ok();
    let dir = default_key_dir(
        var("TOOLGATE_KEY_DIR").as_deref(),
        var("XDG_CONFIG_HOME").as_deref(),
        var("HOME").as_deref(),
    )
    .context("no directory for the audit key: set TOOLGATE_KEY_DIR (or HOME)")?;
    let dir = resolved_path(&dir);
    let mut reachable = vec![
        ("the workspace", config.workspace.clone()),
        ("the data dir", config.data_dir.clone()),
    ];
    for p in &config.file.shell.extra_read_paths {
        reachable.push(("a [shell] extra_read_paths entry", p.clone()));
    }
    for (what, root) in reachable {
        let root = resolved_path(&root);
        if dir.starts_with(&root) || root.starts_with(&dir) {
            bail!(
                "the audit key directory {} overlaps {what} {}: tools could read the key and \
                 forge the audit log. Set TOOLGATE_KEY_DIR to a directory outside it",
                dir.display(),
                root.display()
            );
        }
    }
    Ok(dir)
}

/// The audit key, created on first use.
pub fn open_key(config: &Config) -> anyhow::Result<AuditKey> {
    let dir = key_dir(config)?;
    AuditKey::open_or_create(&dir)
        .with_context(|| format!("cannot use the audit key in {}", dir.display()))
}

/// `toolgate run` / `toolgate chat` conversations: files in the data dir, or PostgreSQL so a
/// conversation begun on one host resumes on another.
pub fn open_history(config: &Config) -> anyhow::Result<toolgate_agent::HistoryStore> {
    match config.store()? {
        StoreLocation::Embedded => Ok(toolgate_agent::HistoryStore::new(
            config.data_dir.join("sessions"),
        )),
        StoreLocation::Postgres(url) => {
            let conversations = toolgate_store::sessions::PgConversations::new(PgPool::new(&url)?);
            Ok(toolgate_agent::HistoryStore::with_backend(Arc::new(
                SharedHistory(conversations),
            )))
        }
    }
}

/// The agent's history over the cluster store.
struct SharedHistory(toolgate_store::sessions::PgConversations);

#[async_trait::async_trait]
impl toolgate_agent::HistoryBackend for SharedHistory {
    async fn load_text(&self, id: &str) -> Result<Option<String>, toolgate_agent::SessionError> {
        self.0
            .load(id)
            .await
            .map_err(|e| toolgate_agent::SessionError::Store {
                id: id.to_owned(),
                message: e.to_string(),
            })
    }

    async fn save_text(&self, id: &str, text: &str) -> Result<(), toolgate_agent::SessionError> {
        self.0
            .save(id, text)
            .await
            .map_err(|e| toolgate_agent::SessionError::Store {
                id: id.to_owned(),
                message: e.to_string(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two hosts on one store: a conversation saved through one resumes through the other.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_conversation_saved_on_one_host_loads_on_another() {
        let scratch = toolgate_testkit::pg::Scratch::new().await;
        let url: toolgate_store::pg::PgUrl = scratch.url().parse().unwrap();
        migrate::migrate(&PgPool::new(&url).unwrap(), false)
            .await
            .unwrap();
        let host = || {
            toolgate_agent::HistoryStore::with_backend(Arc::new(SharedHistory(
                toolgate_store::sessions::PgConversations::new(PgPool::new(&url).unwrap()),
            )))
        };
        let saved = toolgate_agent::SavedSession {
            session: "s1".into(),
            provider: "anthropic".into(),
            model: "m".into(),
            messages: vec![toolgate_agent::Message::user("hi")],
        };
        assert_eq!(host().load("s1").await.unwrap(), None);
        host().save(&saved).await.unwrap();
        assert_eq!(host().load("s1").await.unwrap(), Some(saved));
        assert!(
            host().load("../x").await.is_err(),
            "ids are checked before the store"
        );
    }
}
