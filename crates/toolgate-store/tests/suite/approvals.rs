//! Approval requests: create, read, list, expiry, decisions, consumption, persistence.

use std::sync::Arc;

use serde_json::{Value, json};
use toolgate_store::StoreError;
use toolgate_store::approvals::{
    ApprovalRequest, ApprovalStatus, Decision, DecisionScope, NewApproval, canonical_hash,
};

use super::approval_fixtures::{
    T0, TestClock, approve, conflict_message, deny, expected_pending, new_approval,
};
use crate::suite::backends::Backend;

async fn create_get_and_list(b: Backend) {
    let clock = TestClock::new();
    let store = b.approvals(&clock).await;
    let args = json!({"path": "src/a.rs", "content": "x"});

    let created = store
        .create(new_approval("write_file", args.clone()))
        .await
        .unwrap();
    let id = created.id.clone();
    assert!(id.starts_with("apr_") && id.len() == 16, "{id}");
    assert!(
        id[4..]
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    );
    assert_eq!(created, expected_pending(&id, args.clone()));
    assert_eq!(store.get(&id).await.unwrap(), Some(created.clone()));
    assert_eq!(store.get("apr_000000000000").await.unwrap(), None);

    clock.set(T0 + 1);
    let second = store
        .create(new_approval("write_file", json!({"path": "b"})))
        .await
        .unwrap();
    assert_ne!(second.id, id);
    store.decide(&second.id, deny()).await.unwrap();

    let ids = |list: Vec<ApprovalRequest>| list.into_iter().map(|r| r.id).collect::<Vec<_>>();
    assert_eq!(
        ids(store.list(None, 10).await.unwrap()),
        vec![second.id.clone(), id.clone()]
    );
    assert_eq!(
        ids(store.list(None, 1).await.unwrap()),
        vec![second.id.clone()]
    );
    assert_eq!(
        ids(store.list(Some(ApprovalStatus::Pending), 10).await.unwrap()),
        vec![id.clone()]
    );
    assert_eq!(
        ids(store.list(Some(ApprovalStatus::Denied), 10).await.unwrap()),
        vec![second.id]
    );
    assert_eq!(
        ids(store
            .list(Some(ApprovalStatus::Approved), 10)
            .await
            .unwrap()),
        Vec::<String>::new()
    );
}

async fn pending_request_expires_by_the_clock_and_cannot_be_decided_after(b: Backend) {
    let clock = TestClock::new();
    let store = b.approvals(&clock).await;
    let args = json!({"path": "a"});
    let id = store
        .create(new_approval("write_file", args.clone()))
        .await
        .unwrap()
        .id;

    clock.set(T0 + 59_999);
    assert_eq!(
        store.get(&id).await.unwrap().unwrap().status,
        ApprovalStatus::Pending
    );

    clock.set(T0 + 60_000);
    let expired = ApprovalRequest {
        status: ApprovalStatus::Expired,
        ..expected_pending(&id, args)
    };
    assert_eq!(store.get(&id).await.unwrap(), Some(expired.clone()));
    assert_eq!(
        store.list(Some(ApprovalStatus::Pending), 10).await.unwrap(),
        vec![]
    );
    assert_eq!(
        store.list(Some(ApprovalStatus::Expired), 10).await.unwrap(),
        vec![expired.clone()]
    );

    assert_eq!(
        conflict_message(store.decide(&id, approve(DecisionScope::Once)).await),
        format!(
            "{id} expired at 2023-11-14T22:14:20.000Z; the caller must retry to create a new request"
        )
    );

    // Marking it in the table changes nothing a reader sees, and happens once.
    assert_eq!(store.expire_due().await.unwrap(), 1);
    assert_eq!(store.expire_due().await.unwrap(), 0);
    assert_eq!(store.get(&id).await.unwrap(), Some(expired));
}

async fn decide_records_the_decision_and_a_second_decision_conflicts(b: Backend) {
    let clock = TestClock::new();
    let store = b.approvals(&clock).await;
    let args = json!({"path": "a"});
    let id = store
        .create(new_approval("write_file", args.clone()))
        .await
        .unwrap()
        .id;

    clock.set(T0 + 5_000);
    let decided = store
        .decide(&id, approve(DecisionScope::Once))
        .await
        .unwrap();
    let expected = ApprovalRequest {
        status: ApprovalStatus::Approved,
        decided_by: Some("alice".into()),
        decided_at_ms: Some(T0 + 5_000),
        scope: Some(DecisionScope::Once),
        reason: Some("looks fine".into()),
        ..expected_pending(&id, args)
    };
    assert_eq!(decided, expected);
    // An approved request does not expire.
    clock.set(T0 + 3_600_000);
    assert_eq!(store.get(&id).await.unwrap(), Some(expected));

    assert_eq!(
        conflict_message(store.decide(&id, deny()).await),
        format!("{id} was already approved by alice at 2023-11-14T22:13:25.000Z")
    );
    assert!(matches!(
        store.decide("apr_ffffffffffff", deny()).await,
        Err(StoreError::NotFound(m)) if m == "approval request apr_ffffffffffff does not exist"
    ));
}

async fn dangerous_tool_needs_its_name_typed_to_approve_but_not_to_deny(b: Backend) {
    let clock = TestClock::new();
    let store = b.approvals(&clock).await;
    let dangerous = |args: Value| NewApproval {
        requires_confirmation: true,
        ..new_approval("shell", args)
    };
    let id = store
        .create(dangerous(json!({"cmd": "rm -rf build"})))
        .await
        .unwrap()
        .id;

    let expected = format!("{id}: this is a dangerous tool: type its name `shell` to confirm");
    let without = approve(DecisionScope::Once);
    assert_eq!(conflict_message(store.decide(&id, without).await), expected);
    let wrong = Decision {
        confirm: Some("shel".into()),
        ..approve(DecisionScope::Once)
    };
    assert_eq!(conflict_message(store.decide(&id, wrong).await), expected);
    assert_eq!(
        store.get(&id).await.unwrap().unwrap().status,
        ApprovalStatus::Pending
    );

    let typed = Decision {
        confirm: Some("shell".into()),
        ..approve(DecisionScope::Once)
    };
    assert_eq!(
        store.decide(&id, typed).await.unwrap().status,
        ApprovalStatus::Approved
    );

    let other = store
        .create(dangerous(json!({"cmd": "ls"})))
        .await
        .unwrap()
        .id;
    assert_eq!(
        store.decide(&other, deny()).await.unwrap().status,
        ApprovalStatus::Denied
    );
}

async fn an_approved_request_is_consumed_exactly_once(b: Backend) {
    let clock = TestClock::new();
    let store = b.approvals(&clock).await;
    let args = json!({"path": "a"});
    let hash = canonical_hash(&args);
    let id = store
        .create(new_approval("write_file", args))
        .await
        .unwrap()
        .id;

    assert!(
        matches!(store.consume(&id).await, Err(StoreError::Conflict(m))
        if m == format!("{id} is pending; only an approved request can be consumed"))
    );
    assert!(matches!(
        store.consume("apr_ffffffffffff").await,
        Err(StoreError::NotFound(_))
    ));

    store
        .decide(&id, approve(DecisionScope::Once))
        .await
        .unwrap();
    let latest = store
        .find_latest("agent-1", "write_file", &hash)
        .await
        .unwrap();
    assert_eq!(latest.map(|r| r.id), Some(id.clone()));

    assert!(store.consume(&id).await.unwrap());
    assert!(!store.consume(&id).await.unwrap());
    assert!(store.get(&id).await.unwrap().unwrap().consumed);
    assert_eq!(
        store
            .find_latest("agent-1", "write_file", &hash)
            .await
            .unwrap(),
        None
    );
}

async fn racing_consumers_on_two_connections_let_exactly_one_through(b: Backend) {
    let clock = TestClock::new();
    let first = Arc::new(b.approvals(&clock).await);
    let second = Arc::new(b.approvals(&clock).await);
    for round in 0..20 {
        let id = first
            .create(new_approval("write_file", json!({ "round": round })))
            .await
            .unwrap()
            .id;
        first
            .decide(&id, approve(DecisionScope::Once))
            .await
            .unwrap();
        let racers: Vec<_> = [first.clone(), first.clone(), second.clone(), second.clone()]
            .into_iter()
            .map(|store| {
                let id = id.clone();
                tokio::spawn(async move { store.consume(&id).await.unwrap() })
            })
            .collect();
        let mut winners = 0;
        for racer in racers {
            winners += usize::from(racer.await.unwrap());
        }
        assert_eq!(winners, 1, "round {round}");
    }
}

async fn find_latest_returns_the_newest_unconsumed_request_for_the_exact_call(b: Backend) {
    let clock = TestClock::new();
    let store = b.approvals(&clock).await;
    let args = json!({"path": "a"});
    let hash = canonical_hash(&args);
    let older = store
        .create(new_approval("write_file", args.clone()))
        .await
        .unwrap()
        .id;
    store.decide(&older, deny()).await.unwrap();
    clock.set(T0 + 10);
    let newer = store
        .create(new_approval("write_file", args.clone()))
        .await
        .unwrap();
    store
        .create(new_approval("write_file", json!({"path": "b"})))
        .await
        .unwrap();

    assert_eq!(
        store
            .find_latest("agent-1", "write_file", &hash)
            .await
            .unwrap(),
        Some(newer)
    );
    assert_eq!(
        store
            .find_latest("agent-2", "write_file", &hash)
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        store
            .find_latest("agent-1", "edit_file", &hash)
            .await
            .unwrap(),
        None
    );
}

async fn a_decision_survives_reopening_the_database(b: Backend) {
    let clock = TestClock::new();
    let args = json!({"path": "a"});
    let id = {
        let store = b.approvals(&clock).await;
        store
            .create(new_approval("write_file", args.clone()))
            .await
            .unwrap()
            .id
    };
    let decided = {
        let store = b.approvals(&clock).await;
        assert_eq!(
            store.get(&id).await.unwrap(),
            Some(expected_pending(&id, args))
        );
        store
            .decide(&id, approve(DecisionScope::Once))
            .await
            .unwrap()
    };
    let store = b.approvals(&clock).await;
    assert_eq!(store.get(&id).await.unwrap(), Some(decided.clone()));
    assert_eq!(decided.status, ApprovalStatus::Approved);
}

async fn two_stores_on_one_file_see_each_others_writes(b: Backend) {
    let clock = TestClock::new();
    let server = b.approvals(&clock).await;
    let cli = b.approvals(&clock).await;

    let created = server
        .create(new_approval("write_file", json!({"path": "a"})))
        .await
        .unwrap();
    assert_eq!(
        cli.list(Some(ApprovalStatus::Pending), 10).await.unwrap(),
        vec![created.clone()]
    );
    let decided = cli
        .decide(&created.id, approve(DecisionScope::Once))
        .await
        .unwrap();
    assert_eq!(server.get(&created.id).await.unwrap(), Some(decided));
}

async fn a_decision_records_the_channel_it_came_through(b: Backend) {
    let clock = TestClock::new();
    let store = b.approvals(&clock).await;
    let args = json!({"path": "a"});
    let id = store
        .create(new_approval("write_file", args.clone()))
        .await
        .unwrap()
        .id;
    let other = store
        .create(new_approval("write_file", json!({"path": "b"})))
        .await
        .unwrap()
        .id;

    clock.set(T0 + 1_000);
    let decided = store
        .decide(
            &id,
            Decision {
                via: Some("slack:ops".into()),
                ..approve(DecisionScope::Once)
            },
        )
        .await
        .unwrap();
    let expected = ApprovalRequest {
        status: ApprovalStatus::Approved,
        decided_by: Some("alice".into()),
        decided_at_ms: Some(T0 + 1_000),
        scope: Some(DecisionScope::Once),
        reason: Some("looks fine".into()),
        decided_via: Some("slack:ops".into()),
        ..expected_pending(&id, args)
    };
    assert_eq!(decided, expected);
    // Through the console, the API or the CLI: no channel.
    let console = store.decide(&other, deny()).await.unwrap();
    assert_eq!(console.decided_via, None);

    // Another connection (process, replica) reads it back.
    let reader = b.approvals(&clock).await;
    assert_eq!(reader.get(&id).await.unwrap(), Some(expected.clone()));
    let listed = reader.list(None, 10).await.unwrap();
    let via: Vec<_> = listed
        .iter()
        .map(|r| (r.id.as_str(), r.decided_via.as_deref()))
        .collect();
    assert_eq!(
        via,
        vec![(other.as_str(), None), (id.as_str(), Some("slack:ops"))]
    );
    assert_eq!(
        reader
            .list(Some(ApprovalStatus::Approved), 10)
            .await
            .unwrap(),
        vec![expected]
    );
}

/// An embedded database made before schema 5 gains `decided_via` in place when opened.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_older_embedded_database_gains_the_decision_channel_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("toolgate.db");
    {
        let old = rusqlite::Connection::open(&db).unwrap();
        old.execute_batch(
            "CREATE TABLE approvals (
                id TEXT PRIMARY KEY, created_at_ms INTEGER NOT NULL,
                expires_at_ms INTEGER NOT NULL, status TEXT NOT NULL, principal TEXT NOT NULL,
                session TEXT NOT NULL, role TEXT NOT NULL, tool TEXT NOT NULL,
                risk TEXT NOT NULL, args_hash TEXT NOT NULL, arguments TEXT NOT NULL,
                requires_confirmation INTEGER NOT NULL, decided_by TEXT, decided_at_ms INTEGER,
                scope TEXT, pattern TEXT, reason TEXT, consumed INTEGER NOT NULL DEFAULT 0,
                issuer TEXT, subject TEXT);
             PRAGMA user_version = 4;",
        )
        .unwrap();
    }
    let clock = TestClock::new();
    let store = toolgate_store::ApprovalStore::open(&db)
        .unwrap()
        .with_clock(clock.clock());
    let id = store
        .create(new_approval("write_file", json!({"path": "a"})))
        .await
        .unwrap()
        .id;
    let decision = Decision {
        via: Some("telegram:oncall".into()),
        ..approve(DecisionScope::Once)
    };
    store.decide(&id, decision).await.unwrap();
    let read = store.get(&id).await.unwrap().unwrap();
    assert_eq!(read.decided_via.as_deref(), Some("telegram:oncall"));
    assert_eq!(
        toolgate_store::db::embedded_schema(&db).unwrap(),
        toolgate_store::db::EMBEDDED_SCHEMA
    );
}

#[test]
fn canonical_hash_ignores_key_order_and_whitespace() {
    let written_one_way: Value =
        serde_json::from_str(r#"{"b": 1, "a": {"y": [1, "x"], "x": null}}"#).unwrap();
    let written_another: Value =
        serde_json::from_str(r#"{"a":{"x":null,"y":[1,"x"]},"b":1}"#).unwrap();
    assert_eq!(
        canonical_hash(&written_one_way),
        canonical_hash(&written_another)
    );
    // sha256sum of the canonical text {"a":{"x":null,"y":[1,"x"]},"b":1}
    assert_eq!(
        canonical_hash(&written_one_way),
        "07a4c1f8224e8bb7a349722dae0bf17479db3d1b8daee8f96bbe5c776b96be90"
    );
    assert_ne!(
        canonical_hash(&json!({"a": 1})),
        canonical_hash(&json!({"a": "1"}))
    );
}

/// `canonical_hash` sorts keys itself, but other code may treat `serde_json::to_string` as
/// canonical: that holds only while serde_json's `preserve_order` feature is off.
#[test]
fn serde_json_sorts_object_keys() {
    let value: Value = serde_json::from_str(r#"{"b": 1, "a": {"y": 2, "x": 3}}"#).unwrap();
    assert_eq!(
        serde_json::to_string(&value).unwrap(),
        r#"{"a":{"x":3,"y":2},"b":1}"#
    );
}

on_both_backends!(
    create_get_and_list,
    pending_request_expires_by_the_clock_and_cannot_be_decided_after,
    decide_records_the_decision_and_a_second_decision_conflicts,
    dangerous_tool_needs_its_name_typed_to_approve_but_not_to_deny,
    an_approved_request_is_consumed_exactly_once,
    racing_consumers_on_two_connections_let_exactly_one_through,
    find_latest_returns_the_newest_unconsumed_request_for_the_exact_call,
    a_decision_survives_reopening_the_database,
    two_stores_on_one_file_see_each_others_writes,
    a_decision_records_the_channel_it_came_through,
);
