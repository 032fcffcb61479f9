//! The WeCom server API a bot calls: `gettoken` (the access token, cached until shortly
//! before it expires and fetched again when WeCom says it is invalid), `message/send` (text,
//! and `template_card` for approvals), `message/update_template_card` (a decided card) and
//! `message/recall`. The access token travels in the query string, so no error ever carries
//! a URL.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde_json::{Value, json};
use toolgate_channels::card::Card;
use toolgate_channels::secret::Secret;
use toolgate_channels::service::{ReplyTo, ServiceError};

use crate::outbound::Outbound;
use crate::text::split_bytes;

/// WeCom's limit on a text message's content, in bytes.
pub const WECOM_BYTES: usize = 2_048;
/// A token is fetched again this long before WeCom says it expires.
const TOKEN_MARGIN: Duration = Duration::from_secs(300);
/// Error codes meaning the access token is invalid or expired.
const STALE_TOKEN: [i64; 3] = [40_001, 40_014, 42_001];
/// Response codes kept for cards not yet decided (each lets one card be updated).
const KEEP_CODES: usize = 10_000;

/// One application.
pub struct WecomApi {
    client: reqwest::Client,
    base: String,
    corp_id: String,
    agent_id: i64,
    secret: Secret,
    token: Mutex<Option<(String, Instant)>>,
    /// A card's task id → the response code that updates it (from sending it, or from the
    /// press on it: each is good for one update).
    codes: Mutex<HashMap<String, String>>,
}

impl std::fmt::Debug for WecomApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WecomApi")
            .field("corp_id", &self.corp_id)
            .field("agent_id", &self.agent_id)
            .finish_non_exhaustive()
    }
}

fn api_error(code: &str, description: impl Into<String>) -> ServiceError {
    ServiceError::Api {
        service: "WeCom",
        code: code.to_owned(),
        description: description.into(),
    }
}

impl WecomApi {
    pub fn new(
        client: reqwest::Client,
        base: String,
        corp_id: String,
        agent_id: i64,
        secret: Secret,
    ) -> WecomApi {
        WecomApi {
            client,
            base,
            corp_id,
            agent_id,
            secret,
            token: Mutex::new(None),
            codes: Mutex::new(HashMap::new()),
        }
    }

    async fn get(&self, url: String) -> Result<Value, ServiceError> {
        let response = self
            .client
            .get(url)
            .send()
            .await
            .map_err(ServiceError::from_reqwest)?;
        Self::answer(response).await
    }

    async fn answer(response: reqwest::Response) -> Result<Value, ServiceError> {
        let status = response.status();
        let text = response.text().await.map_err(ServiceError::from_reqwest)?;
        let v: Value = serde_json::from_str(&text).map_err(|_| {
            api_error(
                &status.as_u16().to_string(),
                "an answer that is not WeCom's JSON",
            )
        })?;
        match v["errcode"].as_i64().unwrap_or(0) {
            0 => Ok(v),
            // 45009: the API's frequency limit.
            45_009 => Err(ServiceError::RateLimited {
                service: "WeCom",
                retry_after_secs: 60,
            }),
            code => Err(api_error(
                &code.to_string(),
                v["errmsg"].as_str().unwrap_or("no errmsg"),
            )),
        }
    }

    /// The access token, fetched when there is none or it is about to expire.
    async fn access_token(&self, fresh: bool) -> Result<String, ServiceError> {
        if !fresh
            && let Some((token, until)) = self
                .token
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .clone()
            && Instant::now() < until
        {
            return Ok(token);
        }
        let mut url = url::Url::parse(&format!("{}/gettoken", self.base))
            .map_err(|e| api_error("url", e.to_string()))?;
        url.query_pairs_mut()
            .append_pair("corpid", &self.corp_id)
            .append_pair("corpsecret", self.secret.expose());
        let v = self.get(url.into()).await?;
        let token = v["access_token"]
            .as_str()
            .ok_or_else(|| api_error("no_token", "gettoken answered without access_token"))?
            .to_owned();
        let lasts = Duration::from_secs(v["expires_in"].as_u64().unwrap_or(7_200));
        let until = Instant::now() + lasts.saturating_sub(TOKEN_MARGIN);
        *self
            .token
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some((token.clone(), until));
        Ok(token)
    }

    /// Calls `method` (`message/send`, …) with a JSON body; a stale token is fetched again
    /// and the call made once more.
    pub async fn call(&self, method: &str, body: &Value) -> Result<Value, ServiceError> {
        let mut fresh = false;
        loop {
            let token = self.access_token(fresh).await?;
            let mut url = url::Url::parse(&format!("{}/{method}", self.base))
                .map_err(|e| api_error("url", e.to_string()))?;
            url.query_pairs_mut().append_pair("access_token", &token);
            let response = self
                .client
                .post(url)
                .json(body)
                .send()
                .await
                .map_err(ServiceError::from_reqwest)?;
            match Self::answer(response).await {
                Err(ServiceError::Api { code, .. })
                    if !fresh && STALE_TOKEN.iter().any(|c| c.to_string() == code) =>
                {
                    fresh = true;
                }
                other => return other,
            }
        }
    }

    /// The application's name, if the secret is accepted (`toolgate doctor`).
    pub async fn whoami(&self) -> Result<String, ServiceError> {
        self.access_token(true).await?;
        Ok(format!("corp {} agent {}", self.corp_id, self.agent_id))
    }

    /// Keeps the code that updates card `task` (from a press on it).
    pub fn remember_code(&self, task: &str, code: &str) {
        let mut codes = self
            .codes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if codes.len() >= KEEP_CODES {
            codes.clear();
        }
        codes.insert(task.to_owned(), code.to_owned());
    }

    fn take_code(&self, task: &str) -> Option<String> {
        self.codes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(task)
    }

    async fn send(&self, user: &str, message: Value) -> Result<Value, ServiceError> {
        let mut body = message;
        body["touser"] = json!(user);
        body["agentid"] = json!(self.agent_id);
        let v = self.call("message/send", &body).await?;
        if v["invaliduser"].as_str().is_some_and(|u| !u.is_empty()) {
            return Err(api_error(
                "invaliduser",
                "WeCom does not know this user in the application's visible range",
            ));
        }
        Ok(v)
    }
}

/// The card as a `button_interaction` template card: WeCom's cards hold a few dozen
/// characters, so the complete preview is sent as text just before it.
fn template_card(card: &Card, task: &str) -> Value {
    let first = card.text.lines().next().unwrap_or("toolgate approval");
    let title: String = first.chars().take(26).collect();
    let buttons: Vec<Value> = card
        .rows
        .first()
        .map(|row| {
            row.iter()
                .take(6)
                .map(|b| {
                    json!({
                        "text": b.label.chars().take(10).collect::<String>(),
                        "style": if matches!(b.style, toolgate_channels::card::ButtonStyle::Danger) { 3 } else { 1 },
                        "key": b.data,
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    let sub = match &card.confirm {
        Some(tool) => format!(
            "{tool} is dangerous: a tap does not approve it. Send the message `{tool}` to approve."
        ),
        None => "The complete request is in the message above.".to_owned(),
    };
    json!({
        "msgtype": "template_card",
        "template_card": {
            "card_type": "button_interaction",
            "main_title": { "title": title },
            "sub_title_text": sub.chars().take(112).collect::<String>(),
            "task_id": task,
            "button_list": buttons,
        },
    })
}

#[async_trait]
impl Outbound for WecomApi {
    fn limit(&self) -> usize {
        WECOM_BYTES
    }

    fn pieces(&self, text: &str) -> Vec<String> {
        split_bytes(text, WECOM_BYTES)
    }

    fn drafts(&self) -> bool {
        // A WeCom text message cannot be edited: no draft, the answer alone.
        false
    }

    async fn send_text(
        &self,
        chat: &str,
        text: &str,
        _reply_to: Option<&str>,
    ) -> Result<String, ServiceError> {
        let v = self
            .send(
                chat,
                json!({ "msgtype": "text", "text": { "content": text } }),
            )
            .await?;
        v["msgid"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| api_error("no_msgid", "message/send answered without a msgid"))
    }

    async fn edit_text(
        &self,
        _chat: &str,
        _message: &str,
        _text: &str,
    ) -> Result<(), ServiceError> {
        Err(api_error(
            "unsupported",
            "WeCom text messages cannot be edited",
        ))
    }

    async fn delete(&self, _chat: &str, message: &str) -> Result<(), ServiceError> {
        self.call("message/recall", &json!({ "msgid": message }))
            .await
            .map(drop)
    }

    /// The complete preview as text (split at WeCom's limit), then the buttons: the card's
    /// id is its task id.
    async fn post_card(&self, chat: &str, card: &Card) -> Result<String, ServiceError> {
        for piece in split_bytes(&card.text, WECOM_BYTES) {
            self.send_text(chat, &piece, None).await?;
        }
        let mut random = [0u8; 6];
        getrandom::fill(&mut random).map_err(|e| api_error("random", e.to_string()))?;
        let task = format!("tg_{}", hex::encode(random));
        let v = self.send(chat, template_card(card, &task)).await?;
        if let Some(code) = v["response_code"].as_str() {
            self.remember_code(&task, code);
        }
        Ok(task)
    }

    /// A decided card: its buttons replaced by how it ended (needs the response code from
    /// sending it or from the press on it; without one the card stays as it is).
    async fn update_card(
        &self,
        chat: &str,
        message: &str,
        card: &Card,
    ) -> Result<(), ServiceError> {
        if !card.rows.is_empty() {
            return Ok(());
        }
        let Some(code) = self.take_code(message) else {
            tracing::info!(task = %message, "wecom: no response code left to update this card");
            return Ok(());
        };
        let outcome: String = card
            .text
            .lines()
            .next()
            .unwrap_or("decided")
            .chars()
            .take(10)
            .collect();
        self.call(
            "message/update_template_card",
            &json!({
                "userids": [chat],
                "agentid": self.agent_id,
                "response_code": code,
                "button": { "replace_name": outcome },
            }),
        )
        .await
        .map(drop)
    }

    async fn tell(&self, to: &ReplyTo, text: &str) -> Result<(), ServiceError> {
        match to {
            ReplyTo::Message { chat, .. } => self.send_text(chat, text, None).await.map(drop),
            _ => Ok(()),
        }
    }
}
