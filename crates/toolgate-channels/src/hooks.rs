//! What the services POST to `toolgate serve`: Slack's interactions
//! (`/hooks/slack/<channel>`, signed) and Telegram's updates in webhook mode
//! (`/hooks/telegram/<channel>`, with the secret token). Both are answered at once — the
//! services want an answer within seconds — and the tap is handled on its own task.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use aws_lc_rs::constant_time::verify_slices_are_equal;
use serde_json::{Value, json};

use crate::hub::{Hub, Inbound};

/// The HTTP answer to a hook request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookAnswer {
    pub status: u16,
    pub body: Value,
}

impl HookAnswer {
    fn ok() -> HookAnswer {
        HookAnswer {
            status: 200,
            body: json!({}),
        }
    }

    fn refused(status: u16, code: &str, message: String) -> HookAnswer {
        HookAnswer {
            status,
            body: json!({ "error": { "code": code, "message": message } }),
        }
    }
}

fn no_channel(kind: &str, name: &str) -> HookAnswer {
    HookAnswer::refused(404, "not_found", format!("no {kind} channel `{name}`"))
}

impl Hub {
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
            return HookAnswer::refused(401, "unauthenticated", refusal.to_string());
        }
        let Some(payload) = crate::slack::interaction::payload(body) else {
            return HookAnswer::refused(400, "invalid_arguments", "no JSON payload field".into());
        };
        if let Some(tap) =
            crate::slack::interaction::tap_of(&payload, &self.channels[index].config.chats)
        {
            let hub = Arc::clone(self);
            tokio::spawn(async move { hub.on_tap(index, tap).await });
        }
        HookAnswer::ok()
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
        let matches = secret.is_some_and(|s| {
            verify_slices_are_equal(s.as_bytes(), expected.expose().as_bytes()).is_ok()
        });
        if !matches {
            tracing::warn!(channel = %name, "telegram: an update without the webhook's secret token was refused");
            return HookAnswer::refused(
                401,
                "unauthenticated",
                "X-Telegram-Bot-Api-Secret-Token is missing or wrong".into(),
            );
        }
        let Ok(update) = serde_json::from_slice::<Value>(body) else {
            return HookAnswer::refused(400, "invalid_arguments", "the update is not JSON".into());
        };
        if let Some(tap) =
            crate::telegram::updates::tap_of(&update, &self.channels[index].config.chats)
        {
            let hub = Arc::clone(self);
            tokio::spawn(async move { hub.on_tap(index, tap).await });
        }
        HookAnswer::ok()
    }
}
