//! An update from Telegram, as what the bot acts on: a text message addressed to it, or a
//! button pressed on one of its messages. In a private chat every message is addressed to
//! the bot; in a group only one that mentions it (`@name`, `/command@name`) or replies to
//! one of its messages. Messages from bots, edits and anything without text are ignored.

use serde_json::Value;
use toolgate_channels::service::ReplyTo;

use toolgate_channels::telegram::updates::{id_text, name};

pub use crate::incoming::{ButtonPress, ChatMessage, Incoming};

/// Who the bot is (from `getMe`): group messages are addressed to it by these.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Me {
    pub id: i64,
    pub username: String,
}

/// What `update` asks of the bot, if anything.
pub fn incoming(update: &Value, me: Option<&Me>) -> Option<Incoming> {
    if let Some(q) = update.get("callback_query") {
        let message = q.get("message")?;
        return Some(Incoming::Button(ButtonPress {
            chat: id_text(&message["chat"]["id"])?,
            message: id_text(&message["message_id"])?,
            user: id_text(&q["from"]["id"])?,
            user_name: name(&q["from"]),
            data: q["data"].as_str()?.to_owned(),
            typed: None,
            reply: ReplyTo::Callback(q["id"].as_str()?.to_owned()),
        }));
    }
    let message = update.get("message")?;
    if message["from"]["is_bot"].as_bool() == Some(true) {
        return None;
    }
    let text = message["text"].as_str()?;
    let private = message["chat"]["type"].as_str() == Some("private");
    let replied = message.get("reply_to_message");
    let to_me = replied.is_some_and(|r| {
        me.is_some_and(|me| r["from"]["id"].as_i64() == Some(me.id))
            || (me.is_none() && r["from"]["is_bot"].as_bool() == Some(true))
    });
    let (mentioned, text) = without_mention(text, me);
    if !(private || to_me || mentioned) {
        return None;
    }
    Some(Incoming::Message(ChatMessage {
        chat: id_text(&message["chat"]["id"])?,
        private,
        message: id_text(&message["message_id"])?,
        user: id_text(&message["from"]["id"])?,
        user_name: name(&message["from"]),
        text,
        reply_to: if to_me || private {
            replied.and_then(|r| id_text(&r["message_id"]))
        } else {
            None
        },
    }))
}

/// Whether `text` mentions the bot, and the text without the mention (`/new@bot` → `/new`).
fn without_mention(text: &str, me: Option<&Me>) -> (bool, String) {
    let Some(me) = me else {
        return (false, text.to_owned());
    };
    let tag = format!("@{}", me.username.to_ascii_lowercase());
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut found = false;
    let mut i = 0;
    while let Some(at) = lower[i..].find(&tag) {
        let start = i + at;
        let end = start + tag.len();
        // A whole name only: `@bot` but not `@botany`.
        let whole = lower[end..]
            .chars()
            .next()
            .is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_'));
        out.push_str(&text[i..start]);
        if whole {
            found = true;
        } else {
            out.push_str(&text[start..end]);
        }
        i = end;
    }
    out.push_str(&text[i..]);
    (found, out.trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn me() -> Me {
        Me {
            id: 99,
            username: "AgentBot".into(),
        }
    }

    fn message(chat_type: &str, text: &str, reply_from: Option<i64>) -> Value {
        let mut m = json!({"update_id": 1, "message": {
            "message_id": 5, "date": 0,
            "chat": {"id": if chat_type == "private" { 42 } else { -100 }, "type": chat_type},
            "from": {"id": 42, "is_bot": false, "first_name": "Al", "username": "al"},
            "text": text}});
        if let Some(from) = reply_from {
            m["message"]["reply_to_message"] = json!({"message_id": 3, "date": 0,
                "chat": {"id": -100, "type": chat_type},
                "from": {"id": from, "is_bot": from == 99, "first_name": "x"}});
        }
        m
    }

    #[test]
    fn private_messages_are_all_for_the_bot() {
        let Some(Incoming::Message(m)) = incoming(&message("private", "hi", None), Some(&me()))
        else {
            panic!("a private message is for the bot");
        };
        assert_eq!(
            (m.chat.as_str(), m.user.as_str(), m.text.as_str()),
            ("42", "42", "hi")
        );
        assert!(m.private && m.reply_to.is_none());
    }

    #[test]
    fn groups_need_a_mention_or_a_reply_to_the_bot() {
        assert!(incoming(&message("group", "hi all", None), Some(&me())).is_none());
        assert!(incoming(&message("group", "hi @AgentBotany", None), Some(&me())).is_none());
        let Some(Incoming::Message(m)) = incoming(
            &message("supergroup", "@agentbot weather?", None),
            Some(&me()),
        ) else {
            panic!("mentioned");
        };
        assert_eq!(m.text, "weather?");
        let Some(Incoming::Message(m)) =
            incoming(&message("group", "/new@AgentBot", None), Some(&me()))
        else {
            panic!("a command to the bot");
        };
        assert_eq!(m.text, "/new");
        let Some(Incoming::Message(m)) =
            incoming(&message("group", "and then?", Some(99)), Some(&me()))
        else {
            panic!("a reply to the bot");
        };
        assert_eq!(m.reply_to.as_deref(), Some("3"));
        assert!(incoming(&message("group", "and then?", Some(7)), Some(&me())).is_none());
    }

    #[test]
    fn bots_edits_and_non_text_are_ignored() {
        let mut m = message("private", "hi", None);
        m["message"]["from"]["is_bot"] = json!(true);
        assert!(incoming(&m, Some(&me())).is_none());
        let mut m = message("private", "hi", None);
        m["edited_message"] = m["message"].take();
        assert!(incoming(&m, Some(&me())).is_none());
        let mut m = message("private", "hi", None);
        m["message"]["text"].take();
        assert!(incoming(&m, Some(&me())).is_none());
    }

    #[test]
    fn a_button_names_its_message_and_query() {
        let tap = json!({"update_id": 1, "callback_query": {
            "id": "q1", "from": {"id": 42, "is_bot": false, "first_name": "Al"},
            "message": {"message_id": 7, "date": 0, "chat": {"id": 42, "type": "private"}},
            "chat_instance": "x", "data": "d.apr_0123456789ab"}});
        let Some(Incoming::Button(b)) = incoming(&tap, None) else {
            panic!("a button");
        };
        assert_eq!((b.chat.as_str(), b.message.as_str()), ("42", "7"));
        assert_eq!(b.reply, ReplyTo::Callback("q1".into()));
    }
}
