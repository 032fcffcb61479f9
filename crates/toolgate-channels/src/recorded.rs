//! [`recorded_card`]: the card a tapped message is, found in the record of sent messages
//! ([`ChatPosts`]) — also in the instant between the service's answer to the post and the
//! record of it, which a quick tap can fall into.

use std::time::Duration;

use toolgate_store::chat::ChatPost;
use toolgate_store::{ChatPosts, StoreResult};

use crate::action::is_approval_id;

/// How long a tap on an unknown message waits, step by step, for a card being recorded
/// (about 2 s in all).
pub const RECORD_WAITS: [Duration; 5] = [
    Duration::from_millis(50),
    Duration::from_millis(150),
    Duration::from_millis(300),
    Duration::from_millis(500),
    Duration::from_millis(1_000),
];

/// The approval card recorded as `message` in `chat` of `channel` (the record's key is an
/// approval id). When there is none yet but a card of that chat is being posted (claimed,
/// its message not recorded), waits for the record, briefly ([`RECORD_WAITS`]) — only then,
/// so a tap on any other message is answered at once; the open cards are read once.
pub async fn recorded_card(
    posts: &ChatPosts,
    channel: &str,
    chat: &str,
    message: &str,
) -> StoreResult<Option<ChatPost>> {
    let mut waits = RECORD_WAITS.iter();
    let mut may_wait = None;
    loop {
        if let Some(post) = posts.by_message(channel, chat, message).await? {
            return Ok(is_approval_id(&post.approval_id).then_some(post));
        }
        if may_wait.is_none() {
            may_wait = Some(posts.open_posts(channel).await.is_ok_and(|open| {
                open.iter().any(|p| {
                    p.chat == chat && p.message_ref.is_none() && is_approval_id(&p.approval_id)
                })
            }));
        }
        match (may_wait, waits.next()) {
            (Some(true), Some(wait)) => tokio::time::sleep(*wait).await,
            _ => return Ok(None),
        }
    }
}
