//! The store's one change feed: what changed, so that whoever waits on it (a call waiting for
//! a decision, a call waiting for the outcome of a duplicate holding its idempotency key)
//! re-reads at once instead of polling.
//!
//! The embedded backend announces the changes its own process makes; another process on the
//! same files is noticed by the waiters' slower safety-net re-read. The PostgreSQL backend
//! announces every replica's changes, from `LISTEN`/`NOTIFY` ([`crate::pg::notify`]); after a
//! lost connection it announces [`Change::Resync`] once it listens again, and every waiter
//! re-reads (the catch-up read: nothing missed while disconnected stays unseen).

use tokio::sync::broadcast;

/// Events buffered per subscriber; one that lags is told [`Change::Resync`] by
/// [`ChangeFeed::recv`].
const CAPACITY: usize = 4096;

/// One change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// The approval request with this id was created or changed.
    Approval(String),
    /// The idempotency key with this digest ([`crate::idempotency::key_digest`]) was
    /// released or completed.
    Idempotency(String),
    /// Changes may have been missed: re-read whatever is waited for.
    Resync,
}

/// The sending side, cloned into every component that announces changes.
#[derive(Debug, Clone)]
pub struct ChangeFeed {
    tx: broadcast::Sender<Change>,
}

impl Default for ChangeFeed {
    fn default() -> Self {
        ChangeFeed::new()
    }
}

impl ChangeFeed {
    pub fn new() -> Self {
        ChangeFeed {
            tx: broadcast::channel(CAPACITY).0,
        }
    }

    /// Announces `change` to every current subscriber (none listening is fine).
    pub fn announce(&self, change: Change) {
        let _ = self.tx.send(change);
    }

    /// Every change from now on.
    pub fn subscribe(&self) -> Changes {
        Changes {
            rx: self.tx.subscribe(),
        }
    }
}

/// A subscription to the feed.
#[derive(Debug)]
pub struct Changes {
    rx: broadcast::Receiver<Change>,
}

impl Changes {
    /// The next change; a subscriber that fell behind gets [`Change::Resync`]. `None` once the
    /// feed is gone.
    pub async fn recv(&mut self) -> Option<Change> {
        match self.rx.recv().await {
            Ok(change) => Some(change),
            Err(broadcast::error::RecvError::Lagged(_)) => Some(Change::Resync),
            Err(broadcast::error::RecvError::Closed) => None,
        }
    }
}
