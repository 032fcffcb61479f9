//! The PostgreSQL side of the change feed: one dedicated connection per process `LISTEN`s on
//! `toolgate_approvals` and `toolgate_idempotency` (filled by the schema's triggers) and
//! announces each notification on the store's [`ChangeFeed`]. When the connection is lost it
//! reconnects with backoff and, once listening again, announces [`Change::Resync`]: whatever
//! happened meanwhile is read by the waiters' catch-up re-read, so a decision taken on
//! another replica during the outage still reaches the call waiting here.

use std::time::Duration;

use futures_util::StreamExt;
use tokio_postgres::AsyncMessage;
use tokio_util::sync::CancellationToken;

use crate::changes::{Change, ChangeFeed};
use crate::pg::PgUrl;

/// The channels listened to.
pub const APPROVALS: &str = "toolgate_approvals";
pub const IDEMPOTENCY: &str = "toolgate_idempotency";

/// The longest pause between reconnection attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// Starts the listener; it runs until `stop` fires.
pub fn spawn_listener(url: PgUrl, feed: ChangeFeed, stop: CancellationToken) {
    tokio::spawn(async move {
        let mut backoff = Duration::from_millis(100);
        let mut first = true;
        loop {
            let ended = tokio::select! {
                () = stop.cancelled() => return,
                ended = listen(&url, &feed, first) => ended,
            };
            match ended {
                Ok(()) => {
                    tracing::warn!(store = %url, "the store's change feed connection closed; reconnecting")
                }
                Err(e) => {
                    tracing::warn!(store = %url, error = %e, "the store's change feed is down; reconnecting")
                }
            }
            first = false;
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(backoff) => {}
            }
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
    });
}

/// One connection's life: connect, listen, announce until it ends. After a reconnection
/// (`first` false) a [`Change::Resync`] follows the `LISTEN`, so nothing missed stays unseen.
async fn listen(url: &PgUrl, feed: &ChangeFeed, first: bool) -> Result<(), String> {
    let connector = url.connector().map_err(|e| e.to_string())?;
    let (client, mut connection) = url
        .config()
        .connect(connector)
        .await
        .map_err(|e| e.to_string())?;
    let (tx, mut messages) = tokio::sync::mpsc::unbounded_channel();
    let driver = tokio::spawn(async move {
        let mut stream = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(message) = stream.next().await {
            match message {
                Ok(m) => {
                    if tx.send(Ok(m)).is_err() {
                        return;
                    }
                }
                Err(e) => {
                    let _ = tx.send(Err(e.to_string()));
                    return;
                }
            }
        }
    });
    let listening = client
        .batch_execute(&format!("LISTEN {APPROVALS}; LISTEN {IDEMPOTENCY};"))
        .await;
    if let Err(e) = listening {
        driver.abort();
        return Err(e.to_string());
    }
    if !first {
        feed.announce(Change::Resync);
    }
    let ended = loop {
        match messages.recv().await {
            Some(Ok(AsyncMessage::Notification(n))) => {
                let change = match n.channel() {
                    APPROVALS => Change::Approval(n.payload().to_owned()),
                    IDEMPOTENCY => Change::Idempotency(n.payload().to_owned()),
                    _ => continue,
                };
                feed.announce(change);
            }
            Some(Ok(_)) => {}
            Some(Err(e)) => break Err(e),
            None => break Ok(()),
        }
    };
    driver.abort();
    drop(client);
    ended
}
