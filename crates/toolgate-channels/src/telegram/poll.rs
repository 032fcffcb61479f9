//! `getUpdates` long polling: one loop per Telegram channel in polling mode. A lost
//! connection or an error answer is retried with a growing pause (1 s up to 30 s); updates
//! Telegram kept while toolgate was down are delivered on the next poll, so taps made
//! during a restart still decide. Each update is confirmed (by the next offset) only after
//! it was handled.

use std::future::Future;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use serde_json::Value;

use super::TelegramApi;
use crate::service::ServiceError;

/// How long one `getUpdates` waits for an update.
pub const POLL_SECS: u64 = 25;
const MAX_PAUSE: Duration = Duration::from_secs(30);

/// Polls until `shutdown`, handing each update to `on_update` (in order, one at a time).
pub async fn run<F, Fut>(
    api: TelegramApi,
    channel: String,
    on_update: F,
    shutdown: CancellationToken,
) where
    F: Fn(Value) -> Fut,
    Fut: Future<Output = ()>,
{
    let mut offset = 0i64;
    let mut pause = Duration::from_secs(1);
    loop {
        let polled = tokio::select! {
            () = shutdown.cancelled() => return,
            polled = api.get_updates(offset, POLL_SECS) => polled,
        };
        match polled {
            Ok(updates) => {
                pause = Duration::from_secs(1);
                for update in updates {
                    if let Some(id) = update["update_id"].as_i64() {
                        offset = offset.max(id + 1);
                    }
                    on_update(update).await;
                }
            }
            Err(e) => {
                match &e {
                    ServiceError::Api { code, .. } if code == "409" => tracing::error!(
                        channel = %channel,
                        "telegram: {e} (another process polls this bot, or a webhook is set: \
                         use one toolgate per bot token, or updates = \"webhook\")"
                    ),
                    _ => {
                        tracing::warn!(channel = %channel, "telegram: polling failed: {e}; retrying in {pause:?}")
                    }
                }
                tokio::select! {
                    () = shutdown.cancelled() => return,
                    () = tokio::time::sleep(pause) => {}
                }
                pause = (pause * 2).min(MAX_PAUSE);
            }
        }
    }
}
