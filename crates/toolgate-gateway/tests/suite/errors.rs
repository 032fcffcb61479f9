//! Every code of the closed vocabulary, produced by the real pipeline, and audited.

use std::collections::BTreeSet;

use serde_json::json;
use toolgate_gateway::{Arguments, CallRequest};
use toolgate_protocol::ErrorCode;
use toolgate_registry::Availability;
use toolgate_store::approvals::{Decision, DecisionScope};

use super::fixture::{Harness, approval_id, code};

async fn decide(h: &Harness, id: &str, approve: bool) {
    let d = Decision {
        approve,
        scope: DecisionScope::Once,
        pattern: None,
        decided_by: "op".into(),
        reason: None,
        confirm: Some("danger".into()),
        via: None,
    };
    h.approvals.decide(id, d).await.unwrap();
}

#[tokio::test]
async fn every_error_code_is_produced_and_audited() {
    let h = Harness::new();
    let mut seen = BTreeSet::new();
    let mut record = |e: &toolgate_protocol::Envelope| {
        seen.insert(code(e).to_owned());
    };

    record(&h.call("nope", json!({})).await);
    record(&h.call_as("narrow", "writer", json!({})).await);
    record(&h.call("echo", json!({"sleep_ms": "soon"})).await);
    record(&h.call_as("readonly", "writer", json!({})).await);
    let pending = h.call("writer", json!({"note": "a"})).await;
    record(&pending);
    let denied_req = h.call("writer", json!({"note": "b"})).await;
    decide(&h, &approval_id(&denied_req), false).await;
    record(&h.call("writer", json!({"note": "b"})).await);
    h.gateway
        .catalog()
        .set_availability("echo", Availability::Unavailable("server down".into()));
    record(&h.call("echo", json!({})).await);
    h.gateway
        .catalog()
        .set_availability("echo", Availability::Available);
    record(&h.call("echo", json!({"fail": "disk full"})).await);
    record(&h.call("echo", json!({"sleep_ms": 5000})).await);
    record(&h.call("echo", json!({"big": 20_000})).await);
    let req = CallRequest::new("echo", Arguments::Json(json!({"sleep_ms": 5000})));
    let cancel = req.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        cancel.cancel();
    });
    record(&h.gateway.call(req).await);

    // Expiry: a gateway whose approvals live 1 second.
    let mut cfg = super::fixture::config();
    cfg.approvals.ttl_secs = 1;
    let short = Harness::open(tempfile::tempdir().unwrap(), &cfg);
    let first = short.call("writer", json!({})).await;
    assert_eq!(code(&first), "approval_required");
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let expired = short.call("writer", json!({})).await;
    assert_eq!(code(&expired), "approval_expired");
    seen.insert(code(&expired).to_owned());

    // A quota of one call an hour.
    let mut cfg = super::fixture::config();
    cfg.quotas = vec![toolgate_gateway::quota::QuotaConfig {
        id: "hourly".into(),
        principal: "*".into(),
        tool: "*".into(),
        per: toolgate_gateway::quota::QuotaKey::All,
        calls: Some(1),
        interval: "1h".into(),
        burst: None,
        max_in_flight: None,
    }];
    let limited = Harness::open(tempfile::tempdir().unwrap(), &cfg);
    assert!(limited.call("echo", json!({})).await.ok);
    seen.insert(code(&limited.call("echo", json!({})).await).to_owned());

    let all: BTreeSet<String> = ErrorCode::ALL
        .iter()
        .map(|c| c.as_str().to_owned())
        .collect();
    assert_eq!(
        seen,
        all,
        "missing: {:?}",
        all.difference(&seen).collect::<Vec<_>>()
    );

    // Every attempt left an outcome record with its code.
    let outcomes: Vec<String> = h
        .audit_lines()
        .iter()
        .filter(|r| r["kind"] == "outcome")
        .map(|r| r["outcome"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(outcomes.len(), 12);
    for c in [
        "unknown_tool",
        "forbidden",
        "invalid_arguments",
        "policy_denied",
        "approval_required",
        "approval_denied",
        "unavailable",
        "execution_failed",
        "timeout",
        "result_too_large",
        "cancelled",
    ] {
        assert!(
            outcomes.iter().any(|o| o == c),
            "no audit record for {c}: {outcomes:?}"
        );
    }
}

#[tokio::test]
async fn malformed_text_arguments_are_audited_verbatim() {
    let h = Harness::new();
    let e = h.call_text("echo", "{\"note\": ").await;
    assert_eq!(code(&e), "invalid_arguments");
    let last = h.audit_lines().pop().unwrap();
    assert_eq!(last["arguments"], json!({"_unparsed": "{\"note\": "}));
    assert_eq!(last["outcome"], "invalid_arguments");
}

#[tokio::test]
async fn layers_run_in_the_declared_order() {
    let h = Harness::new();
    assert_eq!(
        h.gateway.layer_names(),
        [
            "telemetry",
            "audit",
            "admit",
            "lookup",
            "authorize",
            "quota",
            "validate",
            "policy",
            "idempotency",
            "approve",
            "intent",
            "govern",
            "execute"
        ]
    );
}

#[tokio::test]
async fn write_calls_leave_an_attempt_before_the_outcome() {
    let h = Harness::new();
    let e = h.call_as("auto", "writer", json!({"note": "x"})).await;
    assert!(e.ok);
    let kinds: Vec<(String, String)> = h
        .audit_lines()
        .iter()
        .map(|r| {
            (
                r["kind"].as_str().unwrap().to_owned(),
                r["outcome"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("attempt".into(), "started".into()),
            ("outcome".into(), "ok".into())
        ]
    );
}

#[tokio::test]
async fn offloaded_results_page_back_through_read_result() {
    let h = Harness::new();
    let e = h.call("echo", json!({"big": 1000})).await;
    let t = e.truncated.clone().unwrap();
    assert_eq!((t.total_bytes, t.returned_bytes), (1000, 100));
    let page = h
        .call(
            "read_result",
            json!({"id": t.result_id.unwrap(), "offset": 900}),
        )
        .await;
    assert!(page.ok, "{page:?}");
    let data = page.data.unwrap();
    assert_eq!(
        (data["text"].as_str().unwrap().len(), data["eof"].as_bool()),
        (100, Some(true))
    );
}
