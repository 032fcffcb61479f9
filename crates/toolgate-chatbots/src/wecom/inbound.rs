//! A WeCom callback's XML: the envelope (`Encrypt`, with the corp id and agent id), and the
//! message it decrypts to — a text message from a user, or a press on a template card
//! (`template_card_event`). Every chat with a WeCom application is private: the conversation
//! is the user's. Other message types (images, voice, …) and events are ignored.

use toolgate_channels::service::ReplyTo;

use crate::incoming::{ButtonPress, ChatMessage, Incoming};

/// The text of `<name>` directly under the root of `xml`.
pub fn field(xml: &str, name: &str) -> Option<String> {
    let doc = roxmltree::Document::parse(xml).ok()?;
    doc.root_element()
        .children()
        .find(|n| n.has_tag_name(name))
        .map(|n| n.text().unwrap_or_default().to_owned())
}

/// What the decrypted message asks of the bot, with the key that identifies it (WeCom
/// retries a callback it got no answer for: the same key), and for a press the response
/// code that lets its card be updated.
pub struct Parsed {
    pub key: String,
    pub incoming: Option<Incoming>,
    pub response_code: Option<String>,
}

/// Reads a decrypted message.
pub fn message(xml: &str) -> Option<Parsed> {
    let doc = roxmltree::Document::parse(xml).ok()?;
    let get = |name: &str| {
        doc.root_element()
            .children()
            .find(|n| n.has_tag_name(name))
            .map(|n| n.text().unwrap_or_default().to_owned())
    };
    let user = get("FromUserName")?;
    let created = get("CreateTime").unwrap_or_default();
    match get("MsgType")?.as_str() {
        "text" => {
            let id = get("MsgId").unwrap_or_else(|| format!("{user}:{created}"));
            Some(Parsed {
                key: format!("msg:{id}"),
                incoming: Some(Incoming::Message(ChatMessage {
                    chat: user.clone(),
                    private: true,
                    message: id,
                    user,
                    user_name: None,
                    text: get("Content")?.trim().to_owned(),
                    reply_to: None,
                })),
                response_code: None,
            })
        }
        "event" if get("Event").as_deref() == Some("template_card_event") => {
            let task = get("TaskId")?;
            Some(Parsed {
                key: format!("press:{user}:{created}:{task}"),
                incoming: Some(Incoming::Button(ButtonPress {
                    chat: user.clone(),
                    message: task.clone(),
                    user: user.clone(),
                    user_name: None,
                    data: get("EventKey")?,
                    typed: None,
                    reply: ReplyTo::Message {
                        chat: user,
                        message: task,
                    },
                })),
                response_code: get("ResponseCode"),
            })
        }
        _ => Some(Parsed {
            key: format!("other:{user}:{created}"),
            incoming: None,
            response_code: None,
        }),
    }
}

/// A passive text reply to `user` (the reply XML, before encryption).
pub fn text_reply(user: &str, corp_id: &str, text: &str, now_secs: u64) -> String {
    format!(
        "<xml><ToUserName>{}</ToUserName><FromUserName>{}</FromUserName><CreateTime>{now_secs}</CreateTime><MsgType><![CDATA[text]]></MsgType><Content>{}</Content></xml>",
        cdata(user),
        cdata(corp_id),
        cdata(text)
    )
}

/// `text` as CDATA, whatever it holds (`]]>` is split across two sections).
fn cdata(text: &str) -> String {
    format!("<![CDATA[{}]]>", text.replace("]]>", "]]]]><![CDATA[>"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_message_is_the_users_conversation() {
        let xml = "<xml><ToUserName><![CDATA[ww1]]></ToUserName><FromUserName><![CDATA[alice]]></FromUserName><CreateTime>1348831860</CreateTime><MsgType><![CDATA[text]]></MsgType><Content><![CDATA[ weather? ]]></Content><MsgId>1234567890123456</MsgId><AgentID>1000002</AgentID></xml>";
        let parsed = message(xml).unwrap();
        assert_eq!(parsed.key, "msg:1234567890123456");
        let Some(Incoming::Message(m)) = parsed.incoming else {
            panic!("a message");
        };
        assert_eq!(
            (m.chat.as_str(), m.user.as_str(), m.text.as_str()),
            ("alice", "alice", "weather?")
        );
    }

    #[test]
    fn a_card_press_names_its_task_and_code() {
        let xml = "<xml><ToUserName><![CDATA[ww1]]></ToUserName><FromUserName><![CDATA[alice]]></FromUserName><CreateTime>123</CreateTime><MsgType><![CDATA[event]]></MsgType><Event><![CDATA[template_card_event]]></Event><EventKey><![CDATA[a.once.apr_0123456789ab]]></EventKey><TaskId><![CDATA[tg_abc]]></TaskId><CardType><![CDATA[button_interaction]]></CardType><ResponseCode><![CDATA[rc1]]></ResponseCode><AgentID>1</AgentID></xml>";
        let parsed = message(xml).unwrap();
        assert_eq!(parsed.response_code.as_deref(), Some("rc1"));
        let Some(Incoming::Button(b)) = parsed.incoming else {
            panic!("a press");
        };
        assert_eq!(
            (b.message.as_str(), b.data.as_str()),
            ("tg_abc", "a.once.apr_0123456789ab")
        );
    }

    #[test]
    fn replies_are_cdata_whatever_the_text() {
        let xml = text_reply("alice", "ww1", "a ]]> b <x>", 1);
        assert_eq!(field(&xml, "Content").as_deref(), Some("a ]]> b <x>"));
        assert!(
            message("<xml><MsgType>image</MsgType><FromUserName>a</FromUserName></xml>")
                .unwrap()
                .incoming
                .is_none()
        );
        assert!(message("not xml").is_none());
    }
}
