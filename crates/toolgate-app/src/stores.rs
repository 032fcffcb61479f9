//! [`Stores`]: the stores of one configuration on whichever backend `[store]` chose — the
//! embedded database in the data directory, or PostgreSQL for a cluster — opened once per
//! process through the store's one door, each failure with an error that names the file
//! and what to do; the audit log and its key beside them.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, bail};
use tokio_util::sync::CancellationToken;
use toolgate_audit::{AuditKey, AuditLog, default_key_dir, resolved_path};
use toolgate_gateway::approve::Decisions;
use toolgate_registry::PinBook;
use toolgate_store::approvals::ApprovalStore;
use toolgate_store::credentials::CredentialKey;
use toolgate_store::idempotency::IdempotencyStore;
use toolgate_store::quotas::QuotaBuckets;
use toolgate_store::results::ResultStore;
use toolgate_store::{ChatPosts, CredentialStore, Store, StoreLocation, TokenStore};

use crate::config::Config;

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

/// The stores of one configuration, opened once per process through the store's one door
/// ([`Store`]): the runtime holds one, and the admin commands (`token`, `approvals`, `mcp
/// login`, `tools approve-change`, `chat`) open one — none of them opens a database itself.
#[derive(Clone)]
pub struct Stores {
    store: Store,
    config: Config,
    /// Stops the PostgreSQL change feed's listener (nothing to stop when embedded).
    stop: CancellationToken,
}

impl std::fmt::Debug for Stores {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stores")
            .field("store", &self.store)
            .finish_non_exhaustive()
    }
}

impl Stores {
    /// Opens the store `[store]` chose: the embedded database in the data dir (created with
    /// its tables), or PostgreSQL — its schema migrated under the advisory lock and its
    /// change feed listening until [`Stores::stop`].
    pub async fn open(config: &Config) -> anyhow::Result<Stores> {
        let stop = CancellationToken::new();
        let location = config.store();
        if !location.is_postgres() {
            ensure_data_dir(config)?;
        }
        let store = Store::open(location, stop.clone())
            .await
            .with_context(|| match location {
                StoreLocation::Embedded { db, .. } => {
                    format!("cannot open the store {}", db.display())
                }
                StoreLocation::Postgres(url) => format!("cannot open the store at {url}"),
            })?;
        Ok(Stores {
            store,
            config: config.clone(),
            stop,
        })
    }

    /// The store's door, for what is not named here.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Stops the change feed's listener (PostgreSQL); the handles stay usable.
    pub fn stop(&self) {
        self.stop.cancel();
    }

    pub fn approvals(&self) -> ApprovalStore {
        self.store.approvals()
    }

    pub fn idempotency(&self) -> IdempotencyStore {
        self.store.idempotency()
    }

    /// Offloaded results (`read_result`), retention from `[limits]`.
    pub fn results(&self) -> anyhow::Result<ResultStore> {
        Ok(self
            .store
            .results()
            .context("cannot open the result store")?
            .with_retention(self.config.file.limits.result_retention()))
    }

    /// The pinned tool definitions (R-REG-5).
    pub fn pins(&self) -> Arc<dyn PinBook> {
        self.store.pins()
    }

    /// The `[[quotas]]` buckets: in the embedded database (shared by every process on the
    /// data dir — a one-shot `toolgate call` must not start with a full bucket) or in
    /// PostgreSQL (shared by the cluster).
    pub fn quotas(&self) -> Arc<dyn QuotaBuckets> {
        self.store.quotas()
    }

    /// The bearer tokens `toolgate token create` and the console issue.
    pub fn tokens(&self) -> TokenStore {
        self.store.tokens()
    }

    /// Which approval request the approval channels (chat bots) posted as which message.
    pub fn chat_posts(&self) -> ChatPosts {
        self.store.chat_posts()
    }

    /// MCP sessions any replica can continue (PostgreSQL only).
    pub fn sessions(&self) -> Option<toolgate_store::sessions::PgSessions> {
        self.store.sessions()
    }

    /// The OAuth tokens of MCP servers: in the embedded store (files 0600), or in
    /// PostgreSQL encrypted under `TOOLGATE_CREDENTIALS_KEY` (shared by every replica).
    pub fn credentials(&self) -> anyhow::Result<Arc<CredentialStore>> {
        let key = if self.store.is_postgres() {
            CredentialKey::from_env()?
        } else {
            None
        };
        Ok(Arc::new(self.store.credentials(key)))
    }

    /// The audit log: the embedded chain in the data dir, or the cluster's in PostgreSQL.
    /// Every replica MACs its chain with the same key: copy the key dir's `audit.key` to
    /// each (docs/deployment.md).
    pub async fn audit(&self) -> anyhow::Result<AuditLog> {
        match self.store.pg_pool() {
            Some(pool) => AuditLog::open_postgres(
                pool.clone(),
                self.config.durability(),
                Some(open_key(&self.config)?),
            )
            .await
            .with_context(|| format!("cannot open the audit log at {}", pool.url())),
            None => open_audit(&self.config),
        }
    }

    /// The decision desk over the approvals and the audit log: how a command outside a
    /// running server decides an approval, recorded like every front end's decision.
    pub async fn decisions(&self) -> anyhow::Result<Decisions> {
        Ok(Decisions::new(
            Arc::new(self.approvals()),
            Arc::new(self.audit().await?),
        ))
    }

    /// `toolgate run` / `toolgate chat` conversations: files in the data dir, or PostgreSQL
    /// so a conversation begun on one host resumes on another.
    pub fn history(&self) -> toolgate_agent::HistoryStore {
        match self.store.chat_sessions() {
            Some(conversations) => {
                toolgate_agent::HistoryStore::with_backend(Arc::new(SharedHistory(conversations)))
            }
            None => toolgate_agent::HistoryStore::new(self.config.data_dir.join("sessions")),
        }
    }
}

/// The embedded audit log in the data dir, keyed.
fn open_audit(config: &Config) -> anyhow::Result<AuditLog> {
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

/// The agent's history over the cluster store.
struct SharedHistory(toolgate_store::sessions::PgChatSessions);

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
    use toolgate_store::pg::{PgPool, migrate};

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
                toolgate_store::sessions::PgChatSessions::new(PgPool::new(&url).unwrap()),
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
