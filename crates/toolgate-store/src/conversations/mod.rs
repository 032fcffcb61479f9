//! [`ConversationStore`]: the agent's conversations under `toolgate serve` — who talks (entry
//! point, chat, user → principal and role), and a journal of everything that happened in
//! them, in order. The embedded database holds them in `conversations` and
//! `conversation_events` (embedded schema 6); PostgreSQL in the tables of the same names
//! (schema 13).
//!
//! # The journal
//! Every conversation has a sequence of events numbered from 1 (`seq`): a user's message, a
//! model turn, the results of its tool calls, an approval asked, the answer, a notice. The
//! journal is the conversation's history (a turn's model request is rebuilt from it), what a
//! reader streams from any point (`after_seq`), and what lets a turn interrupted by a crash
//! continue where it stood: a model turn is journaled before its tools run.
//!
//! # Who runs a turn
//! One runner at a time per conversation, on any process or replica: a runner
//! [`ConversationStore::claim`]s the conversation for a lease and renews it while it works;
//! its appends name it and are refused once its lease has passed or another holds it
//! (fencing), so a runner that stalled past its lease cannot write into a turn another has
//! taken over. A user's message sets `pending`; the runner [`settle`](ConversationStore::settle)s
//! it only when nothing was appended since it last read the journal. Conversations pending
//! without a live runner are [`unattended`](ConversationStore::unattended): a sweeper takes
//! them over.
//!
//! Every step is one statement or one transaction whose `WHERE` checks the state it changes,
//! so two processes or replicas racing cannot both win.

mod postgres;
mod sqlite;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

pub use postgres::PgConversations;
pub use sqlite::SqliteConversations;

use crate::StoreResult;
use crate::clock::{Clock, millis, system_clock};

/// One conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConversationRow {
    pub id: String,
    /// The entry point: `web`, `openai`, `telegram:<channel>`, ….
    pub entry: String,
    /// The chat (and thread) in the entry point; the conversation's own id for the web.
    pub chat: String,
    /// The user as the entry point names them.
    pub user_ref: String,
    pub principal: String,
    pub role: String,
    /// The first words of the first message (empty before it).
    pub title: String,
    pub created_at_ms: u64,
    pub updated_at_ms: u64,
    /// Set when the conversation was ended (`/new`); its chat's next message opens another.
    pub closed_at_ms: Option<u64>,
    /// The newest event's number (0: none yet).
    pub last_seq: u64,
    /// Who runs its turns now, and until when (milliseconds since the epoch).
    pub runner: Option<String>,
    pub lease_until_ms: u64,
    /// A message arrived that no runner has settled yet.
    pub pending: bool,
}

/// What a new conversation starts with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewConversation {
    pub id: String,
    pub entry: String,
    pub chat: String,
    pub user_ref: String,
    pub principal: String,
    pub role: String,
}

/// One event of a conversation's journal; `body` is JSON the layer above defines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournalEvent {
    pub conversation: String,
    pub seq: u64,
    pub kind: String,
    pub body: String,
    pub at_ms: u64,
}

/// An event to append.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Append<'a> {
    pub kind: &'a str,
    pub body: &'a str,
    /// The runner the append is made for: refused unless it holds a live lease. `None` for a
    /// user's message (anyone may add one).
    pub runner: Option<&'a str>,
    /// Marks the conversation as having work for a runner (a user's message): refused once
    /// the conversation is closed.
    pub marks_pending: bool,
    /// Becomes the conversation's title if it has none yet.
    pub title: Option<&'a str>,
}

/// What a database must do for conversations. Times come from the [`ConversationStore`]
/// clock, so both backends go by the same time.
#[async_trait]
pub trait ConversationBackend: Send + Sync + 'static {
    /// Inserts `new` unless `(entry, chat, user_ref)` already has an open conversation;
    /// returns the open one either way.
    async fn open(&self, new: &NewConversation, now_ms: u64) -> StoreResult<ConversationRow>;
    async fn get(&self, id: &str) -> StoreResult<Option<ConversationRow>>;
    /// The newest first; only `principal`'s when given.
    async fn list(
        &self,
        principal: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<ConversationRow>>;
    /// Ends the conversation; whether it was open.
    async fn close(&self, id: &str, now_ms: u64) -> StoreResult<bool>;
    /// Appends one event; its number, or `None` when `append.runner` does not hold the lease
    /// at `now_ms`, a user's message finds the conversation closed, or there is no such
    /// conversation.
    async fn append(&self, id: &str, append: Append<'_>, now_ms: u64) -> StoreResult<Option<u64>>;
    /// Events numbered after `after_seq`, oldest first, at most `limit`.
    async fn events(
        &self,
        id: &str,
        after_seq: u64,
        limit: usize,
    ) -> StoreResult<Vec<JournalEvent>>;
    /// Takes (or renews) the lease for `runner` until `until_ms`, when nobody else holds a
    /// live one at `now_ms`; whether `runner` holds it now.
    async fn claim(&self, id: &str, runner: &str, now_ms: u64, until_ms: u64) -> StoreResult<bool>;
    /// Gives the lease up if `runner` holds it.
    async fn release(&self, id: &str, runner: &str) -> StoreResult<()>;
    /// Clears `pending` and gives the lease up, if `runner` holds it and nothing was appended
    /// after `through_seq`; whether it did.
    async fn settle(&self, id: &str, runner: &str, through_seq: u64) -> StoreResult<bool>;
    /// Conversations pending whose lease has passed (or that have none), oldest first.
    async fn unattended(&self, now_ms: u64, limit: usize) -> StoreResult<Vec<String>>;
    /// How many of `principal`'s conversations have a message not yet settled.
    async fn busy(&self, principal: &str) -> StoreResult<usize>;
    /// Moves the delivery cursor forward to `seq` (never back); whether it moved.
    async fn mark_delivered(&self, id: &str, seq: u64) -> StoreResult<bool>;
    /// The delivery cursor of `id`, if it exists.
    async fn delivered(&self, id: &str) -> StoreResult<Option<u64>>;
    /// Conversations of `entry` with events past their delivery cursor, least recently
    /// updated first: (id, cursor).
    async fn undelivered(&self, entry: &str, limit: usize) -> StoreResult<Vec<(String, u64)>>;
}

/// The conversations of `toolgate serve`, over either backend.
#[derive(Clone)]
pub struct ConversationStore {
    backend: Arc<dyn ConversationBackend>,
    clock: Clock,
}

impl std::fmt::Debug for ConversationStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConversationStore").finish_non_exhaustive()
    }
}

impl ConversationStore {
    /// Over `backend`, with the wall clock.
    pub fn with_backend(backend: Arc<dyn ConversationBackend>) -> Self {
        ConversationStore {
            backend,
            clock: system_clock(),
        }
    }

    /// Replaces the wall clock (milliseconds since the Unix epoch).
    #[must_use]
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// The store's time now.
    pub fn now_ms(&self) -> u64 {
        (self.clock)()
    }

    /// The open conversation of `(entry, chat, user_ref)`, made from `new` if there is none.
    pub async fn open(&self, new: &NewConversation) -> StoreResult<ConversationRow> {
        self.backend.open(new, self.now_ms()).await
    }

    pub async fn get(&self, id: &str) -> StoreResult<Option<ConversationRow>> {
        self.backend.get(id).await
    }

    /// The newest conversations first, only `principal`'s when given.
    pub async fn list(
        &self,
        principal: Option<&str>,
        limit: usize,
    ) -> StoreResult<Vec<ConversationRow>> {
        self.backend.list(principal, limit).await
    }

    /// Ends the conversation (its chat's next message opens a new one).
    pub async fn close(&self, id: &str) -> StoreResult<bool> {
        self.backend.close(id, self.now_ms()).await
    }

    /// Appends an event; its number, or `None` when the runner named has lost its lease.
    pub async fn append(&self, id: &str, append: Append<'_>) -> StoreResult<Option<u64>> {
        self.backend.append(id, append, self.now_ms()).await
    }

    /// Events after `after_seq`, oldest first, at most `limit`.
    pub async fn events(
        &self,
        id: &str,
        after_seq: u64,
        limit: usize,
    ) -> StoreResult<Vec<JournalEvent>> {
        self.backend.events(id, after_seq, limit).await
    }

    /// Takes or renews the lease for `runner` for `lease`; whether it holds it.
    pub async fn claim(&self, id: &str, runner: &str, lease: Duration) -> StoreResult<bool> {
        let now = self.now_ms();
        self.backend
            .claim(id, runner, now, now.saturating_add(millis(lease)))
            .await
    }

    pub async fn release(&self, id: &str, runner: &str) -> StoreResult<()> {
        self.backend.release(id, runner).await
    }

    /// Clears `pending` and gives the lease up, in one step, if nothing was appended after
    /// `through_seq` and `runner` holds the lease; whether it did (if not, read the journal
    /// again).
    pub async fn settle(&self, id: &str, runner: &str, through_seq: u64) -> StoreResult<bool> {
        self.backend.settle(id, runner, through_seq).await
    }

    /// Conversations with work and no live runner.
    pub async fn unattended(&self, limit: usize) -> StoreResult<Vec<String>> {
        self.backend.unattended(self.now_ms(), limit).await
    }

    /// How many of `principal`'s conversations are busy (a message waits for, or is in, its
    /// turn), across every process and replica.
    pub async fn busy(&self, principal: &str) -> StoreResult<usize> {
        self.backend.busy(principal).await
    }

    /// Records that a chat app has been handed every event through `seq` (the cursor only
    /// moves forward, so a late writer never undoes a later one); whether it moved.
    pub async fn mark_delivered(&self, id: &str, seq: u64) -> StoreResult<bool> {
        self.backend.mark_delivered(id, seq).await
    }

    /// The last event of `id` handed to its chat app (0: none), if `id` exists.
    pub async fn delivered(&self, id: &str) -> StoreResult<Option<u64>> {
        self.backend.delivered(id).await
    }

    /// The conversations of `entry` with events not yet handed to their chat app, least
    /// recently updated first, with their cursors.
    pub async fn undelivered(&self, entry: &str, limit: usize) -> StoreResult<Vec<(String, u64)>> {
        self.backend.undelivered(entry, limit).await
    }
}
