//! `[[policy.rules]]` through the whole pipeline: the deciding rule reaches the caller's
//! error and the audit record; an ask rule opens an approval the role would not have asked.

use std::sync::Arc;

use serde_json::json;
use toolgate_gateway::policy::PolicyConfig;
use toolgate_gateway::{Arguments, CallRequest, Identity};

use super::fixture::{Harness, code};

fn harness() -> Harness {
    let mut cfg = super::fixture::config();
    cfg.policy = toml::from_str::<PolicyConfig>(
        r#"
        [[rules]]
        id = "no-secrets"
        when = 'tool == "echo" && args.note.contains("secret")'
        decision = "deny"
        reason = "secrets stay out of tool calls"

        [[rules]]
        id = "ops-write"
        when = 'tool == "writer" && "ops" in claims.groups'
        decision = "allow"

        [[rules]]
        id = "loud-echo-asks"
        when = 'tool == "echo" && args.note.endsWith("!")'
        decision = "ask"
        "#,
    )
    .unwrap();
    Harness::open(tempfile::tempdir().unwrap(), &cfg)
}

#[tokio::test]
async fn a_denying_rule_is_in_the_error_details_and_the_audit_record() {
    let h = harness();
    let e = h.call("echo", json!({"note": "the secret is 42"})).await;
    let err = e.error.as_ref().unwrap();
    assert_eq!(
        (code(&e), err.message.as_str(), err.details.clone()),
        (
            "policy_denied",
            "policy rule \"no-secrets\" denies `echo`: secrets stay out of tool calls",
            Some(json!({"rule": "no-secrets"}))
        )
    );
    assert_eq!(h.echo.count(), 0);
    let last = h.audit_lines().pop().unwrap();
    assert_eq!(
        (&last["outcome"], &last["policy_rule"]),
        (&json!("policy_denied"), &json!("no-secrets"))
    );

    // A call no rule decides carries no rule id.
    let e = h.call("echo", json!({"note": "hello"})).await;
    assert!(e.ok);
    let last = h.audit_lines().pop().unwrap();
    assert_eq!(
        (&last["outcome"], last.get("policy_rule")),
        (&json!("ok"), None)
    );
}

#[tokio::test]
async fn an_ask_rule_requires_approval_for_a_call_the_role_allows() {
    let h = harness();
    // `echo` is read risk: the role allows it, the rule asks.
    let e = h.call("echo", json!({"note": "hello!"})).await;
    assert_eq!(code(&e), "approval_required");
    assert_eq!(h.echo.count(), 0);
    let last = h.audit_lines().pop().unwrap();
    assert_eq!(last["policy_rule"], "loud-echo-asks");
}

#[tokio::test]
async fn a_rule_over_the_callers_claims_allows_a_write_the_role_would_ask() {
    let h = harness();
    let call = |groups: serde_json::Value| {
        let mut request =
            CallRequest::new("writer", Arguments::Json(json!({"note": "x"}))).with_role("default");
        request.identity = Some(Arc::new(Identity {
            issuer: "https://idp.example".into(),
            subject: "alice".into(),
            claims: json!({ "groups": groups }),
        }));
        h.gateway.call(request)
    };
    assert!(call(json!(["ops"])).await.ok);
    let last = h.audit_lines().pop().unwrap();
    assert_eq!(
        (&last["policy_rule"], &last["issuer"], &last["subject"]),
        (
            &json!("ops-write"),
            &json!("https://idp.example"),
            &json!("alice")
        )
    );
    assert_eq!(code(&call(json!(["devs"])).await), "approval_required");
}
