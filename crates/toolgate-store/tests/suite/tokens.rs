//! Issued tokens on both backends: made with only their hash stored, seen by another
//! connection (another process or replica), revoked once, rotated with a grace period that
//! ends the old token, last use only moving forward.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use toolgate_store::tokens::{NewToken, TokenState, hash_token};

use crate::suite::backends::Backend;

fn new_token(principal: &str) -> NewToken {
    NewToken {
        principal: principal.into(),
        role: "agent".into(),
        operator: false,
        note: Some("ci".to_owned()),
        expires_in_ms: None,
        created_by: "tester".to_owned(),
    }
}

async fn made_revoked_and_seen_by_another_connection(b: Backend) {
    let store = b.tokens().await;
    let (made, secret) = store.create(new_token("ci-bot")).await.unwrap();
    assert_eq!(made.sha256, hash_token(secret.expose()));
    assert!(made.id.starts_with("tok_"));

    let other = b.tokens().await;
    let listed = other.list().await.unwrap();
    assert_eq!(listed, vec![made.clone()]);
    assert!(
        !format!("{listed:?}").contains(secret.expose()),
        "a token is never stored or shown"
    );

    assert!(other.revoke(&made.id).await.unwrap());
    assert!(!other.revoke(&made.id).await.unwrap(), "revoked once");
    assert!(!store.revoke("tok_unknown").await.unwrap());
    let seen = store.get(&made.id).await.unwrap().unwrap();
    assert_eq!(seen.state(store.now_ms()), TokenState::Revoked);
}

async fn rotation_ends_the_old_token_after_its_grace(b: Backend) {
    let now = Arc::new(AtomicU64::new(1_000_000));
    let clock = {
        let now = Arc::clone(&now);
        Arc::new(move || now.load(Ordering::SeqCst))
    };
    let store = b.tokens().await.with_clock(clock);
    let (old, _) = store
        .create(NewToken {
            expires_in_ms: Some(3_600_000),
            ..new_token("svc")
        })
        .await
        .unwrap();
    let (new, secret) = store.rotate(&old.id, 60_000, "op").await.unwrap().unwrap();
    assert_eq!(new.replaces.as_deref(), Some(old.id.as_str()));
    assert_eq!(
        (new.principal.as_str(), new.role.as_str()),
        ("svc", "agent")
    );
    assert_eq!(
        new.expires_at_ms, old.expires_at_ms,
        "the expiry carries over"
    );
    assert_eq!(new.sha256, hash_token(secret.expose()));
    let old_now = store.get(&old.id).await.unwrap().unwrap();
    assert_eq!(old_now.expires_at_ms, Some(1_060_000));
    assert_eq!(old_now.state(1_059_999), TokenState::Active);
    assert_eq!(old_now.state(1_060_000), TokenState::Expired);

    store.revoke(&new.id).await.unwrap();
    assert!(
        store.rotate(&new.id, 0, "op").await.unwrap().is_none(),
        "a revoked token cannot be rotated back to life"
    );
    assert_eq!(store.list().await.unwrap().len(), 2);
}

async fn last_use_only_moves_forward(b: Backend) {
    let store = b.tokens().await;
    let (t, _) = store.create(new_token("u")).await.unwrap();
    store.touch(vec![(t.id.clone(), 500)]).await.unwrap();
    store.touch(vec![(t.id.clone(), 400)]).await.unwrap();
    store
        .touch(vec![("tok_gone".to_owned(), 9), (t.id.clone(), 450)])
        .await
        .unwrap();
    assert_eq!(
        store.get(&t.id).await.unwrap().unwrap().last_used_at_ms,
        Some(500)
    );
}

on_both_backends!(
    made_revoked_and_seen_by_another_connection,
    rotation_ends_the_old_token_after_its_grace,
    last_use_only_moves_forward,
);
