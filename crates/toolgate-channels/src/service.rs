//! [`ChatService`]: what the hub needs from a chat service — post a card, update it, tell one
//! user something, and say whether the token and a chat work (`toolgate doctor`). Telegram
//! and Slack implement it; what arrives from them becomes a [`Tap`].

use async_trait::async_trait;

use crate::card::Card;

/// Why a request to the service failed. Never holds the token (Telegram's is in the URL
/// path, so transport errors are stripped of their URL).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ServiceError {
    /// Never sent (no connection could be made): worth retrying at once.
    #[error("{0}")]
    Unsent(String),
    /// Sent, but no answer came (connection lost, timeout): the service may have acted on it.
    #[error("{0}")]
    Transport(String),
    /// `[egress]` refused the address: retrying cannot help.
    #[error("refused by [egress]: {0}")]
    Egress(String),
    /// The service asks to slow down (Telegram's flood control, Slack's rate limits): nothing
    /// was done; try again after this many seconds.
    #[error("{service} asks to retry after {retry_after_secs} s (rate limited)")]
    RateLimited {
        service: &'static str,
        retry_after_secs: u64,
    },
    /// The service answered with an error.
    #[error("{service} answered {code}: {description}")]
    Api {
        service: &'static str,
        code: String,
        description: String,
    },
}

impl ServiceError {
    /// From a reqwest error: egress refusals apart, and the URL (which may hold the token)
    /// removed.
    pub fn from_reqwest(e: reqwest::Error) -> ServiceError {
        if let Some(refusal) = toolgate_net::egress_refusal(&e) {
            return ServiceError::Egress(refusal.to_string());
        }
        let e = e.without_url();
        let mut text = e.to_string();
        let mut cause = std::error::Error::source(&e);
        while let Some(c) = cause {
            text.push_str(": ");
            text.push_str(&c.to_string());
            cause = c.source();
        }
        if e.is_connect() {
            ServiceError::Unsent(text)
        } else {
            ServiceError::Transport(text)
        }
    }
}

/// How to answer the user who tapped or typed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplyTo {
    /// Telegram: answer the callback query (a toast or alert on the tapper's screen).
    Callback(String),
    /// Telegram: a reply to the user's message in the chat.
    Message { chat: String, message: String },
    /// Slack: a message only `user` sees in `chat`.
    Ephemeral { chat: String, user: String },
}

/// What the user did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TapInput {
    /// A button, with what was typed in the card's confirmation box (Slack) if anything.
    Button { data: String, typed: Option<String> },
    /// A text reply to a card (Telegram): the typed confirmation.
    Reply { text: String },
}

/// One tap or reply from a chat user, service-neutral.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tap {
    /// The chat the card is in.
    pub chat: String,
    /// The card's message id in that chat.
    pub message: String,
    /// The chat user's id (what `operators` maps).
    pub user: String,
    /// Their display name, for messages and the audit (never trusted for anything).
    pub user_name: Option<String>,
    pub input: TapInput,
    pub reply: ReplyTo,
}

/// One chat service.
#[async_trait]
pub trait ChatService: Send + Sync + 'static {
    /// Posts `card` in `chat`; the new message's id.
    async fn post(&self, chat: &str, card: &Card) -> Result<String, ServiceError>;
    /// Replaces the message's text and buttons with `card`'s.
    async fn update(&self, chat: &str, message: &str, card: &Card) -> Result<(), ServiceError>;
    /// Tells the user who tapped.
    async fn tell(&self, to: &ReplyTo, text: &str) -> Result<(), ServiceError>;
    /// The bot's own name if the token is accepted.
    async fn whoami(&self) -> Result<String, ServiceError>;
    /// The chat's title if the bot can reach it.
    async fn chat_title(&self, chat: &str) -> Result<String, ServiceError>;
}
