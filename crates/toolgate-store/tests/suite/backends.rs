//! The two backends every store contract test runs against: the embedded SQLite file and a
//! real PostgreSQL server (a scratch schema per test, `toolgate_testkit::pg`). A case is an
//! `async fn(Backend)`; [`on_both_backends!`] makes a `sqlite::case` and a `postgres::case`
//! test of it.

use tokio_util::sync::CancellationToken;
use toolgate_store::PgBackend;
use toolgate_store::pg::PgUrl;
use toolgate_store::{
    ApprovalStore, ChatPosts, ConversationStore, CredentialStore, IdempotencyStore, ResultStore,
    TokenStore,
};
use toolgate_testkit::pg::Scratch;

use super::approval_fixtures::TestClock;

pub(crate) enum Backend {
    Sqlite(tempfile::TempDir),
    Postgres(Scratch),
}

impl Backend {
    pub(crate) fn sqlite() -> Backend {
        Backend::Sqlite(tempfile::tempdir().unwrap())
    }

    pub(crate) async fn postgres() -> Backend {
        Backend::Postgres(Scratch::new().await)
    }

    /// A new connection (pool and change feed) to the backend's database: two calls are two
    /// processes, or two replicas, on the same data.
    pub(crate) async fn approvals(&self, clock: &TestClock) -> ApprovalStore {
        let store = match self {
            Backend::Sqlite(dir) => ApprovalStore::open(&dir.path().join("toolgate.db")).unwrap(),
            Backend::Postgres(scratch) => pg(scratch).await.approvals(),
        };
        store.with_clock(clock.clock())
    }

    /// The offloaded results (a directory of its own, or the database).
    pub(crate) async fn results(&self) -> ResultStore {
        match self {
            Backend::Sqlite(dir) => ResultStore::open(&dir.path().join("results")).unwrap(),
            Backend::Postgres(scratch) => pg(scratch).await.results().unwrap(),
        }
    }

    /// The MCP credentials (encrypted under a test key in PostgreSQL).
    pub(crate) async fn credentials(&self) -> CredentialStore {
        match self {
            Backend::Sqlite(dir) => CredentialStore::open(&dir.path().join("toolgate.db")).unwrap(),
            Backend::Postgres(scratch) => {
                let key =
                    toolgate_store::credentials::CredentialKey::parse(&"5a".repeat(32)).unwrap();
                pg(scratch).await.credentials(Some(key))
            }
        }
    }

    /// The issued tokens: a new connection each call (another process, or replica).
    pub(crate) async fn tokens(&self) -> TokenStore {
        match self {
            Backend::Sqlite(dir) => TokenStore::open(&dir.path().join("toolgate.db")).unwrap(),
            Backend::Postgres(scratch) => pg(scratch).await.tokens(),
        }
    }

    /// The approval channels' chat posts: a new connection (pool) each call — another
    /// process, or replica.
    pub(crate) async fn chat_posts(&self, clock: &TestClock) -> ChatPosts {
        let posts = match self {
            Backend::Sqlite(dir) => ChatPosts::open(&dir.path().join("toolgate.db")).unwrap(),
            Backend::Postgres(scratch) => pg(scratch).await.chat_posts(),
        };
        posts.with_clock(clock.clock())
    }

    /// The conversations: a new connection (pool) each call — another process, or replica.
    pub(crate) async fn conversations(&self, clock: &TestClock) -> ConversationStore {
        let store = match self {
            Backend::Sqlite(dir) => toolgate_store::Store::open_embedded(
                &dir.path().join("toolgate.db"),
                &dir.path().join("results"),
            )
            .unwrap()
            .conversations(),
            Backend::Postgres(scratch) => pg(scratch).await.conversations(),
        };
        store.with_clock(clock.clock())
    }

    /// PostgreSQL's quota buckets (a new pool each call); the embedded store keeps them in
    /// memory, per process.
    pub(crate) async fn quota_buckets(
        &self,
    ) -> std::sync::Arc<dyn toolgate_store::quotas::QuotaBuckets> {
        match self {
            Backend::Sqlite(_) => panic!("the embedded store keeps quota buckets in memory"),
            Backend::Postgres(scratch) => pg(scratch).await.quotas(),
        }
    }

    /// The temp dir of the embedded backend.
    pub(crate) fn dir(&self) -> Option<&std::path::Path> {
        match self {
            Backend::Sqlite(dir) => Some(dir.path()),
            Backend::Postgres(_) => None,
        }
    }

    pub(crate) async fn idempotency(&self) -> IdempotencyStore {
        match self {
            Backend::Sqlite(dir) => {
                IdempotencyStore::open(&dir.path().join("toolgate.db")).unwrap()
            }
            Backend::Postgres(scratch) => pg(scratch).await.idempotency(),
        }
    }
}

async fn pg(scratch: &Scratch) -> toolgate_store::Store {
    let url: PgUrl = scratch.url().parse().unwrap();
    let backend = PgBackend::open(&url, CancellationToken::new())
        .await
        .unwrap_or_else(|e| panic!("cannot open the PostgreSQL store at {url}: {e}"));
    toolgate_store::Store::postgres(backend)
}

/// `on_both_backends!(case_a, case_b)` in a module of `async fn case(Backend)`s.
macro_rules! on_both_backends {
    ($($case:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    super::$case(crate::suite::backends::Backend::sqlite()).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    super::$case(crate::suite::backends::Backend::postgres().await).await;
                }
            )*
        }
    };
}
