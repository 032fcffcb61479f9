//! What the services POST to `toolgate serve` for the bots: Telegram's updates in webhook
//! mode (`/hooks/bots/telegram/<name>`, with the secret token) and Slack's events and
//! interactions (`/hooks/bots/slack/<name>`, signed). Each is answered at once — the services
//! want an answer within seconds — and handled on its own task.

use std::sync::Arc;

use aws_lc_rs::constant_time::verify_slices_are_equal;
use serde_json::Value;
use toolgate_channels::{ChannelKind, HookAnswer, HookRefusal};

use crate::bots::{Bots, Inbound, KEEP_SENT};
use crate::slack::SlackRequest;

impl Bots {
    /// A Telegram update in webhook mode: the secret token checked, then handled on its own
    /// task (Telegram wants its answer at once).
    pub fn telegram_hook(
        self: &Arc<Self>,
        name: &str,
        secret: Option<&str>,
        body: &[u8],
    ) -> HookAnswer {
        let refused = |why, message: &str| HookAnswer::Refused {
            why,
            message: message.to_owned(),
        };
        let Some(index) = self.index(ChannelKind::Telegram, name) else {
            return refused(
                HookRefusal::NoChannel,
                &format!("no telegram bot `{name}` ([[bots]])"),
            );
        };
        let Inbound::TelegramWebhook {
            secret: expected, ..
        } = &self.bots[index].inbound
        else {
            return refused(
                HookRefusal::NoChannel,
                &format!("the telegram bot `{name}` polls: it has no webhook"),
            );
        };
        let matches = secret.is_some_and(|s| {
            verify_slices_are_equal(s.as_bytes(), expected.expose().as_bytes()).is_ok()
        });
        if !matches {
            tracing::warn!(bot = %name, "telegram: an update without the webhook's secret token was refused");
            return refused(
                HookRefusal::Unauthenticated,
                "X-Telegram-Bot-Api-Secret-Token is missing or wrong",
            );
        }
        let Ok(update) = serde_json::from_slice::<Value>(body) else {
            return refused(HookRefusal::Malformed, "the update is not JSON");
        };
        let hub = Arc::clone(self);
        tokio::spawn(async move { hub.on_update(index, update).await });
        HookAnswer::Accepted
    }

    /// A Slack event or interaction: the signature, timestamp and replay checked, then
    /// handled on its own task (Slack wants its answer within 3 s). An event Slack sends
    /// again (a retry, on any replica) is handled once: its id is claimed in the store.
    pub fn slack_hook(
        self: &Arc<Self>,
        name: &str,
        timestamp: Option<&str>,
        signature: Option<&str>,
        body: &[u8],
    ) -> HookAnswer {
        let refused = |why, message: String| HookAnswer::Refused { why, message };
        let Some(index) = self.index(ChannelKind::Slack, name) else {
            return refused(
                HookRefusal::NoChannel,
                format!("no slack bot `{name}` ([[bots]])"),
            );
        };
        let Inbound::Slack { verifier, .. } = &self.bots[index].inbound else {
            return refused(HookRefusal::NoChannel, format!("no slack bot `{name}`"));
        };
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        if let Err(refusal) = verifier.verify(timestamp, signature, body, now) {
            tracing::warn!(bot = %name, "slack: a request was refused: {refusal}");
            return refused(HookRefusal::Unauthenticated, refusal.to_string());
        }
        let me = self.bots[index].me.get().map(|m| m.username.as_str());
        match crate::slack::request(body, me) {
            None => refused(
                HookRefusal::Malformed,
                "neither an event (JSON) nor an interaction (a payload form field)".into(),
            ),
            Some(SlackRequest::Challenge(challenge)) => HookAnswer::Challenge(challenge),
            Some(SlackRequest::Event {
                id,
                message: Some(message),
            }) => {
                let hub = Arc::clone(self);
                tokio::spawn(async move {
                    if hub.first_time(index, &id).await {
                        hub.on_message(index, message).await;
                    }
                });
                HookAnswer::Accepted
            }
            Some(SlackRequest::Button(press)) => {
                let hub = Arc::clone(self);
                tokio::spawn(async move { hub.on_button(index, press).await });
                HookAnswer::Accepted
            }
            Some(SlackRequest::Event { message: None, .. } | SlackRequest::Other) => {
                HookAnswer::Accepted
            }
        }
    }

    /// Whether event `id` is seen here first (across restarts and replicas).
    async fn first_time(&self, index: usize, id: &str) -> bool {
        let bot = &self.bots[index];
        let key = format!("event:{id}");
        match self
            .posts
            .claim(&key, &bot.entry, "events", KEEP_SENT)
            .await
        {
            Ok(true) => {
                let _ = self
                    .posts
                    .close(&key, &bot.entry, "events", "handled")
                    .await;
                true
            }
            Ok(false) => {
                tracing::info!(bot = %bot.entry, event = %id, "slack: an event sent again was ignored");
                false
            }
            Err(e) => {
                tracing::warn!(bot = %bot.entry, "slack: recording an event failed, handling it anyway: {e}");
                true
            }
        }
    }
}
