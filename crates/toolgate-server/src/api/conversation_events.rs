//! `GET /v1/conversations/{id}/events`: a conversation as server-sent events. First every
//! journal entry after `after` (or the `Last-Event-ID` a reconnecting client sends), then
//! `event: synced` with `{"last_seq": N}` (the backlog is sent), then, as they happen: `event: entry` for each new journal entry (its `seq` as the SSE id, so a
//! reconnect resumes exactly after the last one received), `event: delta` for the answer's
//! text as the model writes it, `event: tool` when a call starts or ends. Deltas and tool
//! events are heard only from turns running in this process; entries from any replica (the
//! journal is read again at least every second). Keep-alive comments every 15 s; the stream
//! ends when the server shuts down.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::time::Duration;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use futures_util::Stream;
use serde::Deserialize;
use serde_json::json;
use tokio::sync::broadcast::{self, error::RecvError};
use tokio_util::sync::CancellationToken;
use toolgate_conversations::{Conversations, Entry, Live};

use super::conversations::{desk, entry_json, refused};
use super::extract::{ApiPath, ApiQuery};
use crate::auth::Caller;
use crate::error::ApiError;
use crate::state::AppState;

const KEEP_ALIVE: Duration = Duration::from_secs(15);
/// How often the journal is read again without a live notice (turns on other replicas).
const POLL: Duration = Duration::from_secs(1);
const PAGE: usize = 500;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StreamParams {
    /// Entries after this `seq` (default: all; `Last-Event-ID` wins when sent).
    after: Option<u64>,
}

struct Reader {
    desk: Conversations,
    id: String,
    rx: broadcast::Receiver<Live>,
    after: u64,
    queue: VecDeque<SseEvent>,
    shutdown: CancellationToken,
}

impl Reader {
    /// Queues the journal entries after the last one sent.
    async fn read_journal(&mut self) {
        match self.desk.entries(&self.id, self.after, PAGE).await {
            Ok(entries) => {
                for e in &entries {
                    self.queue.push_back(entry_event(e));
                }
                if let Some(last) = entries.last() {
                    self.after = last.seq;
                }
            }
            Err(e) => {
                tracing::warn!(conversation = %self.id, error = %e, "conversation stream: cannot read the journal")
            }
        }
    }

    async fn next(&mut self) -> Option<SseEvent> {
        loop {
            if let Some(e) = self.queue.pop_front() {
                return Some(e);
            }
            let received = tokio::select! {
                () = self.shutdown.cancelled() => return None,
                () = tokio::time::sleep(POLL) => None,
                r = self.rx.recv() => Some(r),
            };
            match received {
                None | Some(Ok(Live::Journal { .. }) | Err(RecvError::Lagged(_))) => {
                    self.read_journal().await;
                }
                Some(Ok(Live::Delta { reply_to, text })) => {
                    return Some(data("delta", &json!({"reply_to": reply_to, "text": text})));
                }
                Some(Ok(Live::Tool {
                    reply_to,
                    call_id,
                    name,
                    ok,
                })) => {
                    let state = match ok {
                        None => "started",
                        Some(true) => "ok",
                        Some(false) => "failed",
                    };
                    return Some(data(
                        "tool",
                        &json!({"reply_to": reply_to, "call_id": call_id, "name": name, "state": state}),
                    ));
                }
                Some(Err(RecvError::Closed)) => return None,
            }
        }
    }
}

fn data(kind: &str, value: &serde_json::Value) -> SseEvent {
    SseEvent::default()
        .event(kind)
        .json_data(value)
        .unwrap_or_else(|_| SseEvent::default().comment("unencodable event"))
}

fn entry_event(e: &Entry) -> SseEvent {
    data("entry", &entry_json(e)).id(e.seq.to_string())
}

pub async fn stream(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    ApiPath(id): ApiPath<String>,
    ApiQuery(params): ApiQuery<StreamParams>,
) -> Result<Sse<impl Stream<Item = Result<SseEvent, Infallible>>>, ApiError> {
    let desk = desk(&state)?.clone();
    desk.get(&id, &caller.principal, caller.operator)
        .await
        .map_err(refused)?;
    let resume = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    // Listen before reading, so nothing journaled in between is missed.
    let rx = desk.listen(&id);
    let mut reader = Reader {
        desk,
        id,
        rx,
        after: match resume {
            // A reconnecting client's id: past the largest number there is nothing to send.
            Some(n) => n.min(i64::MAX as u64),
            None => super::conversations::journal_after(params.after)?,
        },
        queue: VecDeque::new(),
        shutdown: state.shutdown.clone(),
    };
    reader.read_journal().await;
    // The backlog is sent: say so, so a client knows it has caught up (and a stream with
    // nothing in it yet still answers at once).
    let synced = reader.after;
    reader
        .queue
        .push_back(data("synced", &json!({"last_seq": synced})));
    let events = futures_util::stream::unfold(reader, |mut reader| async move {
        let e = reader.next().await?;
        Some((Ok(e), reader))
    });
    Ok(Sse::new(events).keep_alive(KeepAlive::new().interval(KEEP_ALIVE)))
}
