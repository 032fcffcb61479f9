//! Prompts and resources ([`Target`]) through the whole pipeline, as the MCP endpoint sends
//! its federated reads: an `ask` rule on a prompt opens an approval, the identical read runs
//! once it is approved, and every attempt is one audit record naming what it acted on.

use std::sync::Arc;

use serde_json::{Value, json};
use toolgate_gateway::policy::PolicyConfig;
use toolgate_gateway::{Arguments, CallRequest, Target};
use toolgate_protocol::Risk;
use toolgate_registry::{Availability, Entry};
use toolgate_store::approvals::{Decision, DecisionScope};

use super::fixture::{Harness, approval_id, code, scripted};

fn harness() -> Harness {
    let mut cfg = super::fixture::config();
    cfg.policy = toml::from_str::<PolicyConfig>(
        r#"
        [[rules]]
        id = "review-prompts-ask"
        when = 'target == "prompt" && tool == "mcp__s__review"'
        decision = "ask"

        [[rules]]
        id = "echo-is-no-prompt"
        when = 'target == "prompt" && tool == "echo"'
        decision = "deny"
        "#,
    )
    .unwrap();
    Harness::open(tempfile::tempdir().unwrap(), &cfg)
}

fn prompt_read(tool: &Arc<toolgate_testkit::Scripted>, args: Value) -> CallRequest {
    let name = toolgate_core::Tool::spec(tool.as_ref()).name.clone();
    let mut request = CallRequest::new(name, Arguments::Json(args));
    request.target = Target::Prompt(Some(Entry {
        tool: Arc::clone(tool) as toolgate_core::DynTool,
        availability: Availability::Available,
    }));
    request.wait_for_approval = Some(false);
    request
}

#[tokio::test]
async fn an_asked_prompt_runs_once_approved_and_each_attempt_is_audited() {
    let h = harness();
    let review = scripted("mcp__s__review", Risk::Read);
    let args = json!({"note": "PR 42"});

    let first = h.gateway.call(prompt_read(&review, args.clone())).await;
    assert_eq!(code(&first), "approval_required", "{first:?}");
    assert_eq!(review.count(), 0);
    let id = approval_id(&first);
    let decision = Decision {
        approve: true,
        scope: DecisionScope::Once,
        pattern: None,
        decided_by: "alice".to_owned(),
        reason: None,
        confirm: None,
        via: None,
    };
    h.approvals.decide(&id, decision).await.unwrap();
    let again = h.gateway.call(prompt_read(&review, args.clone())).await;
    assert_eq!(code(&again), "ok", "{again:?}");
    assert_eq!(review.count(), 1);

    let records: Vec<Value> = h
        .audit_lines()
        .into_iter()
        .filter(|r| r["tool"] == "mcp__s__review")
        .collect();
    let seen: Vec<(&Value, &Value)> = records
        .iter()
        .map(|r| (&r["outcome"], &r["approver"]))
        .collect();
    assert_eq!(
        seen,
        [
            (&json!("approval_required"), &Value::Null),
            (&json!("ok"), &json!("alice"))
        ]
    );
}

/// A catalog tool and a prompt of the same name are different acts: the rule for the prompt
/// does not touch the tool.
#[tokio::test]
async fn a_rule_for_prompts_leaves_the_tool_of_the_same_name_alone() {
    let h = harness();
    let prompt = scripted("echo", Risk::Read);
    let refused = h.gateway.call(prompt_read(&prompt, json!({}))).await;
    assert_eq!(code(&refused), "policy_denied");
    assert_eq!(prompt.count(), 0);
    let tool = h.call("echo", json!({})).await;
    assert_eq!(code(&tool), "ok");
}
