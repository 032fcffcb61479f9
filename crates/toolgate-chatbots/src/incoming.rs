//! What arrives from a chat service, service-neutral: a text message for the bot, or a
//! button pressed on one of its messages.

use toolgate_channels::service::ReplyTo;

/// A text message for the bot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatMessage {
    pub chat: String,
    pub private: bool,
    /// This message's id (answers reply to it in groups).
    pub message: String,
    pub user: String,
    pub user_name: Option<String>,
    /// The text, the bot's `@name` taken out.
    pub text: String,
    /// The bot's message this one replies to, if it replies to one.
    pub reply_to: Option<String>,
}

/// A button pressed on one of the bot's messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ButtonPress {
    pub chat: String,
    pub message: String,
    pub user: String,
    pub user_name: Option<String>,
    pub data: String,
    /// What was typed in the card's confirmation box (Slack), if anything.
    pub typed: Option<String>,
    /// How the presser is answered (Telegram's callback answer, Slack's ephemeral message).
    pub reply: ReplyTo,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Incoming {
    Message(ChatMessage),
    Button(ButtonPress),
}
