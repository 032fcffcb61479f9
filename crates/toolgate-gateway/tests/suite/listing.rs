//! What a role is offered (`tools/list`, `/v1/tools`, the model's tools): the tools its
//! allowlist names, minus those a call would be denied outright — so a read-only caller is
//! not offered writes it can never make. With `[[policy.rules]]`, which may allow what the
//! role denies depending on the call, nothing is hidden by the role's decision.

use toolgate_gateway::policy::PolicyConfig;

use super::fixture::Harness;

fn offered(h: &Harness, role: &str) -> Vec<String> {
    let mut names: Vec<String> = h
        .gateway
        .catalog()
        .all()
        .into_iter()
        .filter(|e| h.gateway.visible_to(role, e))
        .map(|e| e.spec().name.clone())
        .collect();
    names.sort();
    names
}

#[test]
fn a_role_is_not_offered_what_it_is_denied_outright() {
    let h = Harness::new();
    let readonly = offered(&h, "readonly");
    assert!(readonly.contains(&"echo".to_owned()), "{readonly:?}");
    assert!(!readonly.contains(&"writer".to_owned()), "{readonly:?}");
    assert!(!readonly.contains(&"danger".to_owned()), "{readonly:?}");
    let default = offered(&h, "default");
    for tool in ["echo", "writer", "danger"] {
        assert!(default.contains(&tool.to_owned()), "{default:?}");
    }
    assert!(offered(&h, "no-such-role").is_empty());
}

#[test]
fn with_policy_rules_a_denied_risk_stays_offered() {
    let mut cfg = super::fixture::config();
    cfg.policy = toml::from_str::<PolicyConfig>(
        r#"
        [[rules]]
        id = "ops-write"
        when = 'tool == "writer" && "ops" in claims.groups'
        decision = "allow"
        "#,
    )
    .unwrap();
    let h = Harness::open(tempfile::tempdir().unwrap(), &cfg);
    assert!(offered(&h, "readonly").contains(&"writer".to_owned()));
}
