//! [`ChatPosts`]: which approval request was announced as which chat message. The approval
//! channels (chat bots) post each pending request to their chats and update the message
//! once it is decided; this table is what lets them announce a request exactly once across
//! restarts and across the replicas of a cluster, and find the request behind a tapped
//! message. The embedded database holds it in `approval_posts` (embedded schema 5);
//! PostgreSQL in the table of the same name (schema 11).
//!
//! # Life of a post
//! 1. A poster [`ChatPosts::claim`]s `(approval id, channel, chat)`: exactly one claimer wins
//!    and posts; the others leave it alone.
//! 2. Having posted, it [`ChatPosts::attach`]es the message's id; had posting failed, it
//!    [`ChatPosts::release`]s the claim so the next attempt can claim it at once. A poster
//!    that died between claim and attach leaves a claim without a message, which another
//!    claimer takes over once the lease has passed.
//! 3. Once the request is decided (or expired, or abandoned), [`ChatPosts::close`] marks the
//!    row with the final status: the one closer that gets `true` updates the message.
//! 4. [`ChatPosts::prune`] deletes rows closed long enough ago.
//!
//! Every step is one conditional statement (`INSERT … ON CONFLICT DO NOTHING`, an `UPDATE`
//! or `DELETE` whose `WHERE` checks the state it changes), never a read then a write, so two
//! processes or two replicas racing cannot both win.

mod postgres;
mod sqlite;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

pub use postgres::PgChatPosts;
pub use sqlite::SqliteChatPosts;

use crate::StoreResult;
use crate::clock::{Clock, millis, system_clock};

/// One approval request's message in one chat of one channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatPost {
    pub approval_id: String,
    pub channel: String,
    pub chat: String,
    /// The service's id of the message (Telegram `message_id`, Slack `ts`); `None` while it
    /// is being posted.
    pub message_ref: Option<String>,
    pub claimed_at_ms: u64,
    /// The final status word the message was updated to (`approved`, `denied`, `expired`,
    /// `abandoned`), once closed.
    pub closed: Option<String>,
    pub closed_at_ms: Option<u64>,
}

/// What a database must do for chat posts. Times come from the [`ChatPosts`] clock, so both
/// backends go by the same time; every method is one atomic step.
#[async_trait]
pub trait ChatPostBackend: Send + Sync + 'static {
    /// Inserts a new claim made at `now_ms`, or — when the row exists without a message, not
    /// closed, and claimed before `stale_before_ms` — moves its claim to `now_ms`; whether
    /// the caller now owns posting.
    async fn claim(
        &self,
        approval_id: &str,
        channel: &str,
        chat: &str,
        now_ms: u64,
        stale_before_ms: u64,
    ) -> StoreResult<bool>;
    /// Sets the row's `message_ref`; `false` when there is no such row.
    async fn attach(
        &self,
        approval_id: &str,
        channel: &str,
        chat: &str,
        message_ref: &str,
    ) -> StoreResult<bool>;
    /// Deletes the row if it has no message and is not closed.
    async fn release(&self, approval_id: &str, channel: &str, chat: &str) -> StoreResult<()>;
    /// The channel's rows not closed, oldest claim first.
    async fn open_posts(&self, channel: &str) -> StoreResult<Vec<ChatPost>>;
    /// The newest row of `chat` in `channel` whose message is `message_ref`.
    async fn by_message(
        &self,
        channel: &str,
        chat: &str,
        message_ref: &str,
    ) -> StoreResult<Option<ChatPost>>;
    /// Closes the row with `status` at `now_ms` unless it already is; whether it changed.
    async fn close(
        &self,
        approval_id: &str,
        channel: &str,
        chat: &str,
        status: &str,
        now_ms: u64,
    ) -> StoreResult<bool>;
    /// Deletes the rows closed before `closed_before_ms`; how many.
    async fn prune(&self, closed_before_ms: u64) -> StoreResult<usize>;
}

/// The chat posts of the approval channels, over either backend.
#[derive(Clone)]
pub struct ChatPosts {
    backend: Arc<dyn ChatPostBackend>,
    clock: Clock,
}

impl std::fmt::Debug for ChatPosts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatPosts").finish_non_exhaustive()
    }
}

impl ChatPosts {
    /// The embedded store: `approval_posts` in the database at `db` (created if needed).
    pub fn open(db: &Path) -> StoreResult<Self> {
        Ok(ChatPosts::with_backend(Arc::new(SqliteChatPosts::open(
            db,
        )?)))
    }

    /// Over `backend`, with the wall clock.
    pub fn with_backend(backend: Arc<dyn ChatPostBackend>) -> Self {
        ChatPosts {
            backend,
            clock: system_clock(),
        }
    }

    /// Replaces the wall clock (milliseconds since the Unix epoch).
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    fn now_ms(&self) -> u64 {
        (self.clock)()
    }

    /// Whether the caller now owns posting this message (and must post it). Inserts a new
    /// row (no message, claimed now); or, when the row exists without a message, not closed,
    /// and claimed longer than `lease` ago (a poster that died mid-post), takes it over.
    /// Atomic across processes and replicas: an insert that does nothing on conflict, then a
    /// conditional update — never a read-then-write race.
    pub async fn claim(
        &self,
        approval_id: &str,
        channel: &str,
        chat: &str,
        lease: Duration,
    ) -> StoreResult<bool> {
        let now = self.now_ms();
        let stale_before = now.saturating_sub(millis(lease));
        self.backend
            .claim(approval_id, channel, chat, now, stale_before)
            .await
    }

    /// Records the posted message's id. A [`crate::StoreError::NotFound`] when there is no
    /// such row (never claimed, or released).
    pub async fn attach(
        &self,
        approval_id: &str,
        channel: &str,
        chat: &str,
        message_ref: &str,
    ) -> StoreResult<()> {
        if self
            .backend
            .attach(approval_id, channel, chat, message_ref)
            .await?
        {
            Ok(())
        } else {
            Err(crate::StoreError::NotFound(format!(
                "no chat post of {approval_id} in {channel} chat {chat} to attach message \
                 {message_ref} to (claim it first)"
            )))
        }
    }

    /// A post that failed: removes the row if it has no message yet, so the next attempt can
    /// claim it at once. (A row already closed stays: a decided request is not announced
    /// again.)
    pub async fn release(&self, approval_id: &str, channel: &str, chat: &str) -> StoreResult<()> {
        self.backend.release(approval_id, channel, chat).await
    }

    /// The channel's rows not yet closed, oldest claim first.
    pub async fn open_posts(&self, channel: &str) -> StoreResult<Vec<ChatPost>> {
        self.backend.open_posts(channel).await
    }

    /// The row whose message is `message_ref` in `chat` of `channel`.
    pub async fn by_message(
        &self,
        channel: &str,
        chat: &str,
        message_ref: &str,
    ) -> StoreResult<Option<ChatPost>> {
        self.backend.by_message(channel, chat, message_ref).await
    }

    /// Marks the row closed with `status`; true only for the first closer. The hub closes a
    /// card once its edit went through, so a closed card is never edited by a pass again.
    pub async fn close(
        &self,
        approval_id: &str,
        channel: &str,
        chat: &str,
        status: &str,
    ) -> StoreResult<bool> {
        self.backend
            .close(approval_id, channel, chat, status, self.now_ms())
            .await
    }

    /// Deletes closed rows closed before `older_than` ago; returns how many.
    pub async fn prune(&self, older_than: Duration) -> StoreResult<usize> {
        let before = self.now_ms().saturating_sub(millis(older_than));
        self.backend.prune(before).await
    }
}
