//! [`TokenBook`]: the issued tokens (`toolgate token create`, the console) as this server
//! sees them — an in-memory map from token hash to record, re-read from the store twice a
//! second, so a token made or revoked anywhere (another process on the embedded store,
//! another replica on PostgreSQL) admits or refuses its bearer here within a second, without
//! a restart. Lookups never touch the store. Last use is collected in memory and written
//! every few seconds (and at shutdown).
//!
//! When the store cannot be read, the last set read stays in force and the failure is
//! logged once until a read succeeds again.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arc_swap::ArcSwap;
use tokio_util::sync::CancellationToken;
use toolgate_store::StoreResult;
use toolgate_store::tokens::{TokenRecord, TokenState, TokenStore};

/// How often the tokens are re-read: a revocation reaches every server within this.
pub const RELOAD_EVERY: Duration = Duration::from_millis(500);
/// How often last use is written back.
const TOUCH_EVERY: Duration = Duration::from_secs(1);

/// What a presented token hash turned out to be.
#[derive(Debug, Clone, PartialEq)]
pub enum Lookup {
    Active(Arc<TokenRecord>),
    Refused { id: String, state: TokenState },
    Unknown,
}

pub struct TokenBook {
    store: TokenStore,
    by_hash: ArcSwap<HashMap<String, Arc<TokenRecord>>>,
    used: Mutex<HashMap<String, u64>>,
    failing: AtomicBool,
}

impl std::fmt::Debug for TokenBook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenBook")
            .field("tokens", &self.by_hash.load().len())
            .finish_non_exhaustive()
    }
}

impl TokenBook {
    /// Reads the tokens once; an unreadable store is an error here (a server must not start
    /// without knowing its tokens).
    pub async fn open(store: TokenStore) -> StoreResult<Arc<Self>> {
        let book = TokenBook {
            store,
            by_hash: ArcSwap::from_pointee(HashMap::new()),
            used: Mutex::new(HashMap::new()),
            failing: AtomicBool::new(false),
        };
        book.reload().await?;
        Ok(Arc::new(book))
    }

    pub fn store(&self) -> &TokenStore {
        &self.store
    }

    /// Re-reads every token.
    pub async fn reload(&self) -> StoreResult<()> {
        let rows = self.store.list().await?;
        let map = rows
            .into_iter()
            .map(|r| (r.sha256.clone(), Arc::new(r)))
            .collect();
        self.by_hash.store(Arc::new(map));
        Ok(())
    }

    /// Whether any token was ever issued here (revoked ones count): once one has, a caller
    /// without a token is no longer the local operator.
    pub fn any_issued(&self) -> bool {
        !self.by_hash.load().is_empty()
    }

    /// The token whose SHA-256 (hex, lowercase) is `hash`, as of the last read. A hit is
    /// remembered as a use.
    pub fn lookup(&self, hash: &str) -> Lookup {
        let map = self.by_hash.load();
        let Some(record) = map.get(hash) else {
            return Lookup::Unknown;
        };
        let now = self.store.now_ms();
        match record.state(now) {
            TokenState::Active => {
                if let Ok(mut used) = self.used.lock() {
                    used.insert(record.id.clone(), now);
                }
                Lookup::Active(Arc::clone(record))
            }
            state => Lookup::Refused {
                id: record.id.clone(),
                state,
            },
        }
    }

    /// Whether an active (not expired, not revoked) operator token stands for `principal`,
    /// as of the last read.
    pub fn has_active_operator(&self, principal: &str) -> bool {
        let now = self.store.now_ms();
        self.by_hash
            .load()
            .values()
            .any(|r| r.operator && r.principal == principal && r.state(now) == TokenState::Active)
    }

    /// The role of `principal`'s newest active token, as of the last read.
    pub fn active_role(&self, principal: &str) -> Option<toolgate_protocol::Role> {
        let now = self.store.now_ms();
        self.by_hash
            .load()
            .values()
            .filter(|r| r.principal == principal && r.state(now) == TokenState::Active)
            .max_by_key(|r| r.created_at_ms)
            .map(|r| r.role.clone())
    }

    /// Writes the uses collected since the last write.
    pub async fn flush_uses(&self) {
        let used: Vec<(String, u64)> = match self.used.lock() {
            Ok(mut used) => used.drain().collect(),
            Err(_) => return,
        };
        if let Err(e) = self.store.touch(used).await {
            tracing::warn!(error = %e, "recording when tokens were last used failed");
        }
    }

    /// Re-reads every [`RELOAD_EVERY`] and writes last use every few seconds, until `stop`;
    /// then writes last use once more.
    pub fn spawn(self: &Arc<Self>, stop: CancellationToken) -> tokio::task::JoinHandle<()> {
        let book = Arc::clone(self);
        tokio::spawn(async move {
            let mut reload = tokio::time::interval(RELOAD_EVERY);
            reload.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            let mut touch = tokio::time::interval(TOUCH_EVERY);
            touch.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    () = stop.cancelled() => break,
                    _ = reload.tick() => book.reload_logged().await,
                    _ = touch.tick() => book.flush_uses().await,
                }
            }
            book.flush_uses().await;
        })
    }

    async fn reload_logged(&self) {
        match self.reload().await {
            Ok(()) => {
                if self.failing.swap(false, Ordering::Relaxed) {
                    tracing::info!("the issued tokens can be read again");
                }
            }
            Err(e) => {
                if !self.failing.swap(true, Ordering::Relaxed) {
                    tracing::warn!(error = %e, "cannot re-read the issued tokens; the last set read stays in force");
                }
            }
        }
    }
}
