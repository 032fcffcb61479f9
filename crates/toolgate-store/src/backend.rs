//! The one door to the store: [`Store`], opened once per process from a [`StoreLocation`]
//! resolved once from the configuration, gives every concern's handle — approvals,
//! idempotency keys, results, pins, quotas, tokens, chat posts, MCP credentials, sessions —
//! on either backend. The embedded backend is one connection pool ([`EmbeddedDb`]) whose
//! schema is created when it opens; PostgreSQL is one pool, migrated under the advisory lock
//! when it opens, with one change feed. Nothing outside this crate opens a database.
//!
//! The arrow points down: this module knows every store; the stores know only the plumbing
//! below them (`db`, `pg`, `changes`, `clock`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio_util::sync::CancellationToken;
use toolgate_registry::PinBook;

use crate::changes::ChangeFeed;
use crate::credentials::{CredentialKey, PgCredentials, SqliteCredentials};
use crate::db::EmbeddedDb;
use crate::pg::{PgPool, PgUrl};
use crate::quotas::{PgBuckets, QuotaBuckets, SqliteBuckets};
use crate::sessions::{PgChatSessions, PgSessions};
use crate::{
    ApprovalStore, ChatPosts, CredentialStore, IdempotencyStore, PinStore, ResultStore,
    StoreResult, TokenStore,
};

/// Where shared state lives, resolved once from the configuration.
#[derive(Debug, Clone)]
pub enum StoreLocation {
    /// SQLite (and files) in the data directory: one process, or several on one host.
    Embedded {
        /// `toolgate.db`.
        db: PathBuf,
        /// The directory of offloaded results.
        results: PathBuf,
    },
    /// A PostgreSQL database any number of replicas share.
    Postgres(Box<PgUrl>),
}

impl StoreLocation {
    /// The embedded store of the data directory `data_dir`.
    pub fn embedded(data_dir: &Path) -> Self {
        StoreLocation::Embedded {
            db: data_dir.join("toolgate.db"),
            results: data_dir.join("results"),
        }
    }

    pub fn is_postgres(&self) -> bool {
        matches!(self, StoreLocation::Postgres(_))
    }
}

/// The store of one process. Cheap to clone: clones share the pool.
#[derive(Debug, Clone)]
pub struct Store {
    backend: Backend,
}

#[derive(Debug, Clone)]
enum Backend {
    Embedded { db: EmbeddedDb, results: PathBuf },
    Postgres(Box<PgBackend>),
}

/// What the stores of one process share on PostgreSQL: the pool and the change feed its
/// listener fills.
#[derive(Debug, Clone)]
pub struct PgBackend {
    pub pool: PgPool,
    pub feed: ChangeFeed,
}

impl PgBackend {
    /// Connects to `url`, applies pending schema steps under the advisory lock (refusing a
    /// schema newer than this binary), and starts the change feed's listener, which runs
    /// until `stop` fires.
    pub async fn open(url: &PgUrl, stop: CancellationToken) -> StoreResult<Self> {
        let pool = PgPool::new(url)?;
        crate::pg::migrate::migrate(&pool, false).await?;
        let feed = ChangeFeed::new();
        crate::pg::notify::spawn_listener(url.clone(), feed.clone(), stop);
        Ok(PgBackend { pool, feed })
    }
}

impl Store {
    /// Opens the store at `location`: the embedded database (created with every table if
    /// needed), or PostgreSQL (migrated; its change feed listens until `stop` fires).
    pub async fn open(location: &StoreLocation, stop: CancellationToken) -> StoreResult<Store> {
        let backend = match location {
            StoreLocation::Embedded { db, results } => {
                let (db, results) = (db.clone(), results.clone());
                return tokio::task::spawn_blocking(move || Store::open_embedded(&db, &results))
                    .await
                    .map_err(|e| {
                        crate::StoreError::Unavailable(format!(
                            "opening the embedded database failed: {e}"
                        ))
                    })?;
            }
            StoreLocation::Postgres(url) => {
                Backend::Postgres(Box::new(PgBackend::open(url, stop).await?))
            }
        };
        Ok(Store { backend })
    }

    /// The embedded store (`db`, created with every table if needed; offloaded results in
    /// `results`), opened on this thread.
    pub fn open_embedded(db: &Path, results: &Path) -> StoreResult<Store> {
        Ok(Store {
            backend: Backend::Embedded {
                db: EmbeddedDb::open(db)?,
                results: results.to_path_buf(),
            },
        })
    }

    /// A store over an already opened PostgreSQL backend.
    pub fn postgres(backend: PgBackend) -> Store {
        Store {
            backend: Backend::Postgres(Box::new(backend)),
        }
    }

    pub fn is_postgres(&self) -> bool {
        matches!(self.backend, Backend::Postgres(_))
    }

    /// The PostgreSQL pool (the cluster's audit log and admin commands use it).
    pub fn pg_pool(&self) -> Option<&PgPool> {
        match &self.backend {
            Backend::Postgres(pg) => Some(&pg.pool),
            Backend::Embedded { .. } => None,
        }
    }

    /// The embedded database's file.
    pub fn embedded_db(&self) -> Option<&Path> {
        match &self.backend {
            Backend::Embedded { db, .. } => Some(db.path()),
            Backend::Postgres(_) => None,
        }
    }

    /// Pending approvals and standing grants.
    pub fn approvals(&self) -> ApprovalStore {
        match &self.backend {
            Backend::Embedded { db, .. } => ApprovalStore::with_backend(
                Arc::new(crate::approvals::SqliteApprovals::new(db.clone())),
                ChangeFeed::new(),
                false,
            ),
            Backend::Postgres(pg) => ApprovalStore::with_backend(
                Arc::new(crate::approvals::PgApprovals::new(pg.pool.clone())),
                pg.feed.clone(),
                true,
            ),
        }
    }

    /// The results of write calls by idempotency key, and their reservations.
    pub fn idempotency(&self) -> IdempotencyStore {
        match &self.backend {
            Backend::Embedded { db, .. } => IdempotencyStore::with_backend(
                Arc::new(crate::idempotency::SqliteIdempotency::new(db.clone())),
                ChangeFeed::new(),
                false,
            ),
            Backend::Postgres(pg) => IdempotencyStore::with_backend(
                Arc::new(crate::idempotency::PgIdempotency::new(pg.pool.clone())),
                pg.feed.clone(),
                true,
            ),
        }
    }

    /// Offloaded results (files in the data dir, or rows in PostgreSQL).
    pub fn results(&self) -> StoreResult<ResultStore> {
        match &self.backend {
            Backend::Embedded { results, .. } => ResultStore::open(results),
            Backend::Postgres(pg) => Ok(ResultStore::with_backend(Arc::new(
                crate::results::PgResults::new(pg.pool.clone()),
            ))),
        }
    }

    /// The pinned tool definitions (R-REG-5).
    pub fn pins(&self) -> Arc<dyn PinBook> {
        match &self.backend {
            Backend::Embedded { db, .. } => Arc::new(PinStore::new(db.clone())),
            Backend::Postgres(pg) => Arc::new(crate::pins::PgPins::new(pg.pool.clone())),
        }
    }

    /// The `[[quotas]]` buckets, shared by every process on the data dir or the cluster.
    pub fn quotas(&self) -> Arc<dyn QuotaBuckets> {
        match &self.backend {
            Backend::Embedded { db, .. } => Arc::new(SqliteBuckets::new(db.clone())),
            Backend::Postgres(pg) => Arc::new(PgBuckets::new(pg.pool.clone())),
        }
    }

    /// The bearer tokens toolgate issued (hashes only).
    pub fn tokens(&self) -> TokenStore {
        match &self.backend {
            Backend::Embedded { db, .. } => {
                TokenStore::with_backend(Arc::new(crate::tokens::SqliteTokens::new(db.clone())))
            }
            Backend::Postgres(pg) => {
                TokenStore::with_backend(Arc::new(crate::tokens::PgTokens::new(pg.pool.clone())))
            }
        }
    }

    /// Which approval request the chat channels posted as which message.
    pub fn chat_posts(&self) -> ChatPosts {
        match &self.backend {
            Backend::Embedded { db, .. } => {
                ChatPosts::with_backend(Arc::new(crate::chat::SqliteChatPosts::new(db.clone())))
            }
            Backend::Postgres(pg) => {
                ChatPosts::with_backend(Arc::new(crate::chat::PgChatPosts::new(pg.pool.clone())))
            }
        }
    }

    /// The agent's conversations and their journals.
    pub fn conversations(&self) -> crate::ConversationStore {
        match &self.backend {
            Backend::Embedded { db, .. } => crate::ConversationStore::with_backend(Arc::new(
                crate::conversations::SqliteConversations::new(db.clone()),
            )),
            Backend::Postgres(pg) => crate::ConversationStore::with_backend(Arc::new(
                crate::conversations::PgConversations::new(pg.pool.clone()),
            )),
        }
    }

    /// The OAuth credentials of MCP servers: in the embedded database (files `0600`), or in
    /// PostgreSQL encrypted under `key` (`TOOLGATE_CREDENTIALS_KEY`; the embedded store
    /// ignores it).
    pub fn credentials(&self, key: Option<CredentialKey>) -> CredentialStore {
        match &self.backend {
            Backend::Embedded { db, .. } => {
                CredentialStore::with_backend(Arc::new(SqliteCredentials::new(db.clone())))
            }
            Backend::Postgres(pg) => {
                CredentialStore::with_backend(Arc::new(PgCredentials::new(pg.pool.clone(), key)))
            }
        }
    }

    /// MCP sessions any replica can continue (PostgreSQL only).
    pub fn sessions(&self) -> Option<PgSessions> {
        self.pg_pool().map(|pool| PgSessions::new(pool.clone()))
    }

    /// Agent conversations a host can resume on another (PostgreSQL only; embedded, they are
    /// files in the data dir).
    pub fn chat_sessions(&self) -> Option<PgChatSessions> {
        self.pg_pool().map(|pool| PgChatSessions::new(pool.clone()))
    }
}
