//! `GET /v1/approvals/stream` (operators only): server-sent events, `event: approval` with an
//! Approval as data — first one per request pending when the stream opens, then one whenever
//! a request is created or changes status (from any process: see [`super::feed`]).
//! After the requests pending at the start, one `event: synced` with `{"pending": N}` marks
//! the end of that backlog (a client knows it has the whole picture; a stream with nothing
//! pending still answers at once). Keep-alive comments every 15 s; the stream ends when the
//! server shuts down.
//!
//! Each stream remembers what it sent per request, so an event the initial listing already
//! covered is not repeated; a subscriber that falls behind re-lists what is pending.

use std::collections::HashMap;
use std::convert::Infallible;
use std::time::Duration;

use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::{Stream, StreamExt};
use tokio::sync::broadcast::{self, error::RecvError};
use toolgate_store::approvals::{ApprovalRequest, ApprovalStatus};

use super::approvals::approval_json;
use super::feed::FeedEvent;
use crate::auth::Operator;
use crate::error::ApiError;
use crate::state::AppState;

const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// The most pending requests sent when a stream opens (or re-lists after lagging).
const INITIAL_LIMIT: usize = 1000;

struct Subscriber {
    state: AppState,
    rx: broadcast::Receiver<FeedEvent>,
    /// Requests waiting to be sent, oldest first.
    queue: std::collections::VecDeque<ApprovalRequest>,
    sent: HashMap<String, (ApprovalStatus, bool)>,
}

impl Subscriber {
    /// Queues `r` unless this stream already sent it in this state.
    fn offer(&mut self, r: ApprovalRequest) {
        let now = (r.status, r.consumed);
        if self.sent.get(&r.id) != Some(&now) {
            self.sent.insert(r.id.clone(), now);
            self.queue.push_back(r);
        }
    }

    async fn list_pending(&mut self) -> Result<(), ApiError> {
        let mut pending = self
            .state
            .approvals
            .list(Some(ApprovalStatus::Pending), INITIAL_LIMIT)
            .await?;
        pending.reverse();
        for r in pending {
            self.offer(r);
        }
        Ok(())
    }

    /// The next request to send, or `None` when the stream should end.
    async fn next(&mut self) -> Option<ApprovalRequest> {
        loop {
            if let Some(r) = self.queue.pop_front() {
                return Some(r);
            }
            let shutdown = self.state.shutdown.clone();
            let received = tokio::select! {
                () = shutdown.cancelled() => return None,
                received = self.rx.recv() => received,
            };
            match received {
                Ok(event) => self.offer(event.request),
                Err(RecvError::Lagged(_)) => {
                    if let Err(e) = self.list_pending().await {
                        tracing::warn!(error = %e.error, "approval stream: re-listing failed");
                    }
                }
                Err(RecvError::Closed) => return None,
            }
        }
    }
}

pub async fn stream(
    State(state): State<AppState>,
    _op: Operator,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    // Subscribe before listing, so nothing created in between is missed.
    let rx = state
        .feed()
        .subscribe(&state.approvals, &state.shutdown)
        .await;
    let mut sub = Subscriber {
        state,
        rx,
        queue: Default::default(),
        sent: HashMap::new(),
    };
    sub.list_pending().await?;
    let backlog: Vec<ApprovalRequest> = sub.queue.drain(..).collect();
    let pending = backlog.len();
    let head = futures_util::stream::iter(backlog.into_iter().map(|r| Ok(approval_event(&r))))
        .chain(futures_util::stream::once(async move {
            Ok(Event::default()
                .event("synced")
                .data(format!("{{\"pending\":{pending}}}")))
        }));
    let tail = futures_util::stream::unfold(sub, |mut sub| async move {
        let r = sub.next().await?;
        Some((Ok(approval_event(&r)), sub))
    });
    let events = head.chain(tail);
    Ok(Sse::new(events).keep_alive(KeepAlive::new().interval(KEEP_ALIVE)))
}

fn approval_event(r: &ApprovalRequest) -> Event {
    Event::default()
        .event("approval")
        .json_data(approval_json(r))
        .unwrap_or_else(|_| Event::default().comment("unencodable approval"))
}
