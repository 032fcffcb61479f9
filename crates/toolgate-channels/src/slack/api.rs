//! The Web API calls the hub makes, authenticated with the bot token in the
//! `Authorization` header.

use async_trait::async_trait;
use serde_json::{Value, json};

use crate::card::{ButtonStyle, Card};
use crate::secret::Secret;
use crate::service::{ChatService, ReplyTo, ServiceError};

/// The confirmation box's ids in a card.
pub const CONFIRM_BLOCK: &str = "confirm";
pub const CONFIRM_ACTION: &str = "confirm_name";

#[derive(Debug, Clone)]
pub struct SlackApi {
    client: reqwest::Client,
    base: String,
    token: Secret,
}

impl SlackApi {
    /// `base` is the Web API root (`https://slack.com/api`).
    pub fn new(client: reqwest::Client, base: String, token: Secret) -> SlackApi {
        SlackApi {
            client,
            base,
            token,
        }
    }

    /// Calls `method`: a JSON body for the `chat.*` methods, a form for the reads (some of
    /// Slack's read methods take no JSON).
    pub async fn call(&self, method: &str, body: Value) -> Result<Value, ServiceError> {
        let request = self
            .client
            .post(format!("{}/{method}", self.base))
            .bearer_auth(self.token.expose());
        let request = if method.starts_with("chat.") {
            request
                .header(
                    reqwest::header::CONTENT_TYPE,
                    "application/json; charset=utf-8",
                )
                .body(body.to_string())
        } else {
            let mut form = url::form_urlencoded::Serializer::new(String::new());
            if let Some(fields) = body.as_object() {
                for (k, v) in fields {
                    form.append_pair(
                        k,
                        v.as_str()
                            .map_or_else(|| v.to_string(), str::to_owned)
                            .as_str(),
                    );
                }
            }
            request
                .header(
                    reqwest::header::CONTENT_TYPE,
                    "application/x-www-form-urlencoded",
                )
                .body(form.finish())
        };
        let response = request.send().await.map_err(ServiceError::from_reqwest)?;
        let status = response.status();
        if status == reqwest::StatusCode::TOO_MANY_REQUESTS {
            let retry_after_secs = response
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(30);
            return Err(ServiceError::RateLimited {
                service: "Slack",
                retry_after_secs,
            });
        }
        let text = response.text().await.map_err(ServiceError::from_reqwest)?;
        let answer: Value = serde_json::from_str(&text).map_err(|_| ServiceError::Api {
            service: "Slack",
            code: status.as_u16().to_string(),
            description: "an answer that is not the Web API's JSON".to_owned(),
        })?;
        if answer["ok"] == json!(true) {
            return Ok(answer);
        }
        Err(ServiceError::Api {
            service: "Slack",
            code: answer["error"].as_str().unwrap_or("error").to_owned(),
            description: match status.as_u16() {
                200 => "the Web API refused the call".to_owned(),
                other => format!("HTTP {other}"),
            },
        })
    }
}

impl SlackApi {
    /// Posts `card` in `channel`, in thread `thread` when given; the message's `ts`.
    pub async fn post_in(
        &self,
        channel: &str,
        thread: Option<&str>,
        card: &Card,
    ) -> Result<String, ServiceError> {
        let mut body = json!({ "channel": channel, "text": fallback(card), "blocks": blocks(card),
                               "unfurl_links": false, "unfurl_media": false });
        if let Some(thread) = thread {
            body["thread_ts"] = json!(thread);
        }
        posted_ts(&self.call("chat.postMessage", body).await?)
    }

    /// Posts plain `text` (`mrkdwn` off: nothing in it formats the message) in `channel`, in
    /// thread `thread` when given; the message's `ts`.
    pub async fn send_text(
        &self,
        channel: &str,
        thread: Option<&str>,
        text: &str,
    ) -> Result<String, ServiceError> {
        let mut body = json!({ "channel": channel, "text": text, "mrkdwn": false,
                               "unfurl_links": false, "unfurl_media": false });
        if let Some(thread) = thread {
            body["thread_ts"] = json!(thread);
        }
        posted_ts(&self.call("chat.postMessage", body).await?)
    }

    /// Replaces a message's text (and drops its blocks).
    pub async fn edit_text(&self, channel: &str, ts: &str, text: &str) -> Result<(), ServiceError> {
        self.call(
            "chat.update",
            json!({ "channel": channel, "ts": ts, "text": text, "blocks": [] }),
        )
        .await
        .map(drop)
    }

    /// Deletes a message the bot posted.
    pub async fn delete_message(&self, channel: &str, ts: &str) -> Result<(), ServiceError> {
        self.call("chat.delete", json!({ "channel": channel, "ts": ts }))
            .await
            .map(drop)
    }
}

fn posted_ts(answer: &Value) -> Result<String, ServiceError> {
    answer["ts"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| ServiceError::Api {
            service: "Slack",
            code: "no_ts".to_owned(),
            description: "chat.postMessage answered without a ts".to_owned(),
        })
}

/// The card as Block Kit: the text as `plain_text` (nothing in it is markup), the
/// confirmation box when the tool is dangerous, and the buttons.
pub fn blocks(card: &Card) -> Value {
    let mut blocks = vec![json!({
        "type": "section",
        "text": { "type": "plain_text", "text": card.text, "emoji": false },
    })];
    if let Some(name) = &card.confirm {
        blocks.push(json!({
            "type": "input",
            "block_id": CONFIRM_BLOCK,
            "optional": true,
            "label": { "type": "plain_text", "text": format!("Type {} to approve", shortened(name, 50)) },
            "element": {
                "type": "plain_text_input",
                "action_id": CONFIRM_ACTION,
                "placeholder": { "type": "plain_text", "text": "the tool's name" },
            },
        }));
    }
    for (i, row) in card.rows.iter().enumerate() {
        let elements: Vec<Value> = row
            .iter()
            .map(|b| {
                let mut button = json!({
                    "type": "button",
                    "text": { "type": "plain_text", "text": b.label },
                    "action_id": b.data,
                    "value": b.data,
                });
                match b.style {
                    ButtonStyle::Primary => button["style"] = json!("primary"),
                    ButtonStyle::Danger => button["style"] = json!("danger"),
                    ButtonStyle::Plain => {}
                }
                button
            })
            .collect();
        blocks.push(
            json!({ "type": "actions", "block_id": format!("row{i}"), "elements": elements }),
        );
    }
    Value::Array(blocks)
}

fn shortened(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut s: String = text.chars().take(max - 1).collect();
    s.push('…');
    s
}

/// The notification text: the card's first line.
fn fallback(card: &Card) -> String {
    card.text
        .lines()
        .next()
        .unwrap_or("toolgate approval")
        .to_owned()
}

#[async_trait]
impl ChatService for SlackApi {
    async fn post(&self, chat: &str, card: &Card) -> Result<String, ServiceError> {
        self.post_in(chat, None, card).await
    }

    async fn update(&self, chat: &str, message: &str, card: &Card) -> Result<(), ServiceError> {
        self.call(
            "chat.update",
            json!({ "channel": chat, "ts": message, "text": fallback(card), "blocks": blocks(card) }),
        )
        .await
        .map(drop)
    }

    async fn tell(&self, to: &ReplyTo, text: &str) -> Result<(), ServiceError> {
        match to {
            ReplyTo::Ephemeral { chat, user } => self
                .call(
                    "chat.postEphemeral",
                    json!({ "channel": chat, "user": user, "text": text }),
                )
                .await
                .map(drop),
            _ => Ok(()),
        }
    }

    async fn whoami(&self) -> Result<String, ServiceError> {
        let me = self.call("auth.test", json!({})).await?;
        Ok(format!(
            "{} in {}",
            me["user"].as_str().unwrap_or("?"),
            me["team"].as_str().unwrap_or("?")
        ))
    }

    async fn chat_title(&self, chat: &str) -> Result<String, ServiceError> {
        let info = self
            .call("conversations.info", json!({ "channel": chat }))
            .await?;
        Ok(format!(
            "#{}",
            info["channel"]["name"].as_str().unwrap_or(chat)
        ))
    }
}
