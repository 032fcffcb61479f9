//! Durable state of toolgate, embedded by default: one data directory holding
//!
//! ```text
//! <data dir>/
//!   logs/tool-audit.jsonl   the append-only, hash-chained audit log (`toolgate-audit`)
//!   toolgate.db             SQLite: approvals, grants, idempotency keys, pinned tool
//!                           definitions, quota buckets, issued tokens, chat posts,
//!                           conversations, MCP OAuth credentials (0600), and the audit
//!                           log's index
//!   results/                offloaded oversized results, paged by `read_result`
//! ```
//!
//! # Layout
//! - [`backend`]: [`Store`], the one door — opened once per process from a
//!   [`StoreLocation`], it gives every store below on either backend.
//! - [`redact`]: masking of secrets and hashing of long values before anything is written.
//! - [`approvals`]: [`ApprovalStore`] — pending approvals and standing grants.
//! - [`results`]: [`ResultStore`] — offloaded results.
//! - [`idempotency`]: [`IdempotencyStore`] — results of write calls by idempotency key.
//! - [`pins`]: [`PinStore`] — pinned tool definitions and pending changes (R-REG-5).
//! - [`credentials`]: [`CredentialStore`] — OAuth credentials of MCP servers (R-MCP-3).
//! - [`db`]: [`db::EmbeddedDb`], the embedded database's connection pool; [`schema`]: every
//!   embedded table, created once when the pool opens.
//! - [`clock`]: the wall clock the stores read, replaceable in tests.
//! - [`pg`]: the PostgreSQL backend's pool, schema migrations and `LISTEN`/`NOTIFY` feed.
//! - [`sessions`]: [`sessions::PgSessions`], MCP sessions any replica can continue.
//! - [`quotas`]: quota buckets (GCRA) in memory, or in PostgreSQL for a whole cluster.
//! - [`tokens`]: [`TokenStore`] — the bearer tokens toolgate issued (hashes only).
//! - [`chat`]: [`ChatPosts`] — which approval request the chat channels posted as which
//!   message, so each is announced once across restarts and replicas.
//! - [`conversations`]: [`ConversationStore`] — the agent's conversations under `toolgate
//!   serve` and their journals, one runner at a time.
//! - [`changes`]: [`changes::ChangeFeed`], what changed, so waiters re-read at once.

// The one crate that opens databases (clippy.toml `disallowed-methods`).
#![allow(clippy::disallowed_methods)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

pub mod approvals;
pub mod backend;
pub mod changes;
pub mod chat;
pub mod clock;
pub mod conversations;
pub mod credentials;
pub mod db;
pub mod error;
pub mod idempotency;
pub mod pg;
pub mod pins;
pub mod quotas;
/// The redactor, which lives below storage (`toolgate-redact`, no IO).
pub use toolgate_redact as redact;
pub mod results;
pub mod schema;
pub mod sessions;
pub mod tokens;

pub use approvals::ApprovalStore;
pub use backend::{PgBackend, Store, StoreLocation};
pub use chat::ChatPosts;
pub use clock::{Clock, millis, system_clock};
pub use conversations::ConversationStore;
pub use credentials::{CredentialRecord, CredentialSecret, CredentialStore};
pub use error::{StoreError, StoreResult};
pub use idempotency::IdempotencyStore;
pub use pins::PinStore;
pub use results::ResultStore;
pub use tokens::TokenStore;
