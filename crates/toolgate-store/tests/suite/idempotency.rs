//! Idempotency keys: first writer wins, scoped by principal and tool, persistent.

use std::sync::Arc;

use serde_json::json;
use toolgate_store::idempotency::{IdempotencyStore, IdempotentEntry};

const NOW: u64 = 1_700_000_000_000;

fn open(path: &std::path::Path) -> IdempotencyStore {
    IdempotencyStore::open(path)
        .unwrap()
        .with_clock(Arc::new(|| NOW))
}

fn entry(args_hash: &str, outcome: serde_json::Value) -> IdempotentEntry {
    IdempotentEntry {
        args_hash: args_hash.into(),
        outcome,
        created_at_ms: NOW,
    }
}

#[test]
fn put_then_get() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir.path().join("toolgate.db"));
    assert_eq!(store.get("agent-1", "write_file", "k1").unwrap(), None);
    let outcome = json!({"ok": true, "bytes": 12});
    let stored = store
        .put("agent-1", "write_file", "k1", "h1", &outcome)
        .unwrap();
    assert_eq!(stored, entry("h1", outcome.clone()));
    assert_eq!(
        store.get("agent-1", "write_file", "k1").unwrap(),
        Some(entry("h1", outcome))
    );
}

#[test]
fn the_first_writer_wins() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir.path().join("toolgate.db"));
    let first = json!({"ok": true});
    store
        .put("agent-1", "write_file", "k1", "h1", &first)
        .unwrap();
    let second = store
        .put("agent-1", "write_file", "k1", "h2", &json!({"ok": false}))
        .unwrap();
    assert_eq!(second, entry("h1", first.clone()));
    assert_eq!(
        store.get("agent-1", "write_file", "k1").unwrap(),
        Some(entry("h1", first))
    );
}

#[test]
fn keys_are_scoped_by_principal_and_tool() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&dir.path().join("toolgate.db"));
    store
        .put("agent-1", "write_file", "k", "h1", &json!(1))
        .unwrap();
    store
        .put("agent-2", "write_file", "k", "h2", &json!(2))
        .unwrap();
    store
        .put("agent-1", "edit_file", "k", "h3", &json!(3))
        .unwrap();
    let read = |principal: &str, tool: &str| store.get(principal, tool, "k").unwrap();
    assert_eq!(
        [
            read("agent-1", "write_file"),
            read("agent-2", "write_file"),
            read("agent-1", "edit_file"),
            read("agent-2", "edit_file")
        ],
        [
            Some(entry("h1", json!(1))),
            Some(entry("h2", json!(2))),
            Some(entry("h3", json!(3))),
            None
        ]
    );
}

#[test]
fn entries_survive_reopening_and_are_shared_between_stores() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("toolgate.db");
    {
        let store = open(&path);
        store
            .put("agent-1", "write_file", "k1", "h1", &json!("done"))
            .unwrap();
    }
    let reopened = open(&path);
    let other = open(&path);
    let kept = other
        .put("agent-1", "write_file", "k1", "h9", &json!("again"))
        .unwrap();
    assert_eq!(kept, entry("h1", json!("done")));
    assert_eq!(
        reopened.get("agent-1", "write_file", "k1").unwrap(),
        Some(entry("h1", json!("done")))
    );
}
