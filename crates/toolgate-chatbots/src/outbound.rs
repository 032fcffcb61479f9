//! [`Outbound`]: what delivery, drafts and taps need from a chat service, whatever it is.
//! A conversation's chat is the service's address of where it talks: a Telegram chat id, a
//! Slack channel id, or `<channel>/<thread ts>` for a Slack thread.

use async_trait::async_trait;
use toolgate_channels::ChatService;
use toolgate_channels::card::Card;
use toolgate_channels::service::{ReplyTo, ServiceError};
use toolgate_channels::slack::SlackApi;
use toolgate_channels::telegram::TelegramApi;

use crate::text::TELEGRAM_UNITS;

/// Slack's advice for one message's text (longer ones are truncated by Slack).
pub const SLACK_CHARS: usize = 4_000;

#[async_trait]
pub trait Outbound: Send + Sync + 'static {
    /// Text per message, in the service's measure (UTF-16 code units for Telegram and Slack,
    /// bytes for WeCom).
    fn limit(&self) -> usize;
    /// `text` in pieces the service takes.
    fn pieces(&self, text: &str) -> Vec<String> {
        crate::text::split(text, self.limit())
    }
    /// Whether a sent text can be edited (a draft can show the answer as it is written).
    fn drafts(&self) -> bool {
        true
    }
    /// Plain text in `chat`, as a reply to `reply_to` where the service threads replies;
    /// the new message's id.
    async fn send_text(
        &self,
        chat: &str,
        text: &str,
        reply_to: Option<&str>,
    ) -> Result<String, ServiceError>;
    /// Replaces a sent message's text (its buttons go).
    async fn edit_text(&self, chat: &str, message: &str, text: &str) -> Result<(), ServiceError>;
    async fn delete(&self, chat: &str, message: &str) -> Result<(), ServiceError>;
    async fn post_card(&self, chat: &str, card: &Card) -> Result<String, ServiceError>;
    async fn update_card(&self, chat: &str, message: &str, card: &Card)
    -> Result<(), ServiceError>;
    /// Tells the user who tapped or typed.
    async fn tell(&self, to: &ReplyTo, text: &str) -> Result<(), ServiceError>;
}

#[async_trait]
impl Outbound for TelegramApi {
    fn limit(&self) -> usize {
        TELEGRAM_UNITS
    }

    async fn send_text(
        &self,
        chat: &str,
        text: &str,
        reply_to: Option<&str>,
    ) -> Result<String, ServiceError> {
        TelegramApi::send_text(self, chat, text, reply_to).await
    }

    async fn edit_text(&self, chat: &str, message: &str, text: &str) -> Result<(), ServiceError> {
        TelegramApi::edit_text(self, chat, message, text).await
    }

    async fn delete(&self, chat: &str, message: &str) -> Result<(), ServiceError> {
        self.delete_message(chat, message).await
    }

    async fn post_card(&self, chat: &str, card: &Card) -> Result<String, ServiceError> {
        ChatService::post(self, chat, card).await
    }

    async fn update_card(
        &self,
        chat: &str,
        message: &str,
        card: &Card,
    ) -> Result<(), ServiceError> {
        ChatService::update(self, chat, message, card).await
    }

    async fn tell(&self, to: &ReplyTo, text: &str) -> Result<(), ServiceError> {
        ChatService::tell(self, to, text).await
    }
}

/// A Slack chat: the channel, and the thread when there is one.
pub fn slack_place(chat: &str) -> (&str, Option<&str>) {
    match chat.split_once('/') {
        Some((channel, thread)) if !thread.is_empty() => (channel, Some(thread)),
        _ => (chat, None),
    }
}

#[async_trait]
impl Outbound for SlackApi {
    fn limit(&self) -> usize {
        SLACK_CHARS
    }

    async fn send_text(
        &self,
        chat: &str,
        text: &str,
        _reply_to: Option<&str>,
    ) -> Result<String, ServiceError> {
        let (channel, thread) = slack_place(chat);
        SlackApi::send_text(self, channel, thread, text).await
    }

    async fn edit_text(&self, chat: &str, message: &str, text: &str) -> Result<(), ServiceError> {
        SlackApi::edit_text(self, slack_place(chat).0, message, text).await
    }

    async fn delete(&self, chat: &str, message: &str) -> Result<(), ServiceError> {
        self.delete_message(slack_place(chat).0, message).await
    }

    async fn post_card(&self, chat: &str, card: &Card) -> Result<String, ServiceError> {
        let (channel, thread) = slack_place(chat);
        self.post_in(channel, thread, card).await
    }

    async fn update_card(
        &self,
        chat: &str,
        message: &str,
        card: &Card,
    ) -> Result<(), ServiceError> {
        ChatService::update(self, slack_place(chat).0, message, card).await
    }

    async fn tell(&self, to: &ReplyTo, text: &str) -> Result<(), ServiceError> {
        ChatService::tell(self, to, text).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slack_chat_names_its_thread() {
        assert_eq!(slack_place("C1"), ("C1", None));
        assert_eq!(
            slack_place("C1/1700000000.000100"),
            ("C1", Some("1700000000.000100"))
        );
        assert_eq!(slack_place("C1/"), ("C1/", None));
    }
}
