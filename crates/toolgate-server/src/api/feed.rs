//! The approval feed: ONE background task polls the approval store and broadcasts every
//! request that appeared or changed (status, or consumed) since the previous poll. The event
//! stream (`GET /v1/approvals/stream`) and the webhook both listen to it.
//!
//! The store's change feed wakes it at once (with PostgreSQL, on any replica's change); it
//! also reads every [`POLL_INTERVAL`], because requests expire and, on the embedded store, are
//! also created and decided by other processes (`toolgate call`, `toolgate approvals
//! approve`). Starting takes a baseline: requests that were already there when the server
//! started are not announced to the webhook again (a stream subscriber lists the pending ones
//! itself); every request created after [`ApprovalFeed::start`] returns is.
//!
//! The same reads give `toolgate.approvals.pending` (the requests of the window still
//! pending), so the gauge costs no read of its own.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;
use toolgate_store::ApprovalStore;
use toolgate_store::approvals::{ApprovalRequest, ApprovalStatus};

/// How often the store is read.
pub const POLL_INTERVAL: Duration = Duration::from_millis(250);

/// How many of the newest requests each poll compares. A request older than the newest
/// `WINDOW` cannot be new, and its later changes are not announced.
const WINDOW: usize = 500;

/// Events buffered per subscriber before it lags (and re-lists what is pending).
const CAPACITY: usize = 1024;

/// What the feed announces.
#[derive(Debug, Clone, PartialEq)]
pub struct FeedEvent {
    pub request: ApprovalRequest,
    /// First seen by this server (as opposed to a change of a request it already knew).
    pub is_new: bool,
}

/// The sending half of the feed; the polling task starts once, on [`ApprovalFeed::start`] or
/// the first [`ApprovalFeed::subscribe`], and ends when the server shuts down.
pub struct ApprovalFeed {
    tx: broadcast::Sender<FeedEvent>,
    started: tokio::sync::OnceCell<()>,
}

impl Default for ApprovalFeed {
    fn default() -> Self {
        ApprovalFeed::new()
    }
}

impl ApprovalFeed {
    pub fn new() -> Self {
        ApprovalFeed {
            tx: broadcast::channel(CAPACITY).0,
            started: tokio::sync::OnceCell::new(),
        }
    }

    /// Starts the polling task (once; later calls do nothing). The baseline is read here,
    /// synchronously, so that every request created after this returns is announced. Must
    /// run inside a Tokio runtime.
    pub async fn start(&self, store: &Arc<ApprovalStore>, shutdown: &CancellationToken) {
        self.started
            .get_or_init(|| async {
                let pending = Arc::new(AtomicI64::new(0));
                let read = Arc::clone(&pending);
                toolgate_telemetry::metrics::observe(
                    "toolgate.approvals.pending",
                    "{request}",
                    "Approval requests waiting for a human",
                    move || vec![(Vec::new(), read.load(Ordering::Relaxed))],
                );
                let mut task = Poller {
                    store: Arc::clone(store),
                    tx: self.tx.clone(),
                    seen: None,
                    pending,
                };
                match store.list(None, WINDOW).await {
                    Ok(list) => {
                        task.changes(list);
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "approval feed: reading the baseline failed");
                    }
                }
                tokio::spawn(task.run(shutdown.clone()));
            })
            .await;
    }

    /// Receives every event from now on (starting the task if needed).
    pub async fn subscribe(
        &self,
        store: &Arc<ApprovalStore>,
        shutdown: &CancellationToken,
    ) -> broadcast::Receiver<FeedEvent> {
        let rx = self.tx.subscribe();
        self.start(store, shutdown).await;
        rx
    }
}

/// The last poll's view: id → (status, consumed).
type Seen = HashMap<String, (ApprovalStatus, bool)>;

struct Poller {
    store: Arc<ApprovalStore>,
    tx: broadcast::Sender<FeedEvent>,
    /// `None` until the baseline is taken.
    seen: Option<Seen>,
    /// Pending requests at the last read, for `toolgate.approvals.pending`.
    pending: Arc<AtomicI64>,
}

impl Poller {
    async fn run(mut self, shutdown: CancellationToken) {
        let mut tick = tokio::time::interval(POLL_INTERVAL);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        // The store's change feed wakes the read at once (with PostgreSQL: any replica's
        // change); the tick still catches expiry and other processes on the embedded store.
        let mut changes = self.store.changes();
        loop {
            tokio::select! {
                () = shutdown.cancelled() => return,
                _ = tick.tick() => {}
                Some(_) = changes.recv() => {}
            }
            match self.store.list(None, WINDOW).await {
                Ok(list) => {
                    for event in self.changes(list) {
                        // No receiver is not an error: nobody is listening right now.
                        let _ = self.tx.send(event);
                    }
                }
                Err(e) => tracing::warn!(error = %e, "approval feed: reading the store failed"),
            }
        }
    }

    /// The requests that are new or changed since the previous poll, oldest first; records
    /// this poll as the new view. The first call only records.
    fn changes(&mut self, list: Vec<ApprovalRequest>) -> Vec<FeedEvent> {
        let waiting = list
            .iter()
            .filter(|r| r.status == ApprovalStatus::Pending)
            .count();
        self.pending.store(
            i64::try_from(waiting).unwrap_or(i64::MAX),
            Ordering::Relaxed,
        );
        let now: Seen = list
            .iter()
            .map(|r| (r.id.clone(), (r.status, r.consumed)))
            .collect();
        let Some(before) = self.seen.replace(now) else {
            return Vec::new();
        };
        let mut events: Vec<FeedEvent> = list
            .into_iter()
            .filter_map(|r| match before.get(&r.id) {
                None => Some(FeedEvent {
                    request: r,
                    is_new: true,
                }),
                Some(&(status, consumed)) if (status, consumed) != (r.status, r.consumed) => {
                    Some(FeedEvent {
                        request: r,
                        is_new: false,
                    })
                }
                Some(_) => None,
            })
            .collect();
        events.reverse();
        events
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request(id: &str, status: ApprovalStatus, consumed: bool) -> ApprovalRequest {
        ApprovalRequest {
            issuer: None,
            subject: None,
            id: id.to_owned(),
            created_at_ms: 1,
            expires_at_ms: 2,
            status,
            principal: "p".into(),
            session: "s".into(),
            role: "r".into(),
            tool: "t".into(),
            risk: toolgate_protocol::Risk::Write,
            args_hash: "h".into(),
            arguments: json!({}),
            requires_confirmation: false,
            decided_by: None,
            decided_at_ms: None,
            scope: None,
            pattern: None,
            reason: None,
            consumed,
            decided_via: None,
        }
    }

    #[test]
    fn baseline_then_new_and_changed_oldest_first() {
        let (tx, _rx) = broadcast::channel(4);
        let dir = tempfile::tempdir().unwrap();
        let mut p = Poller {
            store: Arc::new(ApprovalStore::open(&dir.path().join("db")).unwrap()),
            tx,
            seen: None,
            pending: Arc::default(),
        };
        let a = request("apr_a", ApprovalStatus::Pending, false);
        assert_eq!(p.changes(vec![a.clone()]), vec![]);
        assert_eq!(p.changes(vec![a.clone()]), vec![]);

        let b = request("apr_b", ApprovalStatus::Pending, false);
        let c = request("apr_c", ApprovalStatus::Pending, false);
        let a2 = request("apr_a", ApprovalStatus::Approved, false);
        // Newest first, as the store lists them.
        assert_eq!(
            p.changes(vec![c.clone(), b.clone(), a2.clone()]),
            vec![
                FeedEvent {
                    request: a2.clone(),
                    is_new: false
                },
                FeedEvent {
                    request: b.clone(),
                    is_new: true
                },
                FeedEvent {
                    request: c.clone(),
                    is_new: true
                },
            ]
        );
        // The gauge counts what the last read found pending: b and c.
        assert_eq!(p.pending.load(Ordering::Relaxed), 2);
        let a3 = request("apr_a", ApprovalStatus::Approved, true);
        assert_eq!(
            p.changes(vec![c, b, a3.clone()]),
            vec![FeedEvent {
                request: a3,
                is_new: false
            }]
        );
    }
}
