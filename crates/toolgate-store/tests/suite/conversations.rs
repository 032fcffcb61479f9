//! The conversations on both backends: a chat's open conversation is found again and a new
//! one opened after it is closed; the journal numbers events from 1 without gaps, also under
//! 16 concurrent writers on two connections (two processes, or replicas); one runner holds a
//! conversation at a time, another takes it over once the lease has passed, and the runner
//! that lost it can no longer write (fencing); a message marks the conversation pending
//! until a runner settles it having read everything.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use toolgate_store::conversations::{Append, NewConversation};

use super::approval_fixtures::{T0, TestClock};
use crate::suite::backends::Backend;

const LEASE: Duration = Duration::from_secs(30);

fn new(id: &str, chat: &str, user: &str) -> NewConversation {
    NewConversation {
        id: id.into(),
        entry: "telegram:ops".into(),
        chat: chat.into(),
        user_ref: user.into(),
        principal: "alice".into(),
        role: "default".into(),
    }
}

fn user_message(text: &str) -> Append<'_> {
    Append {
        kind: "user",
        body: text,
        runner: None,
        marks_pending: true,
        title: Some(text),
    }
}

fn by(runner: &str) -> Append<'_> {
    Append {
        kind: "assistant",
        body: "{}",
        runner: Some(runner),
        marks_pending: false,
        title: None,
    }
}

async fn a_chat_keeps_its_open_conversation_until_closed(b: Backend) {
    let clock = TestClock::new();
    let store = b.conversations(&clock).await;
    let first = store.open(&new("c1", "-100", "42")).await.unwrap();
    assert_eq!((first.id.as_str(), first.last_seq), ("c1", 0));
    assert_eq!(first.created_at_ms, T0);
    let again = b
        .conversations(&clock)
        .await
        .open(&new("c2", "-100", "42"))
        .await
        .unwrap();
    assert_eq!(
        again.id, "c1",
        "the chat's open conversation, from another process"
    );
    let other_user = store.open(&new("c3", "-100", "43")).await.unwrap();
    assert_eq!(other_user.id, "c3");
    assert!(store.close("c1").await.unwrap());
    assert!(!store.close("c1").await.unwrap(), "closed once");
    assert_eq!(
        store.append("c1", user_message("late")).await.unwrap(),
        None,
        "no message into a closed conversation"
    );
    let next = store.open(&new("c4", "-100", "42")).await.unwrap();
    assert_eq!(
        next.id, "c4",
        "after /new the chat's next message opens another"
    );
    let taken = store.open(&new("c1", "-999", "42")).await.unwrap_err();
    assert!(taken.to_string().contains("id is taken"), "{taken}");
    let listed: Vec<String> = store
        .list(Some("alice"), 10)
        .await
        .unwrap()
        .into_iter()
        .map(|c| c.id)
        .collect();
    assert_eq!(listed.len(), 3);
    assert!(store.list(Some("bob"), 10).await.unwrap().is_empty());
}

async fn the_journal_numbers_events_in_order_and_titles_the_conversation(b: Backend) {
    let clock = TestClock::new();
    let store = b.conversations(&clock).await;
    store.open(&new("c1", "-100", "42")).await.unwrap();
    assert_eq!(
        store
            .append("c1", user_message("hello there"))
            .await
            .unwrap(),
        Some(1)
    );
    assert_eq!(
        store.append("c1", user_message("second")).await.unwrap(),
        Some(2)
    );
    assert_eq!(
        store.append("nope", user_message("x")).await.unwrap(),
        None,
        "no such conversation"
    );
    let row = store.get("c1").await.unwrap().unwrap();
    assert_eq!(row.title, "hello there", "the first message titles it");
    assert_eq!(row.last_seq, 2);
    assert!(row.pending);
    let events = store.events("c1", 0, 100).await.unwrap();
    assert_eq!(
        events
            .iter()
            .map(|e| (e.seq, e.body.as_str()))
            .collect::<Vec<_>>(),
        vec![(1, "hello there"), (2, "second")]
    );
    assert_eq!(store.events("c1", 1, 100).await.unwrap().len(), 1);
    assert_eq!(store.events("c1", 0, 1).await.unwrap()[0].seq, 1);
    assert!(
        store.events("c1", u64::MAX, 10).await.unwrap().is_empty(),
        "past every number there is nothing (not an error)"
    );
}

async fn concurrent_writers_never_share_a_number(b: Backend) {
    let clock = TestClock::new();
    let one = b.conversations(&clock).await;
    let two = b.conversations(&clock).await;
    one.open(&new("c1", "-100", "42")).await.unwrap();
    let mut tasks = Vec::new();
    for i in 0..16 {
        let store = if i % 2 == 0 { one.clone() } else { two.clone() };
        tasks.push(tokio::spawn(async move {
            let text = format!("m{i}");
            store
                .append("c1", user_message(&text))
                .await
                .unwrap()
                .unwrap()
        }));
    }
    let mut seqs = BTreeSet::new();
    for t in tasks {
        assert!(seqs.insert(t.await.unwrap()), "a number given twice");
    }
    assert_eq!(seqs, (1..=16).collect::<BTreeSet<u64>>());
    assert_eq!(one.events("c1", 0, 100).await.unwrap().len(), 16);
}

async fn one_runner_at_a_time_and_the_lapsed_one_is_fenced(b: Backend) {
    let clock = TestClock::new();
    let store = b.conversations(&clock).await;
    let replica = b.conversations(&clock).await;
    store.open(&new("c1", "-100", "42")).await.unwrap();
    store.append("c1", user_message("hi")).await.unwrap();
    assert_eq!(store.unattended(10).await.unwrap(), vec!["c1".to_owned()]);
    assert!(store.claim("c1", "r1", LEASE).await.unwrap());
    assert!(store.unattended(10).await.unwrap().is_empty(), "r1 runs it");
    assert!(
        !replica.claim("c1", "r2", LEASE).await.unwrap(),
        "r1 holds it"
    );
    assert_eq!(store.append("c1", by("r1")).await.unwrap(), Some(2));
    assert_eq!(
        store.append("c1", by("r2")).await.unwrap(),
        None,
        "r2 holds nothing"
    );
    // r1 stalls past its lease: r2 takes over, and r1 can no longer write.
    clock.set(T0 + 31_000);
    assert_eq!(replica.unattended(10).await.unwrap(), vec!["c1".to_owned()]);
    assert_eq!(store.append("c1", by("r1")).await.unwrap(), None, "lapsed");
    assert!(replica.claim("c1", "r2", LEASE).await.unwrap());
    assert!(!store.claim("c1", "r1", LEASE).await.unwrap());
    assert_eq!(replica.append("c1", by("r2")).await.unwrap(), Some(3));
    // Renewing keeps it.
    clock.set(T0 + 50_000);
    assert!(replica.claim("c1", "r2", LEASE).await.unwrap());
    clock.set(T0 + 70_000);
    assert_eq!(replica.append("c1", by("r2")).await.unwrap(), Some(4));
    replica.release("c1", "r1").await.unwrap();
    assert_eq!(
        replica.get("c1").await.unwrap().unwrap().runner.as_deref(),
        Some("r2"),
        "only the holder releases"
    );
    replica.release("c1", "r2").await.unwrap();
    assert!(
        store.claim("c1", "r1", LEASE).await.unwrap(),
        "released: free"
    );
}

async fn a_runner_settles_only_what_it_has_read(b: Backend) {
    let clock = TestClock::new();
    let store = b.conversations(&clock).await;
    store.open(&new("c1", "-100", "42")).await.unwrap();
    store.append("c1", user_message("one")).await.unwrap();
    assert!(store.claim("c1", "r1", LEASE).await.unwrap());
    store.append("c1", by("r1")).await.unwrap();
    // A message arrives after the runner read through seq 2.
    store.append("c1", user_message("two")).await.unwrap();
    assert!(
        !store.settle("c1", "r1", 2).await.unwrap(),
        "seq 3 is unread"
    );
    assert!(
        !store.settle("c1", "r2", 3).await.unwrap(),
        "only the holder settles"
    );
    assert_eq!(store.busy("alice").await.unwrap(), 1);
    assert_eq!(store.busy("bob").await.unwrap(), 0);
    assert!(store.settle("c1", "r1", 3).await.unwrap());
    let settled = store.get("c1").await.unwrap().unwrap();
    assert!(!settled.pending);
    assert_eq!(settled.runner, None, "settling gives the lease up");
    assert_eq!(store.busy("alice").await.unwrap(), 0);
    store.release("c1", "r1").await.unwrap();
    assert!(store.unattended(10).await.unwrap().is_empty());
}

/// Two replicas' runners racing for one conversation: exactly one holds it.
async fn racing_claims_have_one_winner(b: Backend) {
    let clock = TestClock::new();
    let stores = Arc::new([b.conversations(&clock).await, b.conversations(&clock).await]);
    stores[0].open(&new("c1", "-100", "42")).await.unwrap();
    let mut tasks = Vec::new();
    for i in 0..16 {
        let stores = Arc::clone(&stores);
        tasks.push(tokio::spawn(async move {
            stores[i % 2]
                .claim("c1", &format!("r{i}"), LEASE)
                .await
                .unwrap()
        }));
    }
    let mut won = 0;
    for t in tasks {
        won += usize::from(t.await.unwrap());
    }
    assert_eq!(won, 1);
}

/// The delivery cursor: only conversations of the entry with events past it are listed, it
/// only moves forward, and a new event makes the conversation undelivered again.
async fn the_delivery_cursor_only_moves_forward(b: Backend) {
    let clock = TestClock::new();
    let store = b.conversations(&clock).await;
    store.open(&new("c1", "-100", "42")).await.unwrap();
    let mut web = new("w1", "w1", "alice");
    web.entry = "web".into();
    store.open(&web).await.unwrap();
    assert!(
        store
            .undelivered("telegram:ops", 10)
            .await
            .unwrap()
            .is_empty()
    );
    store.append("c1", user_message("hi")).await.unwrap();
    store.append("c1", user_message("again")).await.unwrap();
    store.append("w1", user_message("web")).await.unwrap();
    assert_eq!(
        store.undelivered("telegram:ops", 10).await.unwrap(),
        vec![("c1".to_owned(), 0)]
    );
    assert!(store.mark_delivered("c1", 1).await.unwrap());
    assert!(!store.mark_delivered("c1", 1).await.unwrap(), "not twice");
    assert_eq!(store.delivered("c1").await.unwrap(), Some(1));
    assert_eq!(
        store.undelivered("telegram:ops", 10).await.unwrap(),
        vec![("c1".to_owned(), 1)]
    );
    assert!(store.mark_delivered("c1", 2).await.unwrap());
    assert!(!store.mark_delivered("c1", 1).await.unwrap(), "never back");
    assert_eq!(store.delivered("c1").await.unwrap(), Some(2));
    assert!(
        store
            .undelivered("telegram:ops", 10)
            .await
            .unwrap()
            .is_empty()
    );
    store.append("c1", user_message("more")).await.unwrap();
    assert_eq!(
        store.undelivered("telegram:ops", 10).await.unwrap().len(),
        1
    );
    assert_eq!(store.delivered("nope").await.unwrap(), None);
}

on_both_backends!(
    the_delivery_cursor_only_moves_forward,
    a_chat_keeps_its_open_conversation_until_closed,
    the_journal_numbers_events_in_order_and_titles_the_conversation,
    concurrent_writers_never_share_a_number,
    one_runner_at_a_time_and_the_lapsed_one_is_fenced,
    a_runner_settles_only_what_it_has_read,
    racing_claims_have_one_winner,
);
