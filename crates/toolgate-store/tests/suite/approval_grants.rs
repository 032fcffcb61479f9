//! Standing grants created by `session` and `always` approvals, and argument patterns.

use serde_json::{Value, json};
use toolgate_store::StoreError;
use toolgate_store::approvals::{
    ApprovalStore, Decision, DecisionScope, Grant, NewApproval, canonical_hash, pattern_matches,
};

use super::approval_fixtures::{T0, TestClock, approve, new_approval};
use crate::suite::backends::Backend;

/// Creates a request for `new` and approves it with `decision`; returns the request id.
async fn approved(store: &ApprovalStore, new: NewApproval, decision: Decision) -> String {
    let id = store.create(new).await.unwrap().id;
    store.decide(&id, decision).await.unwrap();
    id
}

async fn covers(
    store: &ApprovalStore,
    principal: &str,
    session: &str,
    tool: &str,
    args: Value,
) -> bool {
    let hash = canonical_hash(&args);
    store
        .find_grant(principal, session, tool, &args, &hash)
        .await
        .unwrap()
        .is_some()
}

async fn session_grant_covers_only_the_same_principal_session_and_tool(b: Backend) {
    let clock = TestClock::new();
    let store = b.approvals(&clock).await;
    let args = json!({"path": "a"});
    let id = approved(
        &store,
        new_approval("write_file", args.clone()),
        approve(DecisionScope::Session),
    )
    .await;

    let grant = store
        .find_grant(
            "agent-1",
            "sess-1",
            "write_file",
            &json!({"path": "other"}),
            "h",
        )
        .await
        .unwrap();
    let expected = Grant {
        id: 1,
        scope: DecisionScope::Session,
        principal: "agent-1".into(),
        session: Some("sess-1".into()),
        tool: "write_file".into(),
        args_hash: None,
        pattern: None,
        created_by: "alice".into(),
        created_at_ms: T0,
        approval_id: id,
    };
    assert_eq!(grant, Some(expected.clone()));
    assert_eq!(store.list_grants().await.unwrap(), vec![expected]);

    assert!(!covers(&store, "agent-1", "sess-2", "write_file", args.clone()).await);
    assert!(!covers(&store, "agent-2", "sess-1", "write_file", args.clone()).await);
    assert!(!covers(&store, "agent-1", "sess-1", "edit_file", args).await);
}

async fn always_grant_with_a_pattern_covers_matching_arguments_in_any_session(b: Backend) {
    let clock = TestClock::new();
    let store = b.approvals(&clock).await;
    let decision = Decision {
        pattern: Some(json!({"path": "src/*"})),
        ..approve(DecisionScope::Always)
    };
    approved(
        &store,
        new_approval("write_file", json!({"path": "src/main.rs"})),
        decision,
    )
    .await;

    let grants = store.list_grants().await.unwrap();
    assert_eq!(grants.len(), 1);
    let grant = &grants[0];
    assert_eq!(
        (&grant.session, &grant.args_hash, &grant.pattern),
        (&None, &None, &Some(json!({"path": "src/*"})))
    );

    let matching = json!({"path": "src/a.rs", "content": "x"});
    assert!(
        covers(
            &store,
            "agent-1",
            "any-session",
            "write_file",
            matching.clone()
        )
        .await
    );
    assert!(
        !covers(
            &store,
            "agent-1",
            "sess-1",
            "write_file",
            json!({"path": "etc/x"})
        )
        .await
    );
    assert!(
        !covers(
            &store,
            "agent-1",
            "sess-1",
            "write_file",
            json!({"content": "x"})
        )
        .await
    );
    assert!(!covers(&store, "agent-2", "sess-1", "write_file", matching.clone()).await);
    assert!(!covers(&store, "agent-1", "sess-1", "edit_file", matching).await);
}

async fn always_grant_without_a_pattern_covers_exactly_the_approved_arguments(b: Backend) {
    let clock = TestClock::new();
    let store = b.approvals(&clock).await;
    let args = json!({"path": "src/main.rs", "mode": "append"});
    approved(
        &store,
        new_approval("write_file", args.clone()),
        approve(DecisionScope::Always),
    )
    .await;

    let grant = &store.list_grants().await.unwrap()[0];
    assert_eq!(
        (&grant.args_hash, &grant.pattern),
        (&Some(canonical_hash(&args)), &None)
    );
    // Key order does not change the identity of the arguments.
    let reordered: Value =
        serde_json::from_str(r#"{"mode":"append","path":"src/main.rs"}"#).unwrap();
    assert!(covers(&store, "agent-1", "sess-9", "write_file", reordered).await);
    assert!(
        !covers(
            &store,
            "agent-1",
            "sess-1",
            "write_file",
            json!({"path": "src/main.rs"})
        )
        .await
    );
}

async fn once_approvals_and_denials_create_no_grant(b: Backend) {
    let clock = TestClock::new();
    let store = b.approvals(&clock).await;
    approved(
        &store,
        new_approval("write_file", json!({"path": "a"})),
        approve(DecisionScope::Once),
    )
    .await;
    let deny_always = Decision {
        approve: false,
        ..approve(DecisionScope::Always)
    };
    approved(
        &store,
        new_approval("write_file", json!({"path": "b"})),
        deny_always,
    )
    .await;
    assert_eq!(store.list_grants().await.unwrap(), vec![]);
    assert!(
        !covers(
            &store,
            "agent-1",
            "sess-1",
            "write_file",
            json!({"path": "a"})
        )
        .await
    );
}

async fn a_non_object_pattern_is_rejected_and_nothing_is_recorded(b: Backend) {
    let clock = TestClock::new();
    let store = b.approvals(&clock).await;
    let before = store
        .create(new_approval("write_file", json!({"path": "a"})))
        .await
        .unwrap();
    let decision = Decision {
        pattern: Some(json!("src/*")),
        ..approve(DecisionScope::Always)
    };
    let err = store.decide(&before.id, decision).await.unwrap_err();
    assert!(
        matches!(&err, StoreError::Conflict(m) if m == &format!(
            "{}: an argument pattern must be a JSON object of argument names to globs or \
             values, like {{\"path\": \"src/*\"}}; got \"src/*\"",
            before.id
        )),
        "{err:?}"
    );
    assert_eq!(store.get(&before.id).await.unwrap(), Some(before));
    assert_eq!(store.list_grants().await.unwrap(), vec![]);
}

async fn revoked_grants_no_longer_cover_calls(b: Backend) {
    let clock = TestClock::new();
    let store = b.approvals(&clock).await;
    approved(
        &store,
        new_approval("write_file", json!({"path": "a"})),
        approve(DecisionScope::Session),
    )
    .await;
    let id = store.list_grants().await.unwrap()[0].id;

    // Grants persist and are shared: another store on the file revokes it.
    let other = b.approvals(&clock).await;
    assert!(other.revoke_grant(id).await.unwrap());
    assert!(!other.revoke_grant(id).await.unwrap());
    assert!(
        !covers(
            &store,
            "agent-1",
            "sess-1",
            "write_file",
            json!({"path": "a"})
        )
        .await
    );
}

#[test]
fn pattern_semantics() {
    let pattern = json!({"path": "src/*.rs", "mode": "append", "count": 2});
    let cases = [
        (
            json!({"path": "src/a.rs", "mode": "append", "count": 2}),
            true,
        ),
        (
            json!({"path": "src/a.rs", "mode": "append", "count": 2, "extra": [1]}),
            true,
        ),
        (
            json!({"path": "src/a.rs", "mode": "append", "count": 3}),
            false,
        ),
        (
            json!({"path": "src/a.rs", "mode": "append", "count": "2"}),
            false,
        ),
        (json!({"path": "src/a.rs", "mode": "append"}), false),
        (
            json!({"path": "src/a.txt", "mode": "append", "count": 2}),
            false,
        ),
        (json!({"path": 7, "mode": "append", "count": 2}), false),
        (json!(["src/a.rs"]), false),
    ];
    let results: Vec<(Value, bool)> = cases
        .iter()
        .map(|(args, _)| (args.clone(), pattern_matches(&pattern, args)))
        .collect();
    assert_eq!(results, cases.to_vec());
    assert!(pattern_matches(&json!({}), &json!({"anything": 1})));
    assert!(!pattern_matches(&json!("src/*"), &json!({"path": "src/a"})));
}

on_both_backends!(
    session_grant_covers_only_the_same_principal_session_and_tool,
    always_grant_with_a_pattern_covers_matching_arguments_in_any_session,
    always_grant_without_a_pattern_covers_exactly_the_approved_arguments,
    once_approvals_and_denials_create_no_grant,
    a_non_object_pattern_is_rejected_and_nothing_is_recorded,
    revoked_grants_no_longer_cover_calls,
);
