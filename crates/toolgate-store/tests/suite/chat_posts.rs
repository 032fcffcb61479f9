//! The approval channels' chat posts on both backends: a post is claimed once; a claim whose
//! poster died before attaching a message is taken over after the lease, an attached one
//! never; a released claim can be claimed again at once; a message leads back to its
//! request; closing is won once; pruning removes only old closed rows. Under real
//! concurrency — 16 tasks, and on PostgreSQL two pools standing for two replicas — exactly
//! one claimer and one closer win.

use std::sync::Arc;
use std::time::Duration;

use toolgate_store::chat::ChatPost;
use toolgate_store::{ChatPosts, StoreError};

use super::approval_fixtures::{T0, TestClock};
use crate::suite::backends::Backend;

const LEASE: Duration = Duration::from_secs(30);
const APR: &str = "apr_000000000001";

async fn a_post_is_claimed_once(b: Backend) {
    let clock = TestClock::new();
    let posts = b.chat_posts(&clock).await;
    assert!(posts.claim(APR, "telegram", "-100", LEASE).await.unwrap());
    assert!(!posts.claim(APR, "telegram", "-100", LEASE).await.unwrap());
    let other = b.chat_posts(&clock).await;
    assert!(
        !other.claim(APR, "telegram", "-100", LEASE).await.unwrap(),
        "another process (replica) does not claim it either"
    );
    // Another chat, another channel, another request: each its own post.
    assert!(posts.claim(APR, "telegram", "-200", LEASE).await.unwrap());
    assert!(posts.claim(APR, "slack", "-100", LEASE).await.unwrap());
    assert!(
        posts
            .claim("apr_000000000002", "telegram", "-100", LEASE)
            .await
            .unwrap()
    );
    assert_eq!(
        other.open_posts("telegram").await.unwrap(),
        vec![
            post(APR, "telegram", "-100", None, T0),
            post(APR, "telegram", "-200", None, T0),
            post("apr_000000000002", "telegram", "-100", None, T0),
        ]
    );
}

async fn a_stale_unattached_claim_is_taken_over_but_an_attached_one_never(b: Backend) {
    let clock = TestClock::new();
    let posts = b.chat_posts(&clock).await;
    assert!(posts.claim(APR, "telegram", "a", LEASE).await.unwrap());
    assert!(posts.claim(APR, "telegram", "b", LEASE).await.unwrap());
    posts.attach(APR, "telegram", "b", "42").await.unwrap();

    // Within the lease (its last millisecond included), the poster may still be posting.
    clock.set(T0 + 30_000);
    assert!(!posts.claim(APR, "telegram", "a", LEASE).await.unwrap());
    clock.set(T0 + 30_001);
    let other = b.chat_posts(&clock).await;
    assert!(
        other.claim(APR, "telegram", "a", LEASE).await.unwrap(),
        "the poster died mid-post: taken over"
    );
    assert!(
        !posts.claim(APR, "telegram", "a", LEASE).await.unwrap(),
        "the takeover renewed the claim"
    );
    clock.set(T0 + 3_600_000);
    assert!(
        !posts.claim(APR, "telegram", "b", LEASE).await.unwrap(),
        "a posted message is never posted again"
    );
    // A closed claim is not taken over either.
    assert!(posts.close(APR, "telegram", "a", "expired").await.unwrap());
    clock.set(T0 + 7_200_000);
    assert!(!posts.claim(APR, "telegram", "a", LEASE).await.unwrap());
}

async fn a_released_claim_can_be_claimed_again_at_once(b: Backend) {
    let clock = TestClock::new();
    let posts = b.chat_posts(&clock).await;
    assert!(posts.claim(APR, "slack", "C1", LEASE).await.unwrap());
    posts.release(APR, "slack", "C1").await.unwrap();
    assert_eq!(posts.open_posts("slack").await.unwrap(), vec![]);
    assert!(posts.claim(APR, "slack", "C1", LEASE).await.unwrap());

    // Once a message is attached, releasing leaves it alone.
    posts
        .attach(APR, "slack", "C1", "1700000000.000100")
        .await
        .unwrap();
    posts.release(APR, "slack", "C1").await.unwrap();
    assert!(!posts.claim(APR, "slack", "C1", LEASE).await.unwrap());
    assert_eq!(posts.open_posts("slack").await.unwrap().len(), 1);
    // Releasing what is not there is no error.
    posts
        .release("apr_ffffffffffff", "slack", "C1")
        .await
        .unwrap();
}

async fn an_attached_message_leads_back_to_its_request(b: Backend) {
    let clock = TestClock::new();
    let posts = b.chat_posts(&clock).await;
    assert!(posts.claim(APR, "telegram", "-100", LEASE).await.unwrap());
    assert_eq!(
        posts.by_message("telegram", "-100", "77").await.unwrap(),
        None
    );
    posts.attach(APR, "telegram", "-100", "77").await.unwrap();

    let other = b.chat_posts(&clock).await;
    assert_eq!(
        other.by_message("telegram", "-100", "77").await.unwrap(),
        Some(post(APR, "telegram", "-100", Some("77"), T0))
    );
    assert_eq!(
        other.by_message("telegram", "-200", "77").await.unwrap(),
        None,
        "a message id is looked up in its own chat"
    );
    assert_eq!(other.by_message("slack", "-100", "77").await.unwrap(), None);

    // Attaching to a post never claimed is an error, not a silent no-op.
    assert!(matches!(
        posts
            .attach("apr_ffffffffffff", "telegram", "-100", "78")
            .await,
        Err(StoreError::NotFound(_))
    ));
}

async fn open_posts_leave_out_closed_ones(b: Backend) {
    let clock = TestClock::new();
    let posts = b.chat_posts(&clock).await;
    assert!(
        posts
            .claim("apr_000000000002", "telegram", "c", LEASE)
            .await
            .unwrap()
    );
    clock.set(T0 - 5_000);
    assert!(posts.claim(APR, "telegram", "c", LEASE).await.unwrap());
    posts.attach(APR, "telegram", "c", "9").await.unwrap();
    clock.set(T0 + 1_000);
    assert!(
        posts
            .claim("apr_000000000003", "telegram", "c", LEASE)
            .await
            .unwrap()
    );
    let ids =
        |list: Vec<ChatPost>| -> Vec<String> { list.into_iter().map(|p| p.approval_id).collect() };
    assert_eq!(
        ids(posts.open_posts("telegram").await.unwrap()),
        vec![APR, "apr_000000000002", "apr_000000000003"],
        "oldest claim first"
    );

    clock.set(T0 + 2_000);
    assert!(
        posts
            .close("apr_000000000002", "telegram", "c", "denied")
            .await
            .unwrap()
    );
    assert_eq!(
        ids(posts.open_posts("telegram").await.unwrap()),
        vec![APR, "apr_000000000003"]
    );
    assert_eq!(posts.open_posts("slack").await.unwrap(), vec![]);
}

async fn a_post_is_closed_once(b: Backend) {
    let clock = TestClock::new();
    let posts = b.chat_posts(&clock).await;
    assert!(posts.claim(APR, "telegram", "c", LEASE).await.unwrap());
    posts.attach(APR, "telegram", "c", "5").await.unwrap();
    clock.set(T0 + 10_000);
    assert!(posts.close(APR, "telegram", "c", "approved").await.unwrap());
    clock.set(T0 + 20_000);
    let other = b.chat_posts(&clock).await;
    assert!(!other.close(APR, "telegram", "c", "expired").await.unwrap());
    assert!(
        !other
            .close("apr_ffffffffffff", "telegram", "c", "denied")
            .await
            .unwrap(),
        "nothing to close"
    );
    assert_eq!(
        other.by_message("telegram", "c", "5").await.unwrap(),
        Some(ChatPost {
            closed: Some("approved".into()),
            closed_at_ms: Some(T0 + 10_000),
            ..post(APR, "telegram", "c", Some("5"), T0)
        }),
        "the first closer's status and time stay"
    );
}

async fn racing_claimers_exactly_one_wins(b: Backend) {
    let clock = TestClock::new();
    let handles = two_handles(&b, &clock).await;
    let wins = race(&handles, |posts| async move {
        posts.claim(APR, "telegram", "c", LEASE).await.unwrap()
    })
    .await;
    assert_eq!(wins, 1, "16 racing claims of a fresh post");

    // And for a takeover of a stale claim.
    clock.set(T0 + 60_000);
    let wins = race(&handles, |posts| async move {
        posts.claim(APR, "telegram", "c", LEASE).await.unwrap()
    })
    .await;
    assert_eq!(wins, 1, "16 racing takeovers of a stale claim");
}

async fn racing_closers_exactly_one_wins(b: Backend) {
    let clock = TestClock::new();
    let handles = two_handles(&b, &clock).await;
    assert!(handles[0].claim(APR, "slack", "c", LEASE).await.unwrap());
    handles[0].attach(APR, "slack", "c", "1.2").await.unwrap();
    let wins = race(&handles, |posts| async move {
        posts.close(APR, "slack", "c", "approved").await.unwrap()
    })
    .await;
    assert_eq!(wins, 1, "16 racing closes");
}

async fn prune_removes_only_old_closed_posts(b: Backend) {
    let clock = TestClock::new();
    let posts = b.chat_posts(&clock).await;
    for chat in ["old", "recent", "open"] {
        assert!(posts.claim(APR, "telegram", chat, LEASE).await.unwrap());
    }
    assert!(
        posts
            .close(APR, "telegram", "old", "approved")
            .await
            .unwrap()
    );
    clock.set(T0 + 50_000);
    assert!(
        posts
            .close(APR, "telegram", "recent", "denied")
            .await
            .unwrap()
    );

    clock.set(T0 + 100_000);
    let keep = Duration::from_secs(60);
    assert_eq!(posts.prune(keep).await.unwrap(), 1, "closed 100 s ago");
    assert_eq!(posts.prune(keep).await.unwrap(), 0);
    assert!(
        !posts.claim(APR, "telegram", "recent", LEASE).await.unwrap(),
        "a recently closed post stays"
    );
    assert!(
        posts.claim(APR, "telegram", "old", LEASE).await.unwrap(),
        "the pruned row is gone"
    );
    clock.set(T0 + 10_000_000);
    assert_eq!(posts.prune(keep).await.unwrap(), 1, "never an open one");
    assert_eq!(posts.open_posts("telegram").await.unwrap().len(), 2);
}

fn post(id: &str, channel: &str, chat: &str, message: Option<&str>, at: u64) -> ChatPost {
    ChatPost {
        approval_id: id.into(),
        channel: channel.into(),
        chat: chat.into(),
        message_ref: message.map(Into::into),
        claimed_at_ms: at,
        closed: None,
        closed_at_ms: None,
    }
}

/// Two connections to the same data: two processes on one file, or two pools — two
/// replicas — on one PostgreSQL database.
async fn two_handles(b: &Backend, clock: &TestClock) -> [ChatPosts; 2] {
    [b.chat_posts(clock).await, b.chat_posts(clock).await]
}

/// Runs `step` in 16 tasks at once, alternating between the handles; how many returned true.
async fn race<F, Fut>(handles: &[ChatPosts; 2], step: F) -> usize
where
    F: Fn(ChatPosts) -> Fut,
    Fut: std::future::Future<Output = bool> + Send + 'static,
{
    let start = Arc::new(tokio::sync::Barrier::new(16));
    let tasks: Vec<_> = (0..16)
        .map(|i| {
            let run = step(handles[i % 2].clone());
            let start = Arc::clone(&start);
            tokio::spawn(async move {
                start.wait().await;
                run.await
            })
        })
        .collect();
    let mut wins = 0;
    for task in tasks {
        if task.await.unwrap() {
            wins += 1;
        }
    }
    wins
}

on_both_backends!(
    a_post_is_claimed_once,
    a_stale_unattached_claim_is_taken_over_but_an_attached_one_never,
    a_released_claim_can_be_claimed_again_at_once,
    an_attached_message_leads_back_to_its_request,
    open_posts_leave_out_closed_ones,
    a_post_is_closed_once,
    racing_claimers_exactly_one_wins,
    racing_closers_exactly_one_wins,
    prune_removes_only_old_closed_posts,
);
