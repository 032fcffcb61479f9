//! What a conversation's readers hear as it happens, in this process: that the journal grew
//! (read it from the store: it may have grown on another replica too), the answer's text as
//! the model writes it, and a call starting or ending. Nothing here is kept; everything that
//! matters is in the journal.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use tokio::sync::broadcast;

/// How many live events a slow reader may fall behind before it skips to the journal.
const CAPACITY: usize = 256;

/// One live event.
#[derive(Debug, Clone, PartialEq)]
pub enum Live {
    /// The journal has an event numbered `seq`.
    Journal { seq: u64 },
    /// More of the answer's text.
    Delta { reply_to: u64, text: String },
    /// A call started (`ok` is `None`) or ended.
    Tool {
        reply_to: u64,
        call_id: String,
        name: String,
        ok: Option<bool>,
    },
}

/// The live channels of the conversations someone listens to.
#[derive(Default)]
pub(crate) struct LiveHub {
    channels: Mutex<HashMap<String, broadcast::Sender<Live>>>,
}

impl LiveHub {
    pub(crate) fn subscribe(&self, id: &str) -> broadcast::Receiver<Live> {
        let mut channels = self.channels.lock().unwrap_or_else(PoisonError::into_inner);
        // Channels nobody listens to any more are dropped as others are made.
        channels.retain(|_, tx| tx.receiver_count() > 0);
        channels
            .entry(id.to_owned())
            .or_insert_with(|| broadcast::channel(CAPACITY).0)
            .subscribe()
    }

    pub(crate) fn send(&self, id: &str, event: Live) {
        let channels = self.channels.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(tx) = channels.get(id) {
            let _ = tx.send(event);
        }
    }
}
