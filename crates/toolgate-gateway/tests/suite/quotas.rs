//! `[[quotas]]` through the real pipeline: a principal's bucket refuses the call past its
//! burst with `rate_limited`, `details.retry_after_ms` and an audit record, while another
//! principal's bucket is untouched; a per-tool bucket is shared by every caller; a cap on
//! calls in flight refuses a concurrent call while one holds the slot and admits the next
//! once it is given back; a refused call never reaches the tool.

use std::sync::Arc;

use serde_json::{Value, json};
use toolgate_gateway::quota::{QuotaConfig, QuotaKey};
use toolgate_gateway::{Arguments, CallRequest, GatewayConfig};
use toolgate_protocol::Envelope;

use super::fixture::{Harness, code};

fn quota(id: &str, per: QuotaKey) -> QuotaConfig {
    QuotaConfig {
        id: id.to_owned(),
        principal: "*".to_owned(),
        tool: "echo".to_owned(),
        per,
        calls: None,
        interval: "1h".to_owned(),
        burst: None,
        max_in_flight: None,
    }
}

fn harness(quotas: Vec<QuotaConfig>) -> Harness {
    let mut cfg: GatewayConfig = super::fixture::config();
    cfg.quotas = quotas;
    Harness::open(tempfile::tempdir().unwrap(), &cfg)
}

async fn call_by(h: &Harness, principal: &str, args: Value) -> Envelope {
    h.gateway
        .call(CallRequest::new("echo", Arguments::Json(args)).with_principal(principal))
        .await
}

#[tokio::test]
async fn a_principals_bucket_refuses_past_its_burst_and_is_audited() {
    let h = harness(vec![QuotaConfig {
        calls: Some(2),
        ..quota("two-an-hour", QuotaKey::Principal)
    }]);
    for _ in 0..2 {
        assert!(call_by(&h, "alice", json!({})).await.ok);
    }
    let over = call_by(&h, "alice", json!({"note": "third"})).await;
    assert_eq!(code(&over), "rate_limited");
    let err = over.error.as_ref().unwrap();
    assert!(err.retryable);
    assert_eq!(err.message, "quota \"two-an-hour\": over 2 calls per 1h");
    let details = err.details.as_ref().unwrap();
    assert_eq!(details["quota"], "two-an-hour");
    let wait = details["retry_after_ms"].as_u64().unwrap();
    assert!((1_700_000..=1_800_000).contains(&wait), "{wait}");
    assert!(
        call_by(&h, "bob", json!({})).await.ok,
        "bob has his own bucket"
    );

    let last = h.audit_lines().pop().unwrap();
    assert_eq!(
        (last["principal"].as_str(), last["outcome"].as_str()),
        (Some("bob"), Some("ok"))
    );
    let refused: Vec<Value> = h
        .audit_lines()
        .into_iter()
        .filter(|r| r["outcome"] == "rate_limited")
        .collect();
    assert_eq!(refused.len(), 1);
    assert_eq!(refused[0]["arguments"], json!({"note": "third"}));
    assert!(
        refused[0]["error"]
            .as_str()
            .unwrap()
            .contains("two-an-hour")
    );
}

#[tokio::test]
async fn a_tool_bucket_is_shared_by_every_caller() {
    let h = harness(vec![QuotaConfig {
        calls: Some(1),
        ..quota("echo-once", QuotaKey::Tool)
    }]);
    assert!(call_by(&h, "alice", json!({})).await.ok);
    assert_eq!(code(&call_by(&h, "bob", json!({})).await), "rate_limited");
    // Another tool is not counted.
    assert!(
        h.call("writer", json!({"note": "x"}))
            .await
            .error
            .is_some_and(|e| e.code.as_str() == "approval_required")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_in_flight_cap_refuses_a_concurrent_call_until_the_slot_is_given_back() {
    let h = Arc::new(harness(vec![QuotaConfig {
        max_in_flight: Some(1),
        ..quota("one-at-a-time", QuotaKey::Principal)
    }]));
    let slow = {
        let h = Arc::clone(&h);
        tokio::spawn(async move { call_by(&h, "alice", json!({"sleep_ms": 400})).await })
    };
    // Wait until the slow call is running (it is audited only at its end; poll the tool).
    tokio::time::sleep(std::time::Duration::from_millis(150)).await;
    let refused = call_by(&h, "alice", json!({})).await;
    assert_eq!(code(&refused), "rate_limited", "{refused:?}");
    assert_eq!(
        refused.error.as_ref().unwrap().message,
        "quota \"one-at-a-time\": 1 calls already in flight"
    );
    assert!(
        call_by(&h, "bob", json!({})).await.ok,
        "another principal's slot"
    );
    assert!(slow.await.unwrap().ok);
    assert!(
        call_by(&h, "alice", json!({})).await.ok,
        "the slot was given back"
    );
}

#[tokio::test]
async fn bad_quotas_are_refused_with_their_id() {
    let mut cfg: GatewayConfig = super::fixture::config();
    cfg.quotas = vec![QuotaConfig {
        interval: "soon".to_owned(),
        calls: Some(1),
        ..quota("typo", QuotaKey::All)
    }];
    let dir = tempfile::tempdir().unwrap();
    let deps = toolgate_gateway::GatewayDeps::open_dir(
        dir.path(),
        Arc::new(toolgate_registry::Catalog::new()),
        toolgate_audit::Durability::Buffered,
    )
    .unwrap();
    let err = toolgate_gateway::Gateway::new(deps, &cfg).err().unwrap();
    assert!(
        err.to_string()
            .starts_with("[[quotas]] \"typo\": interval `soon`:"),
        "{err}"
    );
}
