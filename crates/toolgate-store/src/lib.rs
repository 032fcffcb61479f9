//! Durable state of toolgate, embedded by default: one data directory holding
//!
//! ```text
//! <data dir>/
//!   logs/tool-audit.jsonl   the append-only, hash-chained audit log (source of truth)
//!   toolgate.db             SQLite: audit index, approvals, grants, idempotency keys,
//!                           pinned tool definitions, MCP OAuth credentials (0600)
//!   results/                offloaded oversized results, paged by `read_result`
//! ```
//!
//! # Layout
//! - [`redact`]: masking of secrets and hashing of long values before anything is written.
//! - [`audit`]: [`AuditLog`] (group-committed JSONL chain + SQLite index), `verify`, queries.
//! - [`approvals`]: [`ApprovalStore`] — pending approvals and standing grants.
//! - [`results`]: [`ResultStore`] — offloaded results.
//! - [`idempotency`]: [`IdempotencyStore`] — results of write calls by idempotency key.
//! - [`pins`]: [`PinStore`] — pinned tool definitions and pending changes (R-REG-5).
//! - [`credentials`]: [`CredentialStore`] — OAuth credentials of MCP servers (R-MCP-3).
//! - [`db`]: the shared SQLite connection settings.
//! - [`pg`]: the PostgreSQL backend's pool, schema migrations and `LISTEN`/`NOTIFY` feed.
//! - [`sessions`]: [`sessions::PgSessions`], MCP sessions any replica can continue.
//! - [`quotas`]: quota buckets (GCRA) in memory, or in PostgreSQL for a whole cluster.
//! - [`tokens`]: [`TokenStore`] — the bearer tokens toolgate issued (hashes only).
//! - [`chat`]: [`ChatPosts`] — which approval request the chat channels posted as which
//!   message, so each is announced once across restarts and replicas.
//! - [`changes`]: [`changes::ChangeFeed`], what changed, so waiters re-read at once.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used))]

pub mod approvals;
pub mod audit;
pub mod changes;
pub mod chat;
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
pub mod sessions;
pub mod tokens;

pub use approvals::ApprovalStore;
pub use audit::AuditLog;
pub use chat::ChatPosts;
pub use credentials::{CredentialRecord, CredentialSecret, CredentialStore};
pub use error::{StoreError, StoreResult};
pub use idempotency::IdempotencyStore;
pub use pins::PinStore;
pub use results::ResultStore;
pub use tokens::TokenStore;
