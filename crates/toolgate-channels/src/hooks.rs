//! What the services POST to `toolgate serve`: Slack's interactions
//! (`/hooks/slack/<channel>`, signed) and Telegram's updates in webhook mode
//! (`/hooks/telegram/<channel>`, with the secret token). Both are answered at once — the
//! services want an answer within seconds — and the tap is handled on its own task.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::Value;

use crate::approval_channels::{ApprovalChannels, Inbound};

/// How a hook request was answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookAnswer {
    /// Verified and taken (the tap is handled on its own task): 200.
    Accepted,
    /// Slack's Request URL handshake, verified: 200 with `{"challenge": …}`.
    Challenge(String),
    /// Verified, answered with this body (WeCom's URL check echoes a decrypted text; a
    /// callback may carry an encrypted passive reply): 200.
    Body {
        content_type: &'static str,
        body: String,
    },
    /// Refused before anything in it was acted on.
    Refused { why: HookRefusal, message: String },
}

/// Why a hook request was refused; the server maps each to its one error shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookRefusal {
    /// The service's proof (signature, timestamp, secret token) is missing or wrong: 401.
    Unauthenticated,
    /// No channel of that kind and name: 404.
    NoChannel,
    /// Verified, but not the service's format: 400.
    Malformed,
}

impl HookAnswer {
    fn refused(why: HookRefusal, message: impl Into<String>) -> HookAnswer {
        HookAnswer::Refused {
            why,
            message: message.into(),
        }
    }
}

fn no_channel(kind: &str, name: &str) -> HookAnswer {
    HookAnswer::refused(
        HookRefusal::NoChannel,
        format!("no {kind} channel `{name}` ([[approvals.channels]])"),
    )
}

impl ApprovalChannels {
    /// A Slack interaction: verified (signature, timestamp, replay), then handled.
    pub fn slack_hook(
        self: &Arc<Self>,
        name: &str,
        timestamp: Option<&str>,
        signature: Option<&str>,
        body: &[u8],
    ) -> HookAnswer {
        let Some(index) = self.channel_index(name) else {
            return no_channel("slack", name);
        };
        let Inbound::Slack(verifier) = &self.channels[index].inbound else {
            return no_channel("slack", name);
        };
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        if let Err(refusal) = verifier.verify(timestamp, signature, body, now) {
            tracing::warn!(channel = %name, "slack: interaction refused: {refusal}");
            return HookAnswer::refused(HookRefusal::Unauthenticated, refusal.to_string());
        }
        let Some(payload) = crate::slack::interaction::payload(body) else {
            return HookAnswer::refused(HookRefusal::Malformed, "no JSON payload field");
        };
        if let Some(tap) =
            crate::slack::interaction::tap_of(&payload, &self.channels[index].config.chats)
        {
            let hub = Arc::clone(self);
            tokio::spawn(async move { hub.on_tap(index, tap).await });
        }
        HookAnswer::Accepted
    }

    /// A Telegram update in webhook mode: the secret token checked, then handled.
    pub fn telegram_hook(
        self: &Arc<Self>,
        name: &str,
        secret: Option<&str>,
        body: &[u8],
    ) -> HookAnswer {
        let Some(index) = self.channel_index(name) else {
            return no_channel("telegram", name);
        };
        let Inbound::TelegramWebhook {
            secret: expected, ..
        } = &self.channels[index].inbound
        else {
            return no_channel("telegram", name);
        };
        if !expected.matches(secret) {
            tracing::warn!(channel = %name, "telegram: an update without the webhook's secret token was refused");
            return HookAnswer::refused(
                HookRefusal::Unauthenticated,
                "X-Telegram-Bot-Api-Secret-Token is missing or wrong",
            );
        }
        let Ok(update) = serde_json::from_slice::<Value>(body) else {
            return HookAnswer::refused(HookRefusal::Malformed, "the update is not JSON");
        };
        if let Some(tap) =
            crate::telegram::updates::tap_of(&update, &self.channels[index].config.chats)
        {
            let hub = Arc::clone(self);
            tokio::spawn(async move { hub.on_tap(index, tap).await });
        }
        HookAnswer::Accepted
    }
}
