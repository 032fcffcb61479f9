//! The agent under `toolgate serve` (R-SRV-4): conversations from any entry point — the web
//! console and its `/v1` API, an OpenAI-compatible endpoint, chat apps — run by the agent
//! loop with every tool call through the gateway as the conversation's principal.
//!
//! # Layout
//! - [`desk`]: [`Conversations`], the one door: open or find a conversation, post a message
//!   (or a command), read the journal, listen live, decide an approval from inside it.
//! - [`event`]: what a conversation's journal holds ([`Event`]).
//! - [`history`]: the model's history rebuilt from the journal, and where the turn stands.
//! - `runner`: one turn at a time per conversation, on one process at a time (a lease in the
//!   store), each model turn journaled before its calls run, so a turn interrupted anywhere
//!   continues where it stood — on this process after a restart, or on another replica.
//! - [`commands`]: `/new`, `/stop`, `/tools`, `/help`.
//! - [`live`]: what readers hear as it happens (the answer as it is written, calls).
//! - [`config`]: the `[conversations]` table.
//!
//! # Guarantees
//! - A turn's calls go through [`toolgate_gateway::Gateway::call`] with the conversation's
//!   principal, role and id as the session; approvals wait, and a decision taken while
//!   toolgate was down is found by the same call made again.
//! - A write acts at most once: each call carries the idempotency key
//!   `<conversation>:<turn>:<call id>`; a resumed turn replays what a write already did.
//! - Every message in and out is audited (`conversation.message`), redacted by the log.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

pub mod commands;
pub mod config;
pub mod desk;
pub mod error;
pub mod event;
pub mod history;
pub mod live;
mod runner;

pub use config::{ApprovalRight, ConversationsConfig};
pub use desk::{ConversationDeps, Conversations, ModelSetup, Posted, Speaker, chat_principal};
pub use error::ConversationError;
pub use event::{Entry, Event};
pub use live::Live;
pub use toolgate_store::conversations::ConversationRow;
