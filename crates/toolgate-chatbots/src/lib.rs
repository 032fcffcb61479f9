//! Chat apps as entry points to the agent (`[[bots]]`): Telegram, Slack and WeCom bots whose
//! chats are conversations of [`toolgate_conversations`] — Telegram private chats, and groups
//! when the bot is mentioned or replied to; Slack direct messages, and channel threads started
//! by a mention; a WeCom application's chat with each member.
//!
//! - [`config`]: the table; [`directory`]: what a mapped principal may do now.
//! - [`bots`]: [`Bots`] — each bot's listener and the delivery loop; `hooks`: what Telegram
//!   (webhook mode) and Slack (events, interactions) POST to `toolgate serve`.
//! - [`outbound`]: one trait over what is sent (Telegram's Bot API, Slack's Web API);
//!   [`incoming`]: what arrives, service-neutral; [`slack`]: Slack's requests understood;
//!   [`wecom`]: WeCom's callback crypto, messages and server API.
//! - `speak`: a message → who is talking → their conversation.
//! - `deliver`: the journal → the chat, exactly once and in order (answers split at the
//!   service's limit, approval cards with the channels' complete, redacted preview).
//! - `watch`: the answer as it is written, shown in a draft edited at a pace the service
//!   tolerates.
//! - `taps`: a card's buttons and typed replies → a decision inside the conversation.
//! - [`text`]: splitting at the limit; [`telegram`]: updates understood.
//!
//! Everything sent goes through `toolgate_net` under `[egress]`; secrets come only from the
//! environment. No OAuth code or token is ever sent to a chat.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

pub mod bots;
pub mod config;
mod deliver;
pub mod directory;
pub mod doctor;
mod hooks;
pub mod incoming;
pub mod outbound;
pub mod slack;
mod speak;
mod taps;
pub mod telegram;
pub mod text;
mod watch;
pub mod wecom;

pub use bots::{Bots, BotsDeps, BotsError};
pub use config::BotConfig;
pub use directory::{Directory, Standing};
