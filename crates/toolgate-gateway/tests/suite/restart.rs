//! Approvals are state, not memory: a pending request outlives the process that made it.

use serde_json::json;
use toolgate_store::approvals::{ApprovalStatus, Decision, DecisionScope};

use super::fixture::{Harness, approval_id, code, config};

#[tokio::test]
async fn an_approval_survives_a_restart() {
    let first = Harness::new();
    let e = first.call("danger", json!({"note": "rm -rf build"})).await;
    assert_eq!(code(&e), "approval_required");
    let id = approval_id(&e);
    let Harness { dir, gateway, .. } = first;
    drop(gateway);

    // The "other shell": a separate store handle decides.
    let second = Harness::open(dir, &config());
    let pending = second
        .approvals
        .list(Some(ApprovalStatus::Pending), 10)
        .await
        .unwrap();
    assert_eq!(
        pending.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(),
        [id.as_str()]
    );
    second
        .approvals
        .decide(
            &id,
            Decision {
                approve: true,
                scope: DecisionScope::Once,
                pattern: None,
                decided_by: "ops".into(),
                reason: None,
                confirm: Some("danger".into()),
                via: None,
            },
        )
        .await
        .unwrap();
    let e = second.call("danger", json!({"note": "rm -rf build"})).await;
    assert!(e.ok, "{e:?}");
    assert_eq!(
        second
            .danger
            .calls
            .load(std::sync::atomic::Ordering::SeqCst),
        1
    );
    let outcome = second.audit_lines().pop().unwrap();
    assert_eq!(
        (
            outcome["approver"].as_str(),
            outcome["approval_id"].as_str()
        ),
        (Some("ops"), Some(id.as_str()))
    );
}
