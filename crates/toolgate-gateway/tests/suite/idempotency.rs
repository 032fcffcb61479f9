//! A write call with an idempotency key acts once, however often it is retried.

use std::sync::atomic::Ordering;

use serde_json::json;

use super::fixture::{Harness, code};

#[tokio::test]
async fn a_retried_write_acts_once() {
    let h = Harness::new();
    let args = json!({"note": "charge card", "idempotency_key": "order-42"});
    let first = h.call_as("auto", "writer", args.clone()).await;
    let second = h.call_as("auto", "writer", args).await;
    assert!(first.ok && second.ok);
    assert_eq!(first.data, second.data);
    assert_eq!(h.writer.calls.load(Ordering::SeqCst), 1);

    let other = h
        .call_as(
            "auto",
            "writer",
            json!({"note": "refund", "idempotency_key": "order-42"}),
        )
        .await;
    assert_eq!(code(&other), "invalid_arguments");
    assert_eq!(h.writer.calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_replay_needs_no_second_approval_and_reads_ignore_keys() {
    let h = Harness::new();
    let args = json!({"note": "x", "idempotency_key": "k1"});
    let e = h.call("writer", args.clone()).await;
    assert_eq!(code(&e), "approval_required");
    let id = super::fixture::approval_id(&e);
    h.approvals
        .decide(
            &id,
            toolgate_store::approvals::Decision {
                approve: true,
                scope: toolgate_store::approvals::DecisionScope::Once,
                pattern: None,
                decided_by: "op".into(),
                reason: None,
                confirm: None,
                via: None,
            },
        )
        .await
        .unwrap();
    assert!(h.call("writer", args.clone()).await.ok);
    assert!(
        h.call("writer", args).await.ok,
        "the retry replays instead of asking again"
    );
    assert_eq!(h.writer.calls.load(Ordering::SeqCst), 1);

    for _ in 0..2 {
        assert!(
            h.call("echo", json!({"note": "r", "idempotency_key": "k2"}))
                .await
                .ok
        );
    }
    assert_eq!(h.echo.calls.load(Ordering::SeqCst), 2);
}
