//! A `block_actions` interaction (the form field `payload`, JSON) as a [`Tap`]: the button,
//! what was typed in the card's confirmation box, who pressed it and on which message.
//! Interactions from channels the hub does not list, and other interaction types, are not
//! taps.

use serde_json::Value;

use super::api::{CONFIRM_ACTION, CONFIRM_BLOCK};
use crate::service::{ReplyTo, Tap, TapInput};

/// The `payload` JSON of an `application/x-www-form-urlencoded` body.
pub fn payload(body: &[u8]) -> Option<Value> {
    url::form_urlencoded::parse(body)
        .find(|(k, _)| k == "payload")
        .and_then(|(_, v)| serde_json::from_str(&v).ok())
}

/// The tap in an interaction payload, if it is a button press in one of `chats`.
pub fn tap_of(payload: &Value, chats: &[String]) -> Option<Tap> {
    if payload["type"] != "block_actions" {
        return None;
    }
    let chat = payload["container"]["channel_id"]
        .as_str()
        .or(payload["channel"]["id"].as_str())?
        .to_owned();
    if !chats.contains(&chat) {
        return None;
    }
    let message = payload["container"]["message_ts"]
        .as_str()
        .or(payload["message"]["ts"].as_str())?
        .to_owned();
    let action = payload["actions"].as_array()?.first()?;
    let data = action["value"]
        .as_str()
        .or(action["action_id"].as_str())?
        .to_owned();
    let typed = payload["state"]["values"][CONFIRM_BLOCK][CONFIRM_ACTION]["value"]
        .as_str()
        .map(str::to_owned);
    let user = payload["user"]["id"].as_str()?.to_owned();
    Some(Tap {
        chat: chat.clone(),
        message,
        user: user.clone(),
        user_name: payload["user"]["username"]
            .as_str()
            .or(payload["user"]["name"].as_str())
            .map(str::to_owned),
        input: TapInput::Button { data, typed },
        reply: ReplyTo::Ephemeral { chat, user },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_button_press_with_the_typed_name() {
        let p = json!({
            "type": "block_actions",
            "user": {"id": "U1", "username": "alice", "team_id": "T1"},
            "container": {"type": "message", "message_ts": "1700000000.000100", "channel_id": "C1"},
            "channel": {"id": "C1", "name": "ops"},
            "state": {"values": {"confirm": {"confirm_name": {"type": "plain_text_input", "value": "shell"}}}},
            "actions": [{"action_id": "a.once.apr_0123456789ab", "block_id": "row0",
                         "value": "a.once.apr_0123456789ab", "type": "button", "action_ts": "1"}]
        });
        let body = format!(
            "payload={}",
            url::form_urlencoded::byte_serialize(p.to_string().as_bytes()).collect::<String>()
        );
        let parsed = payload(body.as_bytes()).unwrap();
        let tap = tap_of(&parsed, &["C1".to_owned()]).unwrap();
        assert_eq!(tap.message, "1700000000.000100");
        assert_eq!(
            tap.input,
            TapInput::Button {
                data: "a.once.apr_0123456789ab".into(),
                typed: Some("shell".into())
            }
        );
        assert!(tap_of(&parsed, &["C2".to_owned()]).is_none());
        let mut other = parsed.clone();
        other["type"] = json!("view_submission");
        assert!(tap_of(&other, &["C1".to_owned()]).is_none());
    }
}
