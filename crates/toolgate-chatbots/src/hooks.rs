//! What the services POST to `toolgate serve` for the bots: Telegram's updates in webhook
//! mode (`/hooks/bots/telegram/<name>`, with the secret token) and Slack's events and
//! interactions (`/hooks/bots/slack/<name>`, signed). Each is answered at once — the services
//! want an answer within seconds — and handled on its own task.

use std::sync::Arc;

use serde_json::Value;
use toolgate_channels::{HookAnswer, HookRefusal};

use crate::bots::{Bots, Inbound, KEEP_SENT};
use crate::config::BotKind;
use crate::incoming::Incoming;
use crate::slack::SlackRequest;
use crate::wecom::WecomQuery;
use crate::wecom::inbound;

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
        let Some(index) = self.index(BotKind::Telegram, name) else {
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
        if !expected.matches(secret) {
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
        let Some(index) = self.index(BotKind::Slack, name) else {
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
                    if hub.first_time(index, &format!("event:{id}")).await {
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

    /// Whether what `key` names (`event:<Slack event id>`, `msg:<WeCom MsgId>`, …) is seen
    /// here first (across restarts and replicas).
    async fn first_time(&self, index: usize, key: &str) -> bool {
        let bot = &self.bots[index];
        match self.posts.claim(key, &bot.entry, "events", KEEP_SENT).await {
            Ok(true) => {
                let _ = self.posts.close(key, &bot.entry, "events", "handled").await;
                true
            }
            Ok(false) => {
                tracing::info!(bot = %bot.entry, event = %key, "bots: a delivery sent again was ignored");
                false
            }
            Err(e) => {
                tracing::warn!(bot = %bot.entry, "slack: recording an event failed, handling it anyway: {e}");
                true
            }
        }
    }

    /// A WeCom callback: the signature checked and the message decrypted (the corp id it
    /// names checked too), then handled on its own task. The URL check (`echostr`) is
    /// answered with its decrypted text. A callback WeCom sends again is handled once (its
    /// message id, or the press's user, time and task, claimed in the store). A chat user
    /// who may not talk is answered at once with an encrypted passive reply.
    pub fn wecom_hook(self: &Arc<Self>, name: &str, query: &WecomQuery, body: &[u8]) -> HookAnswer {
        let refused = |why, message: String| HookAnswer::Refused { why, message };
        let Some(index) = self.index(BotKind::Wecom, name) else {
            return refused(
                HookRefusal::NoChannel,
                format!("no wecom bot `{name}` ([[bots]])"),
            );
        };
        let Inbound::Wecom { api, crypto } = &self.bots[index].inbound else {
            return refused(HookRefusal::NoChannel, format!("no wecom bot `{name}`"));
        };
        let (Some(signature), Some(timestamp), Some(nonce)) = (
            query.msg_signature.as_deref(),
            query.timestamp.as_deref(),
            query.nonce.as_deref(),
        ) else {
            return refused(
                HookRefusal::Unauthenticated,
                "msg_signature, timestamp and nonce are required".into(),
            );
        };
        let encrypted = match &query.echostr {
            Some(echo) => echo.clone(),
            None => {
                let Some(encrypted) = std::str::from_utf8(body)
                    .ok()
                    .and_then(|xml| inbound::field(xml, "Encrypt"))
                else {
                    return refused(
                        HookRefusal::Malformed,
                        "the callback is not WeCom's XML with an Encrypt field".into(),
                    );
                };
                encrypted
            }
        };
        // WeCom sends (and resends) a callback within seconds: one signed more than five
        // minutes from now is a replay or a forgery, whatever its signature.
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let fresh = timestamp
            .parse::<u64>()
            .is_ok_and(|t| t.abs_diff(now) <= toolgate_channels::slack::verify::WINDOW_SECS);
        if !fresh {
            tracing::warn!(bot = %name, "wecom: a callback with a stale timestamp was refused");
            return refused(
                HookRefusal::Unauthenticated,
                "the callback's timestamp is more than 5 minutes from now (a replayed or delayed callback)"
                    .into(),
            );
        }
        let plain = match crypto.open(signature, timestamp, nonce, &encrypted) {
            Ok(plain) => plain,
            Err(e) => {
                tracing::warn!(bot = %name, "wecom: a callback was refused: {e}");
                return refused(HookRefusal::Unauthenticated, e.to_string());
            }
        };
        if query.echostr.is_some() {
            return HookAnswer::Body {
                content_type: "text/plain; charset=utf-8",
                body: plain,
            };
        }
        let Some(parsed) = inbound::message(&plain) else {
            return refused(
                HookRefusal::Malformed,
                "the decrypted message is not XML".into(),
            );
        };
        if let (Some(code), Some(Incoming::Button(press))) =
            (&parsed.response_code, &parsed.incoming)
        {
            api.remember_code(&press.message, code);
        }
        let Some(incoming) = parsed.incoming else {
            return HookAnswer::Accepted;
        };
        // Who may not talk is told in the callback's own answer.
        let mut passive = None;
        if let Incoming::Message(m) = &incoming
            && let Err(why) = self.speaker(index, &m.chat, &m.user)
            && self.tell_refused(index, &m.user)
        {
            let text = format!("Not allowed: {why}. Your message was refused and recorded.");
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            let corp = self.bots[index].config.corp_id.clone().unwrap_or_default();
            let mut random = [0u8; 16];
            if getrandom::fill(&mut random).is_ok() {
                passive = crypto
                    .reply(
                        &inbound::text_reply(&m.user, &corp, &text, now),
                        timestamp,
                        nonce,
                        random,
                    )
                    .ok();
            }
        }
        let hub = Arc::clone(self);
        let key = parsed.key;
        let quiet = passive.is_some();
        tokio::spawn(async move {
            if !hub.first_time(index, &key).await {
                return;
            }
            match incoming {
                Incoming::Message(m) if quiet => hub.refuse_quietly(index, &m).await,
                Incoming::Message(m) => hub.on_message(index, m).await,
                Incoming::Button(press) => hub.on_button(index, press).await,
            }
        });
        match passive {
            Some(body) => HookAnswer::Body {
                content_type: "application/xml; charset=utf-8",
                body,
            },
            None => HookAnswer::Accepted,
        }
    }
}
