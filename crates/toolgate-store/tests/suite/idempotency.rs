//! Idempotency keys on both backends: first writer wins, scoped by principal and tool,
//! shared between stores; and the reservation — of concurrent claims with one key exactly one
//! acts while the others wait for and replay its outcome, a released key is taken by the next,
//! a dead holder's lease lapses.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::json;
use toolgate_store::idempotency::{Claim, IdempotencyStore, IdempotentEntry, KeyRef};

use crate::suite::backends::Backend;

fn entry(args_hash: &str, outcome: serde_json::Value) -> IdempotentEntry {
    IdempotentEntry {
        args_hash: args_hash.into(),
        outcome,
        created_at_ms: 0,
    }
}

/// The entry without its time (which the wall clock sets).
fn timeless(e: Option<IdempotentEntry>) -> Option<IdempotentEntry> {
    e.map(|e| IdempotentEntry {
        created_at_ms: 0,
        ..e
    })
}

async fn put_then_get(b: Backend) {
    let store = b.idempotency().await;
    assert_eq!(
        store.get("agent-1", "write_file", "k1").await.unwrap(),
        None
    );
    let outcome = json!({"ok": true, "bytes": 12});
    let stored = store
        .put("agent-1", "write_file", "k1", "h1", &outcome)
        .await
        .unwrap();
    assert_eq!(timeless(Some(stored)), Some(entry("h1", outcome.clone())));
    assert_eq!(
        timeless(store.get("agent-1", "write_file", "k1").await.unwrap()),
        Some(entry("h1", outcome))
    );
}

async fn the_first_writer_wins(b: Backend) {
    let store = b.idempotency().await;
    let first = json!({"ok": true});
    store
        .put("agent-1", "write_file", "k1", "h1", &first)
        .await
        .unwrap();
    let second = store
        .put("agent-1", "write_file", "k1", "h2", &json!({"ok": false}))
        .await
        .unwrap();
    assert_eq!(timeless(Some(second)), Some(entry("h1", first)));
}

async fn keys_are_scoped_by_principal_and_tool(b: Backend) {
    let store = b.idempotency().await;
    for (principal, tool, hash, n) in [
        ("agent-1", "write_file", "h1", 1),
        ("agent-2", "write_file", "h2", 2),
        ("agent-1", "edit_file", "h3", 3),
    ] {
        store
            .put(principal, tool, "k", hash, &json!(n))
            .await
            .unwrap();
    }
    let mut read = Vec::new();
    for (principal, tool) in [
        ("agent-1", "write_file"),
        ("agent-2", "write_file"),
        ("agent-1", "edit_file"),
        ("agent-2", "edit_file"),
    ] {
        read.push(timeless(store.get(principal, tool, "k").await.unwrap()));
    }
    assert_eq!(
        read,
        [
            Some(entry("h1", json!(1))),
            Some(entry("h2", json!(2))),
            Some(entry("h3", json!(3))),
            None
        ]
    );
}

async fn entries_are_shared_between_stores(b: Backend) {
    let (one, other) = (b.idempotency().await, b.idempotency().await);
    one.put("agent-1", "write_file", "k1", "h1", &json!("done"))
        .await
        .unwrap();
    let kept = other
        .put("agent-1", "write_file", "k1", "h9", &json!("again"))
        .await
        .unwrap();
    assert_eq!(timeless(Some(kept)), Some(entry("h1", json!("done"))));
}

fn key() -> KeyRef {
    KeyRef::new("agent-1", "write_file", "k-race")
}

/// Eight claimants on two stores (two processes, or two replicas): exactly one acts, every
/// other one waits while it runs and then replays its outcome. The old get → run → put let
/// several act.
async fn concurrent_claims_act_once_and_the_rest_replay(b: Backend) {
    let stores = [
        Arc::new(b.idempotency().await),
        Arc::new(b.idempotency().await),
    ];
    for round in 0..5 {
        let key = KeyRef::new("agent-1", "write_file", &format!("k-{round}"));
        let acted = Arc::new(AtomicUsize::new(0));
        let barrier = Arc::new(tokio::sync::Barrier::new(8));
        let claimants: Vec<_> = (0..8)
            .map(|i| {
                let store: Arc<IdempotencyStore> = Arc::clone(&stores[i % 2]);
                let (key, acted, barrier) = (key.clone(), acted.clone(), barrier.clone());
                tokio::spawn(async move {
                    barrier.wait().await;
                    match store.claim(key, "h").await.unwrap() {
                        Claim::Reserved(r) => {
                            acted.fetch_add(1, Ordering::SeqCst);
                            // Long enough that every other claimant finds it held.
                            tokio::time::sleep(Duration::from_millis(300)).await;
                            let outcome = json!({"ok": true, "by": i});
                            store.complete(&r, &outcome).await.unwrap().outcome
                        }
                        Claim::Done(e) => e.outcome,
                        Claim::OtherArguments(h) => panic!("other arguments {h}"),
                    }
                })
            })
            .collect();
        let mut outcomes = Vec::new();
        for c in claimants {
            outcomes.push(c.await.unwrap());
        }
        assert_eq!(acted.load(Ordering::SeqCst), 1, "round {round}");
        assert!(
            outcomes.windows(2).all(|w| w[0] == w[1]),
            "round {round}: {outcomes:?}"
        );
    }
}

async fn a_released_key_is_taken_by_the_waiting_claimant(b: Backend) {
    let store = Arc::new(b.idempotency().await);
    let Claim::Reserved(first) = store.claim(key(), "h").await.unwrap() else {
        panic!("the first claim reserves");
    };
    let waiter = {
        let store = Arc::clone(&store);
        tokio::spawn(async move { store.claim(key(), "h").await.unwrap() })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!waiter.is_finished(), "the key is held");
    // The holder did not act (e.g. it waits for an approval): the waiter may.
    store.release(&first).await.unwrap();
    let taken = tokio::time::timeout(Duration::from_secs(5), waiter)
        .await
        .expect("the waiter is woken")
        .unwrap();
    assert!(matches!(taken, Claim::Reserved(_)), "{taken:?}");
}

async fn other_arguments_under_a_held_or_recorded_key_are_refused_at_once(b: Backend) {
    let store = b.idempotency().await;
    let Claim::Reserved(held) = store.claim(key(), "h1").await.unwrap() else {
        panic!("reserves");
    };
    assert_eq!(
        store.claim(key(), "h2").await.unwrap(),
        Claim::OtherArguments("h1".into())
    );
    store.complete(&held, &json!("done")).await.unwrap();
    assert_eq!(
        store.claim(key(), "h2").await.unwrap(),
        Claim::OtherArguments("h1".into())
    );
    assert!(matches!(
        store.claim(key(), "h1").await.unwrap(),
        Claim::Done(e) if e.outcome == json!("done")
    ));
}

/// A holder that died never completes; its lease lapses and the key is taken over.
async fn a_dead_holders_lease_lapses(b: Backend) {
    let now = Arc::new(std::sync::atomic::AtomicU64::new(1_700_000_000_000));
    let clock = {
        let now = Arc::clone(&now);
        Arc::new(move || now.load(Ordering::SeqCst))
    };
    let dead = b.idempotency().await.with_clock(clock.clone());
    let alive = b.idempotency().await.with_clock(clock);
    let Claim::Reserved(_abandoned) = dead.claim(key(), "h").await.unwrap() else {
        panic!("reserves");
    };
    let late = tokio::time::timeout(Duration::from_millis(700), alive.claim(key(), "h")).await;
    assert!(late.is_err(), "held within its lease");
    now.fetch_add(31_000, Ordering::SeqCst);
    let taken = tokio::time::timeout(Duration::from_secs(5), alive.claim(key(), "h"))
        .await
        .expect("taken over after the lease")
        .unwrap();
    assert!(matches!(taken, Claim::Reserved(_)), "{taken:?}");
}

async fn a_renewed_lease_holds(b: Backend) {
    let now = Arc::new(std::sync::atomic::AtomicU64::new(1_700_000_000_000));
    let clock = {
        let now = Arc::clone(&now);
        Arc::new(move || now.load(Ordering::SeqCst))
    };
    let holder = b.idempotency().await.with_clock(clock.clone());
    let other = b.idempotency().await.with_clock(clock);
    let Claim::Reserved(held) = holder.claim(key(), "h").await.unwrap() else {
        panic!("reserves");
    };
    now.fetch_add(20_000, Ordering::SeqCst);
    assert!(holder.renew(&held).await.unwrap());
    now.fetch_add(20_000, Ordering::SeqCst);
    let late = tokio::time::timeout(Duration::from_millis(700), other.claim(key(), "h")).await;
    assert!(late.is_err(), "the renewed lease still holds");
}

/// A configured lease (`[limits] reservation_lease_secs`): a dead holder's key is taken over
/// once that lease has passed, not the default's 30 s; renewal runs every third of it.
async fn a_configured_lease_lapses_sooner(b: Backend) {
    let now = Arc::new(std::sync::atomic::AtomicU64::new(1_700_000_000_000));
    let clock = {
        let now = Arc::clone(&now);
        Arc::new(move || now.load(Ordering::SeqCst))
    };
    let lease = Duration::from_secs(3);
    let dead = b
        .idempotency()
        .await
        .with_clock(clock.clone())
        .with_lease(lease);
    let alive = b.idempotency().await.with_clock(clock).with_lease(lease);
    assert_eq!(alive.renew_every(), Duration::from_secs(1));
    let Claim::Reserved(_abandoned) = dead.claim(key(), "h").await.unwrap() else {
        panic!("reserves");
    };
    now.fetch_add(2_000, Ordering::SeqCst);
    let late = tokio::time::timeout(Duration::from_millis(700), alive.claim(key(), "h")).await;
    assert!(late.is_err(), "held within its lease");
    now.fetch_add(1_500, Ordering::SeqCst);
    let taken = tokio::time::timeout(Duration::from_secs(5), alive.claim(key(), "h"))
        .await
        .expect("taken over after the configured lease")
        .unwrap();
    assert!(matches!(taken, Claim::Reserved(_)), "{taken:?}");
}

on_both_backends!(
    a_configured_lease_lapses_sooner,
    put_then_get,
    the_first_writer_wins,
    keys_are_scoped_by_principal_and_tool,
    entries_are_shared_between_stores,
    concurrent_claims_act_once_and_the_rest_replay,
    a_released_key_is_taken_by_the_waiting_claimant,
    other_arguments_under_a_held_or_recorded_key_are_refused_at_once,
    a_dead_holders_lease_lapses,
    a_renewed_lease_holds,
);
