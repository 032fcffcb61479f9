//! Slack's Events API and interactivity, as what the bot acts on. One Request URL takes
//! both (`/hooks/bots/slack/<name>`): a JSON body is an event callback (or the
//! `url_verification` handshake), a form with a `payload` field is an interaction.
//!
//! - In a channel only an `app_mention` is for the bot; the conversation is the thread the
//!   mention starts (or is in), and the bot answers in it.
//! - In a direct message (`channel_type` `im`) every message is for the bot.
//! - Messages from bots, edits, deletions and other subtypes are ignored.

use serde_json::Value;
use toolgate_channels::service::ReplyTo;
use toolgate_channels::slack::api::{CONFIRM_ACTION, CONFIRM_BLOCK};

use crate::incoming::{ButtonPress, ChatMessage};

/// What a verified request to the hook carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SlackRequest {
    /// The Request URL's handshake: answer with the challenge.
    Challenge(String),
    /// An event callback: its id (Slack retries with the same one) and the message for the
    /// bot in it, if any.
    Event {
        id: String,
        message: Option<ChatMessage>,
    },
    /// A button pressed on one of the bot's messages.
    Button(ButtonPress),
    /// Anything else (answered 200 and ignored).
    Other,
}

/// Reads a verified body; `bot_user` is the bot's own user id (its mentions are taken out).
pub fn request(body: &[u8], bot_user: Option<&str>) -> Option<SlackRequest> {
    if let Some(payload) = toolgate_channels::slack::interaction::payload(body) {
        return Some(button(&payload).map_or(SlackRequest::Other, SlackRequest::Button));
    }
    let v: Value = serde_json::from_slice(body).ok()?;
    Some(match v["type"].as_str()? {
        "url_verification" => SlackRequest::Challenge(v["challenge"].as_str()?.to_owned()),
        "event_callback" => SlackRequest::Event {
            id: v["event_id"].as_str()?.to_owned(),
            message: message(&v["event"], bot_user),
        },
        _ => SlackRequest::Other,
    })
}

fn message(e: &Value, bot_user: Option<&str>) -> Option<ChatMessage> {
    if e.get("bot_id").is_some() || e.get("subtype").is_some() {
        return None;
    }
    let user = e["user"].as_str()?;
    if Some(user) == bot_user {
        return None;
    }
    let channel = e["channel"].as_str()?;
    let ts = e["ts"].as_str()?;
    let private = match e["type"].as_str()? {
        "app_mention" => false,
        "message" if e["channel_type"] == "im" => true,
        _ => return None,
    };
    let chat = if private {
        channel.to_owned()
    } else {
        format!("{channel}/{}", e["thread_ts"].as_str().unwrap_or(ts))
    };
    Some(ChatMessage {
        chat,
        private,
        message: ts.to_owned(),
        user: user.to_owned(),
        user_name: None,
        text: without_mentions(e["text"].as_str()?, bot_user),
        reply_to: None,
    })
}

/// `text` without `<@BOT>` (Slack's form of a mention of the bot).
fn without_mentions(text: &str, bot_user: Option<&str>) -> String {
    match bot_user {
        Some(bot) => text.replace(&format!("<@{bot}>"), ""),
        None => text.to_owned(),
    }
    .trim()
    .to_owned()
}

fn button(payload: &Value) -> Option<ButtonPress> {
    if payload["type"] != "block_actions" {
        return None;
    }
    let channel = payload["container"]["channel_id"]
        .as_str()
        .or(payload["channel"]["id"].as_str())?;
    let message = payload["container"]["message_ts"]
        .as_str()
        .or(payload["message"]["ts"].as_str())?;
    let thread = payload["container"]["thread_ts"]
        .as_str()
        .or(payload["message"]["thread_ts"].as_str());
    let action = payload["actions"].as_array()?.first()?;
    let user = payload["user"]["id"].as_str()?;
    Some(ButtonPress {
        chat: thread.map_or_else(|| channel.to_owned(), |t| format!("{channel}/{t}")),
        message: message.to_owned(),
        user: user.to_owned(),
        user_name: payload["user"]["username"]
            .as_str()
            .or(payload["user"]["name"].as_str())
            .map(str::to_owned),
        data: action["value"]
            .as_str()
            .or(action["action_id"].as_str())?
            .to_owned(),
        typed: payload["state"]["values"][CONFIRM_BLOCK][CONFIRM_ACTION]["value"]
            .as_str()
            .map(str::to_owned),
        reply: ReplyTo::Ephemeral {
            chat: channel.to_owned(),
            user: user.to_owned(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event(e: Value) -> Vec<u8> {
        json!({"type": "event_callback", "event_id": "Ev1", "event": e})
            .to_string()
            .into_bytes()
    }

    #[test]
    fn the_handshake_answers_its_challenge() {
        let body = json!({"type": "url_verification", "token": "x", "challenge": "abc"});
        assert_eq!(
            request(body.to_string().as_bytes(), None),
            Some(SlackRequest::Challenge("abc".into()))
        );
        assert_eq!(request(b"not json", None), None);
    }

    #[test]
    fn a_mention_is_a_thread_and_a_dm_is_the_channel() {
        let got = request(
            &event(json!({"type": "app_mention", "user": "U1", "channel": "C1",
                          "ts": "1.000100", "text": "<@UBOT> weather?"})),
            Some("UBOT"),
        );
        let Some(SlackRequest::Event {
            id,
            message: Some(m),
        }) = got
        else {
            panic!("a mention is a message: {got:?}");
        };
        assert_eq!(id, "Ev1");
        assert_eq!(
            (m.chat.as_str(), m.text.as_str()),
            ("C1/1.000100", "weather?")
        );
        let Some(SlackRequest::Event {
            message: Some(m), ..
        }) = request(
            &event(json!({"type": "app_mention", "user": "U1", "channel": "C1",
                          "ts": "2.0", "thread_ts": "1.000100", "text": "<@UBOT> and?"})),
            Some("UBOT"),
        )
        else {
            panic!("a mention in a thread");
        };
        assert_eq!(m.chat, "C1/1.000100");
        let Some(SlackRequest::Event {
            message: Some(m), ..
        }) = request(
            &event(
                json!({"type": "message", "channel_type": "im", "user": "U1",
                          "channel": "D1", "ts": "3.0", "text": "hi"}),
            ),
            Some("UBOT"),
        )
        else {
            panic!("a direct message");
        };
        assert!(m.private && m.chat == "D1");
    }

    #[test]
    fn bots_edits_and_channel_chatter_are_ignored() {
        for e in [
            json!({"type": "message", "channel_type": "im", "user": "U1", "bot_id": "B1",
                   "channel": "D1", "ts": "1.0", "text": "echo"}),
            json!({"type": "message", "channel_type": "im", "subtype": "message_changed",
                   "channel": "D1", "ts": "1.0"}),
            json!({"type": "message", "channel_type": "channel", "user": "U1",
                   "channel": "C1", "ts": "1.0", "text": "not for the bot"}),
            json!({"type": "message", "channel_type": "im", "user": "UBOT",
                   "channel": "D1", "ts": "1.0", "text": "my own"}),
        ] {
            let got = request(&event(e), Some("UBOT"));
            assert!(
                matches!(got, Some(SlackRequest::Event { message: None, .. })),
                "{got:?}"
            );
        }
    }

    #[test]
    fn a_button_in_a_thread_names_its_conversation_chat() {
        let payload = json!({"type": "block_actions", "user": {"id": "U1", "username": "al"},
            "container": {"type": "message", "message_ts": "5.0", "channel_id": "C1",
                          "thread_ts": "1.0"},
            "actions": [{"action_id": "a.once.apr_0123456789ab", "value": "a.once.apr_0123456789ab"}],
            "state": {"values": {"confirm": {"confirm_name": {"type": "plain_text_input",
                                                              "value": "shell"}}}}});
        let body = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("payload", &payload.to_string())
            .finish();
        let Some(SlackRequest::Button(b)) = request(body.as_bytes(), None) else {
            panic!("a button");
        };
        assert_eq!((b.chat.as_str(), b.message.as_str()), ("C1/1.0", "5.0"));
        assert_eq!(b.typed.as_deref(), Some("shell"));
        assert_eq!(
            b.reply,
            ReplyTo::Ephemeral {
                chat: "C1".into(),
                user: "U1".into()
            }
        );
    }
}
