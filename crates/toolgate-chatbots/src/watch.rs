//! The answer as it is written: while this process runs a conversation's turn, its live
//! events become a draft message — the text so far and the tool running — edited at most
//! every [`EDIT_EVERY`], a pace the Bot API tolerates. The draft is a preview: when the
//! answer is journaled it is deleted and the answer sent as messages of its own
//! (`deliver`), so a draft can never stand in for, or overwrite, an answer.
//!
//! Each journal event also hands the conversation to delivery at once instead of at the next
//! pass. A watch ends after [`IDLE`] without events; the delivery loop covers the rest.

use std::collections::BTreeMap;
use std::sync::{Arc, PoisonError};
use std::time::Duration;

use tokio::sync::broadcast::error::RecvError;
use tokio::time::Instant;
use toolgate_channels::service::ServiceError;
use toolgate_conversations::Live;

use crate::bots::{Bots, LEASE};
use crate::deliver::{Sending, draft_key};
use crate::text::head;

/// The least time between two edits of a draft.
pub const EDIT_EVERY: Duration = Duration::from_millis(1_500);
/// A watch with nothing to relay for this long ends.
const IDLE: Duration = Duration::from_secs(120);
/// A draft shows at most this much (the answer itself is split, not cut).
const DRAFT_UNITS: usize = 3_500;

/// One turn's draft.
#[derive(Default)]
struct Draft {
    text: String,
    /// The tool running now.
    running: Option<String>,
    message: Option<String>,
    /// Changed since last shown.
    dirty: bool,
    /// Gone for good (answered, or its key taken): never shown again.
    done: bool,
}

impl Draft {
    fn shown(&self) -> String {
        let mut text = head(self.text.trim_end(), DRAFT_UNITS);
        if let Some(tool) = &self.running {
            if !text.is_empty() {
                text.push_str("\n\n");
            }
            text.push_str(&format!("⚙ {tool} …"));
        }
        if text.is_empty() {
            text.push('…');
        } else {
            text.push_str(" ▍");
        }
        text
    }
}

/// Stops watching a conversation when the watch ends.
struct Watching {
    bots: Arc<Bots>,
    id: String,
}

impl Drop for Watching {
    fn drop(&mut self) {
        self.bots
            .watching
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.id);
    }
}

impl Bots {
    /// Relays conversation `id`'s live events to its chat, unless this process already
    /// does; delivers what its journal holds now.
    pub(crate) fn watch(self: &Arc<Self>, index: usize, id: &str) {
        {
            let mut watching = self.watching.lock().unwrap_or_else(PoisonError::into_inner);
            if !watching.insert(id.to_owned()) {
                drop(watching);
                let hub = Arc::clone(self);
                let id = id.to_owned();
                tokio::spawn(async move { hub.deliver(index, &id).await });
                return;
            }
        }
        let hub = Arc::clone(self);
        let id = id.to_owned();
        tokio::spawn(async move {
            let _watching = Watching {
                bots: Arc::clone(&hub),
                id: id.clone(),
            };
            hub.relay(index, &id).await;
        });
    }

    async fn relay(&self, index: usize, id: &str) {
        let mut live = self.conversations.listen(id);
        self.deliver(index, id).await;
        let chat = match self.conversations.row(id).await {
            Ok(Some(row)) => row.chat,
            _ => return,
        };
        // A service that cannot edit a message (WeCom) shows no draft: only the journal.
        let drafting = self.bots[index].out.drafts();
        let mut drafts: BTreeMap<u64, Draft> = BTreeMap::new();
        let mut next_edit = Instant::now();
        let mut idle_until = Instant::now() + IDLE;
        loop {
            let dirty = drafts.values().any(|d| d.dirty && !d.done);
            let wake = if dirty { next_edit } else { idle_until };
            tokio::select! {
                () = self.stop.cancelled() => return,
                () = tokio::time::sleep_until(wake) => {
                    if !dirty {
                        return;
                    }
                }
                event = live.recv() => {
                    idle_until = Instant::now() + IDLE;
                    match event {
                        Ok(Live::Journal { .. }) => {
                            // What is on the draft now is shown before the journal moves on.
                            self.show(index, &chat, id, &mut drafts).await;
                            self.deliver(index, id).await;
                            continue;
                        }
                        Ok(Live::Delta { .. } | Live::Tool { .. }) if !drafting => continue,
                        Ok(Live::Delta { reply_to, text }) => {
                            let draft = drafts.entry(reply_to).or_default();
                            draft.text.push_str(&text);
                            draft.dirty = true;
                        }
                        Ok(Live::Tool { reply_to, name, ok, .. }) => {
                            let draft = drafts.entry(reply_to).or_default();
                            draft.running = ok.is_none().then_some(name);
                            draft.dirty = true;
                        }
                        Err(RecvError::Lagged(_)) => continue,
                        Err(RecvError::Closed) => return,
                    }
                    if Instant::now() < next_edit {
                        continue;
                    }
                }
            }
            self.show(index, &chat, id, &mut drafts).await;
            next_edit = Instant::now() + EDIT_EVERY;
        }
    }

    /// Shows every changed draft, unless this process is sending the conversation now (an
    /// answer being sent retires its draft; a draft edited meanwhile would linger).
    async fn show(&self, index: usize, chat: &str, id: &str, drafts: &mut BTreeMap<u64, Draft>) {
        let Some(_sending) = Sending::take(self, id) else {
            return;
        };
        let bot = &self.bots[index];
        if self.paused(index) {
            return;
        }
        for (turn, draft) in drafts.iter_mut() {
            if !draft.dirty || draft.done {
                continue;
            }
            draft.dirty = false;
            let key = draft_key(id, *turn);
            let text = draft.shown();
            let shown = match &draft.message {
                None => match self.posts.claim(&key, &bot.entry, chat, LEASE).await {
                    Ok(true) => match bot.out.send_text(chat, &text, None).await {
                        Ok(message) => {
                            let _ = self.posts.attach(&key, &bot.entry, chat, &message).await;
                            draft.message = Some(message);
                            Ok(())
                        }
                        Err(e) => {
                            if !matches!(e, ServiceError::Transport(_)) {
                                let _ = self.posts.release(&key, &bot.entry, chat).await;
                            }
                            Err(e)
                        }
                    },
                    // Answered (the key is closed) or drafted elsewhere: not ours to show.
                    Ok(false) => {
                        draft.done = true;
                        Ok(())
                    }
                    Err(_) => Ok(()),
                },
                Some(message) => {
                    // Still a draft? (Answered here or on another replica: then it is gone.)
                    match self.open_post(index, &key).await {
                        Ok(Some(_)) => bot.out.edit_text(chat, message, &text).await,
                        Ok(None) => {
                            draft.done = true;
                            Ok(())
                        }
                        Err(()) => Ok(()),
                    }
                }
            };
            match shown {
                Ok(()) => {}
                Err(ServiceError::RateLimited {
                    retry_after_secs, ..
                }) => {
                    self.pause(index, retry_after_secs);
                    draft.dirty = true;
                    return;
                }
                Err(e) => {
                    tracing::debug!(bot = %bot.entry, "bots: a draft could not be shown: {e}");
                }
            }
        }
        drafts.retain(|_, d| !d.done);
    }
}
