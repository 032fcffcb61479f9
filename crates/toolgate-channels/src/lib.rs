//! Approval channels (`[[approvals.channels]]`): pending approval requests announced where
//! the operators are — Telegram and Slack — with the console's complete, redacted preview,
//! decided there by chat users mapped to operator principals, and recorded with the
//! principal and the channel. Exactly once across chats, the console, restarts and replicas
//! (see [`approval_channels`]).
//!
//! - [`config`]: the table; secrets only as environment variable names ([`secret`]).
//! - [`card`]: what a message shows; [`action`]: what its buttons carry.
//! - [`service`]: the [`ChatService`] trait; [`telegram`] and [`slack`] implement it.
//! - [`approval_channels`]: [`ApprovalChannels`], the reconciling loop; `decide`: a tap → a decision;
//!   [`hooks`]: what the services POST to `toolgate serve`.
//! - [`doctor`]: each channel's token and chats checked.
//!
//! Every request to a service goes through `toolgate_net` under `[egress]`. Nothing here
//! ever sends an OAuth code or token to a chat: cards carry only the approval request.

#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)
)]

pub mod action;
pub mod approval_channels;
pub mod card;
mod channel;
pub mod config;
pub mod confirm;
mod decide;
pub mod doctor;
mod error;
pub mod hooks;
pub mod operators;
pub mod recorded;
pub mod secret;
pub mod select;
pub mod service;
pub mod slack;
pub mod telegram;

pub use approval_channels::{ApprovalChannels, ChannelsDeps, ChannelsError};
pub use config::{ChannelConfig, ChannelKind, UpdateMode};
pub use hooks::{HookAnswer, HookRefusal};
pub use operators::OperatorCheck;
pub use service::ChatService;
