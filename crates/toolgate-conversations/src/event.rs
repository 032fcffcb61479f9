//! What a conversation's journal holds: one [`Event`] per entry, stored as JSON under its
//! `kind`. The journal is the conversation: a turn's model request is rebuilt from it
//! ([`crate::history`]), readers stream it, and an interrupted turn continues from it.

use serde::{Deserialize, Serialize};
use toolgate_agent::{AssistantTurn, Message, ToolResult};
use toolgate_store::conversations::JournalEvent;

/// One entry of a conversation's journal. Events of a turn name the user's message they
/// answer (`reply_to`, that message's `seq`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Event {
    /// What the conversation starts from, brought by its client (the OpenAI-compatible
    /// endpoint's earlier messages): the head of the model's history.
    Prelude { messages: Vec<Message> },
    /// A user's message, queued for its turn.
    User {
        text: String,
        /// The sender as the entry point names them.
        from: String,
        /// The role the sender holds now (their token's, their mapping's): the turn answering
        /// this message runs with it, never with a role the conversation was started with.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        role: Option<String>,
    },
    /// A model turn, kept before any of its calls runs.
    Assistant { reply_to: u64, turn: AssistantTurn },
    /// The results of the preceding turn's calls, in the calls' order.
    Results {
        reply_to: u64,
        results: Vec<ToolResult>,
    },
    /// A call waits for a human decision; the card in the conversation.
    Approval {
        reply_to: u64,
        call_id: String,
        tool: String,
        approval_id: String,
        /// A dangerous tool: approving needs its name typed.
        requires_confirmation: bool,
    },
    /// The turn's answer: the turn is done.
    Answer {
        reply_to: u64,
        text: String,
        /// Why the model stopped (`end_turn`, `max_tokens`, `refusal`, …).
        stop: String,
    },
    /// The turn ended without an answer (stopped, the model failed, the step limit): done.
    Failed { reply_to: u64, message: String },
    /// `/stop` asked on a process that does not run the turn; its runner stops it.
    Stop,
    /// A reply of toolgate's own (a command's answer).
    Notice { text: String },
}

impl Event {
    /// The journal's `kind` column.
    pub fn kind(&self) -> &'static str {
        match self {
            Event::Prelude { .. } => "prelude",
            Event::User { .. } => "user",
            Event::Assistant { .. } => "assistant",
            Event::Results { .. } => "results",
            Event::Approval { .. } => "approval",
            Event::Answer { .. } => "answer",
            Event::Failed { .. } => "failed",
            Event::Stop => "stop",
            Event::Notice { .. } => "notice",
        }
    }

    /// The user's message this event belongs to the turn of.
    pub fn reply_to(&self) -> Option<u64> {
        match self {
            Event::Assistant { reply_to, .. }
            | Event::Results { reply_to, .. }
            | Event::Approval { reply_to, .. }
            | Event::Answer { reply_to, .. }
            | Event::Failed { reply_to, .. } => Some(*reply_to),
            Event::Prelude { .. } | Event::User { .. } | Event::Stop | Event::Notice { .. } => None,
        }
    }

    /// The body stored in the journal.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|e| {
            // Only strings and numbers: encoding cannot fail; say so if it ever does.
            format!(r#"{{"kind":"notice","text":"an event could not be encoded: {e}"}}"#)
        })
    }
}

/// A journal entry read back: its number, when, and what.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub seq: u64,
    pub at_ms: u64,
    pub event: Event,
}

impl Entry {
    /// Reads a stored event; one that no longer parses (a newer toolgate's kind) becomes a
    /// notice saying so, so a reader never stops at it.
    pub fn from_journal(e: &JournalEvent) -> Entry {
        let event = serde_json::from_str(&e.body).unwrap_or_else(|err| Event::Notice {
            text: format!(
                "(journal entry {} of kind `{}` is unreadable: {err})",
                e.seq, e.kind
            ),
        });
        Entry {
            seq: e.seq,
            at_ms: e.at_ms,
            event,
        }
    }
}
