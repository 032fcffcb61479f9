//! [`SessionPool`]: session id → that session's browser. A session's actions run one at a
//! time (its slot is a mutex held for the whole action); different sessions run in parallel.
//! An idle reaper, started with the first browser, closes browsers unused for
//! `idle_timeout_secs` and stops once the pool is gone.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use tokio::sync::{Mutex, OwnedMutexGuard};
use toolgate_net::Lookup;

use super::BrowserSession;
use crate::config::BrowserConfig;
use crate::error::BrowserError;
use crate::guard::RequestGuard;

type Slot = Arc<Mutex<Option<BrowserSession>>>;

/// The browsers of all sessions. Cheap to clone; the browsers close when the last clone drops.
#[derive(Clone)]
pub struct SessionPool {
    inner: Arc<PoolInner>,
}

struct PoolInner {
    cfg: BrowserConfig,
    guard: RequestGuard,
    sessions: Mutex<HashMap<String, Slot>>,
    reaper_started: AtomicBool,
}

/// A session's browser, held for the length of one action.
pub(crate) struct Held(OwnedMutexGuard<Option<BrowserSession>>);

impl Held {
    pub(crate) fn get(&mut self) -> Result<&mut BrowserSession, BrowserError> {
        self.0
            .as_mut()
            .ok_or_else(|| BrowserError::Protocol("the browser session was closed".to_owned()))
    }
}

impl std::fmt::Debug for SessionPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionPool")
            .field("cfg", &self.inner.cfg)
            .finish_non_exhaustive()
    }
}

impl SessionPool {
    /// A pool whose browsers resolve names with `lookup` (the system resolver in production,
    /// a [`toolgate_net::StaticLookup`] in tests).
    pub fn new(cfg: BrowserConfig, lookup: Arc<dyn Lookup>) -> Self {
        let guard = RequestGuard::new(cfg.egress.clone(), lookup, cfg.allow_origins.clone());
        SessionPool {
            inner: Arc::new(PoolInner {
                cfg,
                guard,
                sessions: Mutex::new(HashMap::new()),
                reaper_started: AtomicBool::new(false),
            }),
        }
    }

    pub fn config(&self) -> &BrowserConfig {
        &self.inner.cfg
    }

    pub(crate) fn guard(&self) -> &RequestGuard {
        &self.inner.guard
    }

    /// The session's browser, launched if it has none; waits while another action of the
    /// same session runs.
    pub(crate) async fn acquire(&self, session_id: &str) -> Result<Held, BrowserError> {
        loop {
            let slot = {
                let mut map = self.inner.sessions.lock().await;
                match map.get(session_id) {
                    Some(slot) => Arc::clone(slot),
                    None => {
                        if map.len() >= self.inner.cfg.max_sessions {
                            return Err(BrowserError::TooManySessions { open: map.len() });
                        }
                        let slot: Slot = Arc::new(Mutex::new(None));
                        map.insert(session_id.to_owned(), Arc::clone(&slot));
                        slot
                    }
                }
            };
            let mut held = Arc::clone(&slot).lock_owned().await;
            if let Some(session) = held.as_mut() {
                session.last_used = Instant::now();
                return Ok(Held(held));
            }
            // Empty: either we just created the slot, or it was closed while we waited.
            if !self.is_current(session_id, &slot).await {
                continue;
            }
            match BrowserSession::launch(&self.inner.cfg, self.inner.guard.clone()).await {
                Ok(session) => {
                    *held = Some(session);
                    self.start_reaper();
                    return Ok(Held(held));
                }
                Err(e) => {
                    self.remove_if_current(session_id, &slot).await;
                    return Err(e);
                }
            }
        }
    }

    /// Closes the session's browser; whether it had one.
    pub async fn close(&self, session_id: &str) -> bool {
        let slot = self.inner.sessions.lock().await.remove(session_id);
        let Some(slot) = slot else {
            return false;
        };
        let taken = slot.lock().await.take();
        match taken {
            Some(session) => {
                session.close().await;
                true
            }
            None => false,
        }
    }

    /// How many sessions have a browser (or are starting one).
    pub async fn open_sessions(&self) -> usize {
        self.inner.sessions.lock().await.len()
    }

    async fn is_current(&self, session_id: &str, slot: &Slot) -> bool {
        let map = self.inner.sessions.lock().await;
        map.get(session_id).is_some_and(|s| Arc::ptr_eq(s, slot))
    }

    async fn remove_if_current(&self, session_id: &str, slot: &Slot) {
        let mut map = self.inner.sessions.lock().await;
        if map.get(session_id).is_some_and(|s| Arc::ptr_eq(s, slot)) {
            map.remove(session_id);
        }
    }

    fn start_reaper(&self) {
        if self.inner.reaper_started.swap(true, Ordering::SeqCst) {
            return;
        }
        let idle = self.inner.cfg.idle_timeout();
        let period = (idle / 2).clamp(Duration::from_secs(1), Duration::from_secs(30));
        let weak = Arc::downgrade(&self.inner);
        tokio::spawn(reap(weak, idle, period));
    }
}

async fn reap(pool: Weak<PoolInner>, idle: Duration, period: Duration) {
    loop {
        tokio::time::sleep(period).await;
        let Some(pool) = pool.upgrade() else {
            return;
        };
        let mut map = pool.sessions.lock().await;
        let mut expired = Vec::new();
        for (id, slot) in map.iter() {
            // A busy slot is in use, so not idle.
            if let Ok(mut held) = Arc::clone(slot).try_lock_owned()
                && held.as_ref().is_some_and(|s| s.last_used.elapsed() >= idle)
                && let Some(session) = held.take()
            {
                expired.push((id.clone(), session));
            }
        }
        for (id, _) in &expired {
            map.remove(id);
        }
        drop(map);
        for (id, session) in expired {
            tracing::info!(session = %id, "closing an idle browser");
            session.close().await;
        }
    }
}
