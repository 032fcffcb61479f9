//! Telegram's Bot API: cards are `sendMessage`s with an inline keyboard, decided cards are
//! edited with `editMessageText`, a tap is a `callback_query` answered with
//! `answerCallbackQuery`, and the typed confirmation is a text reply to the card. Updates
//! arrive by `getUpdates` long polling ([`poll`]) or by a webhook on `toolgate serve`
//! (`POST /hooks/telegram/<channel>`, checked against the secret token Telegram echoes).
//!
//! Text is sent without `parse_mode`: nothing in a request can format the message.

mod api;
pub mod poll;
pub mod updates;

pub use api::TelegramApi;
