//! The Bot API calls the hub makes. The token is part of every URL path
//! (`/bot<token>/<method>`), so no error ever carries a URL.

use async_trait::async_trait;
use serde_json::{Value, json};

use crate::card::Card;
use crate::secret::Secret;
use crate::service::{ChatService, ReplyTo, ServiceError};

/// Telegram's limit on a callback answer's text.
const ANSWER_CHARS: usize = 200;

/// One bot.
#[derive(Debug, Clone)]
pub struct TelegramApi {
    client: reqwest::Client,
    base: String,
    token: Secret,
}

impl TelegramApi {
    /// `base` is the API root without `/bot…` (`https://api.telegram.org`).
    pub fn new(client: reqwest::Client, base: String, token: Secret) -> TelegramApi {
        TelegramApi {
            client,
            base,
            token,
        }
    }

    /// Calls `method` with a JSON body; the `result` on success.
    pub async fn call(&self, method: &str, body: Value) -> Result<Value, ServiceError> {
        let url = format!("{}/bot{}/{method}", self.base, self.token.expose());
        let response = self
            .client
            .post(url)
            .json(&body)
            .send()
            .await
            .map_err(ServiceError::from_reqwest)?;
        let status = response.status();
        let text = response.text().await.map_err(ServiceError::from_reqwest)?;
        let answer: Value = serde_json::from_str(&text).map_err(|_| ServiceError::Api {
            service: "Telegram",
            code: status.as_u16().to_string(),
            description: "an answer that is not the Bot API's JSON".to_owned(),
        })?;
        if answer["ok"] == json!(true) {
            return Ok(answer["result"].clone());
        }
        if answer["error_code"] == json!(429) {
            return Err(ServiceError::RateLimited {
                service: "Telegram",
                retry_after_secs: answer["parameters"]["retry_after"].as_u64().unwrap_or(30),
            });
        }
        Err(ServiceError::Api {
            service: "Telegram",
            code: answer["error_code"]
                .as_i64()
                .map_or_else(|| status.as_u16().to_string(), |c| c.to_string()),
            description: answer["description"]
                .as_str()
                .unwrap_or("no description")
                .to_owned(),
        })
    }

    /// Registers `url` as the bot's webhook, with the secret Telegram will echo.
    pub async fn set_webhook(&self, url: &str, secret: &Secret) -> Result<(), ServiceError> {
        self.call(
            "setWebhook",
            json!({
                "url": url,
                "secret_token": secret.expose(),
                "allowed_updates": ["callback_query", "message"],
            }),
        )
        .await
        .map(drop)
    }

    /// Long-polls for updates from `offset` (confirming the ones before it).
    pub async fn get_updates(
        &self,
        offset: i64,
        timeout_secs: u64,
    ) -> Result<Vec<Value>, ServiceError> {
        let result = self
            .call(
                "getUpdates",
                json!({
                    "offset": offset,
                    "timeout": timeout_secs,
                    "allowed_updates": ["callback_query", "message"],
                }),
            )
            .await?;
        Ok(result.as_array().cloned().unwrap_or_default())
    }
}

impl TelegramApi {
    /// Sends plain `text` (no `parse_mode`: nothing in it formats the message) to `chat`,
    /// as a reply to `reply_to` when given (sent anyway if that message is gone); the new
    /// message's id.
    pub async fn send_text(
        &self,
        chat: &str,
        text: &str,
        reply_to: Option<&str>,
    ) -> Result<String, ServiceError> {
        let mut body = json!({
            "chat_id": chat_id(chat),
            "text": text,
            "link_preview_options": { "is_disabled": true },
        });
        if let Some(reply_to) = reply_to {
            body["reply_parameters"] =
                json!({ "message_id": message_id(reply_to)?, "allow_sending_without_reply": true });
        }
        let message = self.call("sendMessage", body).await?;
        sent_id(&message)
    }

    /// Deletes a message the bot sent.
    pub async fn delete_message(&self, chat: &str, message: &str) -> Result<(), ServiceError> {
        self.call(
            "deleteMessage",
            json!({ "chat_id": chat_id(chat), "message_id": message_id(message)? }),
        )
        .await
        .map(drop)
    }

    /// Replaces the text of a message the bot sent (its buttons go).
    pub async fn edit_text(
        &self,
        chat: &str,
        message: &str,
        text: &str,
    ) -> Result<(), ServiceError> {
        self.update(
            chat,
            message,
            &Card {
                text: text.to_owned(),
                rows: Vec::new(),
                confirm: None,
            },
        )
        .await
    }
}

fn sent_id(message: &Value) -> Result<String, ServiceError> {
    message["message_id"]
        .as_i64()
        .map(|id| id.to_string())
        .ok_or_else(|| ServiceError::Api {
            service: "Telegram",
            code: "200".to_owned(),
            description: "sendMessage answered without a message_id".to_owned(),
        })
}

/// A chat id as Telegram takes it: a number, or `@channelname`.
pub(crate) fn chat_id(chat: &str) -> Value {
    chat.parse::<i64>()
        .map_or_else(|_| json!(chat), |n| json!(n))
}

fn keyboard(card: &Card) -> Value {
    let rows: Vec<Vec<Value>> = card
        .rows
        .iter()
        .map(|row| {
            row.iter()
                .map(|b| json!({ "text": b.label, "callback_data": b.data }))
                .collect()
        })
        .collect();
    json!({ "inline_keyboard": rows })
}

fn message_id(message: &str) -> Result<i64, ServiceError> {
    message.parse().map_err(|_| ServiceError::Api {
        service: "Telegram",
        code: "400".to_owned(),
        description: format!("`{message}` is not a message id"),
    })
}

fn shortened(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut s: String = text.chars().take(max - 1).collect();
    s.push('…');
    s
}

#[async_trait]
impl ChatService for TelegramApi {
    async fn post(&self, chat: &str, card: &Card) -> Result<String, ServiceError> {
        let message = self
            .call(
                "sendMessage",
                json!({
                    "chat_id": chat_id(chat),
                    "text": card.text,
                    "reply_markup": keyboard(card),
                    "link_preview_options": { "is_disabled": true },
                }),
            )
            .await?;
        sent_id(&message)
    }

    async fn update(&self, chat: &str, message: &str, card: &Card) -> Result<(), ServiceError> {
        let result = self
            .call("editMessageText", {
                let mut body = json!({
                    "chat_id": chat_id(chat),
                    "message_id": message_id(message)?,
                    "text": card.text,
                    "link_preview_options": { "is_disabled": true },
                });
                // Without reply_markup the keyboard goes: a decided card has none.
                if !card.rows.is_empty() {
                    body["reply_markup"] = keyboard(card);
                }
                body
            })
            .await;
        match result {
            // Already showing this: what we wanted.
            Err(ServiceError::Api { description, .. })
                if description.contains("message is not modified") =>
            {
                Ok(())
            }
            other => other.map(drop),
        }
    }

    async fn tell(&self, to: &ReplyTo, text: &str) -> Result<(), ServiceError> {
        match to {
            ReplyTo::Callback(id) => self
                .call(
                    "answerCallbackQuery",
                    json!({
                        "callback_query_id": id,
                        "text": shortened(text, ANSWER_CHARS),
                        "show_alert": true,
                    }),
                )
                .await
                .map(drop),
            ReplyTo::Message { chat, message } => self
                .call(
                    "sendMessage",
                    json!({
                        "chat_id": chat_id(chat),
                        "text": text,
                        "reply_parameters": { "message_id": message_id(message)? },
                    }),
                )
                .await
                .map(drop),
            ReplyTo::Ephemeral { .. } => Ok(()),
        }
    }

    async fn whoami(&self) -> Result<String, ServiceError> {
        let me = self.call("getMe", json!({})).await?;
        Ok(format!("@{}", me["username"].as_str().unwrap_or("?")))
    }

    async fn chat_title(&self, chat: &str) -> Result<String, ServiceError> {
        let c = self
            .call("getChat", json!({ "chat_id": chat_id(chat) }))
            .await?;
        Ok(c["title"]
            .as_str()
            .or(c["username"].as_str())
            .or(c["first_name"].as_str())
            .unwrap_or("(untitled)")
            .to_owned())
    }
}
