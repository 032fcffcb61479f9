//! A conversation's journal, handed to its chat exactly once and in order.
//!
//! # Exactly once
//! Every message the bot sends has a key in the shared record of sent messages
//! ([`toolgate_store::ChatPosts`], channel = the bot's entry): `<conversation>#<seq>#<piece>`
//! for text, the approval id for a card, `<conversation>#<turn>#draft` for the answer being
//! written. Whoever wins the key's claim sends it; a process that dies between sending and
//! recording leaves a claim that lapses after [`LEASE`], so a crash in that instant costs at
//! most one late duplicate — never one per pass. The conversation's delivery cursor
//! (`delivered_seq`) moves past an event only once everything it shows was sent, so a restart
//! or another replica goes on where the last sender stood.
//!
//! # What is sent
//! - an answer: its text, split at Telegram's limit; the draft that showed it being written
//!   is deleted first (`watch`);
//! - a turn that ended without an answer: why;
//! - a command's reply (`/help`, `/tools`, …);
//! - an approval card: the approval channels' card — the complete, redacted preview and
//!   buttons — in the conversation's chat. Once the request is decided (here, in the console,
//!   in an approval channel) the card says how it ended and loses its buttons.

use toolgate_channels::action::is_approval_id;
use toolgate_channels::card::{Card, closed_card, open_card};
use toolgate_channels::service::ServiceError;
use toolgate_conversations::{ConversationRow, Entry, Event};
use toolgate_store::approvals::ApprovalStatus;

use crate::bots::{Bots, LEASE};

/// Journal entries read per step.
const STEP: usize = 100;

/// What became of one thing to send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sent {
    /// Sent now or before (or given up on for good): go on.
    Done,
    /// Not now (rate limited, no answer, someone else is sending it): the next pass retries.
    Later,
}

/// What one key sends.
enum Payload<'a> {
    Text(&'a str),
    Card(Card),
}

/// Marks a conversation as being sent by this process while it lives.
pub(crate) struct Sending<'a> {
    bots: &'a Bots,
    id: String,
}

impl<'a> Sending<'a> {
    /// `None` when this process already sends `id`.
    pub(crate) fn take(bots: &'a Bots, id: &str) -> Option<Sending<'a>> {
        let mut sending = bots
            .sending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        sending.insert(id.to_owned()).then(|| Sending {
            bots,
            id: id.to_owned(),
        })
    }
}

impl Drop for Sending<'_> {
    fn drop(&mut self) {
        self.bots
            .sending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(&self.id);
    }
}

/// The key of the draft showing turn `reply_to` of `conversation` being written.
pub(crate) fn draft_key(conversation: &str, reply_to: u64) -> String {
    format!("{conversation}#{reply_to}#draft")
}

impl Bots {
    /// Sends what conversation `id` has not sent yet, in order, stopping at the first thing
    /// that cannot be sent now (the next pass retries it). Does nothing when this process
    /// is already sending `id`.
    pub(crate) async fn deliver(&self, index: usize, id: &str) {
        let Some(_sending) = Sending::take(self, id) else {
            return;
        };
        let entry_name = &self.bots[index].entry;
        let row = match self.conversations.row(id).await {
            Ok(Some(row)) if row.entry == *entry_name => row,
            Ok(_) => return,
            Err(e) => {
                tracing::warn!(bot = %entry_name, conversation = %id, "bots: reading the conversation failed: {e}");
                return;
            }
        };
        loop {
            let cursor = match self.conversations.delivered(id).await {
                Ok(Some(cursor)) => cursor,
                Ok(None) => return,
                Err(e) => {
                    tracing::warn!(bot = %entry_name, conversation = %id, "bots: reading the delivery cursor failed: {e}");
                    return;
                }
            };
            let entries = match self.conversations.entries(id, cursor, STEP).await {
                Ok(entries) => entries,
                Err(e) => {
                    tracing::warn!(bot = %entry_name, conversation = %id, "bots: reading the journal failed: {e}");
                    return;
                }
            };
            let Some(last) = entries.last().map(|e| e.seq) else {
                return;
            };
            for entry in &entries {
                if self.send_entry(index, &row, entry).await == Sent::Later {
                    return;
                }
                if let Err(e) = self.conversations.mark_delivered(id, entry.seq).await {
                    tracing::warn!(bot = %entry_name, conversation = %id, "bots: moving the delivery cursor failed: {e}");
                    return;
                }
            }
            if entries.len() < STEP || last == cursor {
                return;
            }
        }
    }

    async fn send_entry(&self, index: usize, row: &ConversationRow, entry: &Entry) -> Sent {
        match &entry.event {
            Event::Approval { approval_id, .. } => self.send_card(index, row, approval_id).await,
            Event::Answer { reply_to, text, .. } => {
                let text = if text.trim().is_empty() {
                    "(the model answered with no text)"
                } else {
                    text
                };
                self.send_answer(index, row, entry.seq, Some(*reply_to), text)
                    .await
            }
            Event::Failed { reply_to, message } => {
                let text = format!("⚠ No answer: {message}");
                self.send_answer(index, row, entry.seq, Some(*reply_to), &text)
                    .await
            }
            Event::Notice { text } => self.send_answer(index, row, entry.seq, None, text).await,
            Event::Prelude { .. }
            | Event::User { .. }
            | Event::Assistant { .. }
            | Event::Results { .. }
            | Event::Stop => Sent::Done,
        }
    }

    /// An answer (or a notice): the turn's draft taken down first, then the text in pieces.
    async fn send_answer(
        &self,
        index: usize,
        row: &ConversationRow,
        seq: u64,
        reply_to: Option<u64>,
        text: &str,
    ) -> Sent {
        if let Some(turn) = reply_to
            && self.retire_draft(index, row, turn).await == Sent::Later
        {
            return Sent::Later;
        }
        for (i, piece) in self.bots[index].out.pieces(text).iter().enumerate() {
            let key = format!("{}#{seq}#{i}", row.id);
            if self
                .send_once(index, &row.chat, &key, Payload::Text(piece))
                .await
                == Sent::Later
            {
                return Sent::Later;
            }
        }
        Sent::Done
    }

    /// Ends the draft of turn `turn`: a draft never posted can no longer be (its key is
    /// taken and closed); one on screen is deleted.
    async fn retire_draft(&self, index: usize, row: &ConversationRow, turn: u64) -> Sent {
        let bot = &self.bots[index];
        let key = draft_key(&row.id, turn);
        match self.posts.claim(&key, &bot.entry, &row.chat, LEASE).await {
            Ok(true) => {
                return self.close(index, &row.chat, &key, "answered").await;
            }
            Ok(false) => {}
            Err(e) => {
                tracing::warn!(bot = %bot.entry, "bots: claiming a draft failed: {e}");
                return Sent::Later;
            }
        }
        let post = match self.open_post(index, &key).await {
            Ok(post) => post,
            Err(()) => return Sent::Later,
        };
        match post.map(|p| p.message_ref) {
            // Closed already: retired before.
            None => Sent::Done,
            // Being posted right now: once it is, it is deleted.
            Some(None) => Sent::Later,
            Some(Some(message)) => {
                match bot.out.delete(&row.chat, &message).await {
                    Ok(()) => {}
                    Err(ServiceError::RateLimited {
                        retry_after_secs, ..
                    }) => {
                        self.pause(index, retry_after_secs);
                        return Sent::Later;
                    }
                    Err(ServiceError::Transport(_) | ServiceError::Unsent(_)) => {
                        return Sent::Later;
                    }
                    // Gone already, or too old to delete: it stays, the answer follows.
                    Err(e) => {
                        tracing::info!(bot = %bot.entry, "bots: a draft could not be deleted: {e}");
                    }
                }
                self.close(index, &row.chat, &key, "answered").await
            }
        }
    }

    /// The card of approval `approval_id` in the conversation's chat.
    async fn send_card(&self, index: usize, row: &ConversationRow, approval_id: &str) -> Sent {
        let request = match self.conversations.approval(approval_id).await {
            Ok(Some(r)) => r,
            Ok(None) => return Sent::Done,
            Err(e) => {
                tracing::warn!(bot = %self.bots[index].entry, approval = %approval_id, "bots: reading an approval failed: {e}");
                return Sent::Later;
            }
        };
        let pending = request.status == ApprovalStatus::Pending;
        let card = if pending {
            open_card(&request, 0)
        } else {
            closed_card(&request)
        };
        let sent = self
            .send_once(index, &row.chat, approval_id, Payload::Card(card))
            .await;
        if sent == Sent::Done && !pending {
            return self
                .close(index, &row.chat, approval_id, request.status.as_str())
                .await;
        }
        sent
    }

    /// Sends `payload` under `key` unless someone did or does; text keys are closed once
    /// sent, cards stay open until their request is decided.
    async fn send_once(&self, index: usize, chat: &str, key: &str, payload: Payload<'_>) -> Sent {
        let bot = &self.bots[index];
        if self.paused(index) {
            return Sent::Later;
        }
        match self.posts.claim(key, &bot.entry, chat, LEASE).await {
            Ok(true) => {}
            // Sent before, or being sent by someone else (then the next pass looks again).
            Ok(false) => {
                return match self.open_post(index, key).await {
                    Ok(Some(p)) if p.message_ref.is_none() => Sent::Later,
                    Ok(_) => Sent::Done,
                    Err(()) => Sent::Later,
                };
            }
            Err(e) => {
                tracing::warn!(bot = %bot.entry, "bots: claiming a message failed: {e}");
                return Sent::Later;
            }
        }
        let sent = match &payload {
            Payload::Text(text) => bot.out.send_text(chat, text, None).await,
            Payload::Card(card) => bot.out.post_card(chat, card).await,
        };
        match sent {
            Ok(message) => {
                if let Err(e) = self.posts.attach(key, &bot.entry, chat, &message).await {
                    tracing::warn!(bot = %bot.entry, "bots: recording a sent message failed: {e}");
                }
                match payload {
                    Payload::Text(_) => self.close(index, chat, key, "sent").await,
                    Payload::Card(_) => Sent::Done,
                }
            }
            // No answer: it may have been sent. The claim is kept and lapses after the
            // lease, so a lost answer costs at most one late duplicate.
            Err(e @ ServiceError::Transport(_)) => {
                tracing::warn!(bot = %bot.entry, "bots: sending got no answer, retrying after {LEASE:?}: {e}");
                Sent::Later
            }
            Err(e) => {
                let _ = self.posts.release(key, &bot.entry, chat).await;
                match e {
                    ServiceError::RateLimited {
                        retry_after_secs, ..
                    } => {
                        self.pause(index, retry_after_secs);
                        Sent::Later
                    }
                    ServiceError::Unsent(_) => Sent::Later,
                    ServiceError::Api { ref code, .. } if code.starts_with('5') => Sent::Later,
                    // The chat refuses the bot (blocked, kicked, gone) or [egress] refuses
                    // the service: retrying cannot help; the conversation goes on.
                    e => {
                        tracing::warn!(bot = %bot.entry, chat = %chat, "bots: a message could not be sent, skipped: {e}");
                        Sent::Done
                    }
                }
            }
        }
    }

    async fn close(&self, index: usize, chat: &str, key: &str, status: &str) -> Sent {
        match self
            .posts
            .close(key, &self.bots[index].entry, chat, status)
            .await
        {
            Ok(_) => Sent::Done,
            Err(e) => {
                tracing::warn!(bot = %self.bots[index].entry, "bots: recording a sent message failed: {e}");
                Sent::Later
            }
        }
    }

    /// The open record of `key` in this bot's chats.
    pub(crate) async fn open_post(
        &self,
        index: usize,
        key: &str,
    ) -> Result<Option<toolgate_store::chat::ChatPost>, ()> {
        match self.posts.open_posts(&self.bots[index].entry).await {
            Ok(posts) => Ok(posts.into_iter().find(|p| p.approval_id == key)),
            Err(e) => {
                tracing::warn!(bot = %self.bots[index].entry, "bots: reading sent messages failed: {e}");
                Err(())
            }
        }
    }

    /// Cards whose request was decided elsewhere (the console, an approval channel, another
    /// replica) or expired: updated to say how it ended.
    pub(crate) async fn refresh_cards(&self, index: usize) {
        let bot = &self.bots[index];
        let Ok(posts) = self.posts.open_posts(&bot.entry).await else {
            return;
        };
        for post in posts {
            let Some(message) = &post.message_ref else {
                continue;
            };
            if !is_approval_id(&post.approval_id) {
                continue;
            }
            match self.conversations.approval(&post.approval_id).await {
                Ok(Some(r)) if r.status == ApprovalStatus::Pending => {}
                Ok(Some(r)) => self.close_card(index, &post.chat, message, &r).await,
                Ok(None) => {
                    let _ = self
                        .posts
                        .close(&post.approval_id, &bot.entry, &post.chat, "gone")
                        .await;
                }
                Err(_) => {}
            }
        }
    }

    /// Shows how `r` ended on its card, then marks the card closed (an update that failed is
    /// tried again on the next pass).
    pub(crate) async fn close_card(
        &self,
        index: usize,
        chat: &str,
        message: &str,
        r: &toolgate_store::approvals::ApprovalRequest,
    ) {
        let bot = &self.bots[index];
        match bot.out.update_card(chat, message, &closed_card(r)).await {
            Ok(()) => {
                let _ = self
                    .posts
                    .close(&r.id, &bot.entry, chat, r.status.as_str())
                    .await;
            }
            Err(e) => {
                tracing::warn!(bot = %bot.entry, approval = %r.id, "bots: updating a card failed, will retry: {e}");
            }
        }
    }
}
