//! An update from Telegram, as a [`Tap`]: a `callback_query` (a button) or a text `message`
//! replying to a card (the typed confirmation). Updates from chats the channel does not
//! list are ignored, whoever sends them.

use serde_json::Value;

use crate::service::{ReplyTo, Tap, TapInput};

/// The tap in `update`, if it is one from one of `chats`.
pub fn tap_of(update: &Value, chats: &[String]) -> Option<Tap> {
    let listed = |chat: &str| chats.iter().any(|c| c == chat);
    if let Some(q) = update.get("callback_query") {
        let message = q.get("message")?;
        let chat = id_text(&message["chat"]["id"])?;
        if !listed(&chat) {
            return None;
        }
        return Some(Tap {
            chat,
            message: id_text(&message["message_id"])?,
            user: id_text(&q["from"]["id"])?,
            user_name: name(&q["from"]),
            input: TapInput::Button {
                data: q["data"].as_str()?.to_owned(),
                typed: None,
            },
            reply: ReplyTo::Callback(q["id"].as_str()?.to_owned()),
        });
    }
    let message = update.get("message")?;
    let replied = message.get("reply_to_message")?;
    let chat = id_text(&message["chat"]["id"])?;
    if !listed(&chat) {
        return None;
    }
    Some(Tap {
        chat: chat.clone(),
        message: id_text(&replied["message_id"])?,
        user: id_text(&message["from"]["id"])?,
        user_name: name(&message["from"]),
        input: TapInput::Reply {
            text: message["text"].as_str()?.to_owned(),
        },
        reply: ReplyTo::Message {
            chat,
            message: id_text(&message["message_id"])?,
        },
    })
}

/// An id as text (Telegram sends numbers; some fields are strings).
pub fn id_text(v: &Value) -> Option<String> {
    match v {
        Value::Number(n) => Some(n.to_string()),
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        _ => None,
    }
}

/// A user's name for messages and the audit (never trusted for anything).
pub fn name(user: &Value) -> Option<String> {
    user["username"]
        .as_str()
        .or(user["first_name"].as_str())
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn callbacks_and_replies_from_listed_chats_only() {
        let chats = vec!["-100".to_owned()];
        let tap = json!({"update_id": 1, "callback_query": {
            "id": "q1", "from": {"id": 42, "is_bot": false, "first_name": "Al", "username": "al"},
            "message": {"message_id": 7, "date": 0, "chat": {"id": -100, "type": "group"}},
            "chat_instance": "x", "data": "d.apr_0123456789ab"}});
        let t = tap_of(&tap, &chats).unwrap();
        assert_eq!(
            (t.chat.as_str(), t.message.as_str(), t.user.as_str()),
            ("-100", "7", "42")
        );
        assert_eq!(t.reply, ReplyTo::Callback("q1".into()));
        let reply = json!({"update_id": 2, "message": {
            "message_id": 9, "date": 0, "chat": {"id": -100, "type": "group"},
            "from": {"id": 42, "is_bot": false, "first_name": "Al"}, "text": "shell",
            "reply_to_message": {"message_id": 7, "date": 0, "chat": {"id": -100, "type": "group"}}}});
        let r = tap_of(&reply, &chats).unwrap();
        assert_eq!(r.message, "7");
        assert_eq!(
            r.input,
            TapInput::Reply {
                text: "shell".into()
            }
        );
        assert!(tap_of(&reply, &["-200".to_owned()]).is_none());
        assert!(tap_of(&json!({"update_id": 3, "message": {"message_id": 1, "chat": {"id": -100}, "text": "hi"}}), &chats).is_none());
    }
}
