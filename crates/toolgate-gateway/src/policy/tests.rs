//! The policy layer against a probe for the inner layers, and `[[policy.rules]]` as a table:
//! each row a call, the rule that must decide it and how.
use super::*;
use crate::call::Identity;
use crate::testing::{call_for, echo_tool, run_layer_on};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use toolgate_protocol::Risk;

fn layer() -> PolicyLayer {
    PolicyLayer::new(
        Arc::new(Roles::compile(&BTreeMap::new()).unwrap()),
        Arc::new(PolicyRules::default()),
    )
}

#[tokio::test]
async fn deny_stops_and_allow_passes() {
    let mut call = call_for(echo_tool("w", Risk::Write), json!({}));
    call.request.role = "readonly".into();
    let err = run_layer_on(&layer(), &mut call).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::PolicyDenied);
    assert_eq!(
        err.message,
        "policy denies `w` (write risk) for role `readonly`"
    );

    let mut call = call_for(echo_tool("r", Risk::Read), json!({}));
    assert!(run_layer_on(&layer(), &mut call).await.is_ok());
    assert_eq!(call.decision, Some(Decision::Allow));
}

#[tokio::test]
async fn ask_is_recorded_for_the_approval_layer() {
    let mut call = call_for(echo_tool("sh", Risk::Dangerous), json!({}));
    run_layer_on(&layer(), &mut call).await.unwrap();
    assert_eq!(call.decision, Some(Decision::Ask { confirm: true }));
}

#[tokio::test]
async fn the_tools_own_check_runs_before_approval() {
    let mut call = call_for(
        echo_tool("w", Risk::Write),
        json!({"deny": "outside the workspace"}),
    );
    let err = run_layer_on(&layer(), &mut call).await.unwrap_err();
    assert_eq!(
        (err.code, err.message.as_str()),
        (ErrorCode::PolicyDenied, "outside the workspace")
    );
    assert_eq!(call.decision, None);
}

pub(super) const RULES: &str = r#"
[[rules]]
id = "no-rm-rf"
when = 'tool == "shell" && args.command.matches("rm\\s+-rf")'
decision = "deny"
reason = "recursive deletes are not allowed"

[[rules]]
id = "admins-run-shell"
when = 'tool == "shell" && "admins" in claims.groups'
decision = "allow"

[[rules]]
id = "github-needs-admin"
when = 'tool.startsWith("mcp__github__") && !("admins" in claims.groups)'
decision = "ask"

[[rules]]
id = "dangerous-asks"
when = 'risk == "dangerous"'
decision = "ask"

[[rules]]
id = "prod-deploys"
when = 'tool == "deploy" && args.env == "prod"'
decision = "deny"

[[rules]]
id = "docs-read"
when = 'tool == "read_file" && args.path.startsWith("docs/")'
decision = "allow"

[[rules]]
id = "not-bool"
when = 'tool == "oddity" ? 1 : false'
decision = "ask"

[[rules]]
id = "docs-write"
when = 'tool == "write_file" && args.path.startsWith("docs/")'
decision = "allow"

[[rules]]
id = "write-ask"
when = 'tool == "write_file" && principal != "ci" && source == "builtin"'
decision = "ask"
confirm = true
"#;

fn rules(toml_text: &str) -> PolicyRules {
    let config: PolicyConfig = toml::from_str(toml_text).unwrap();
    PolicyRules::compile(&config).unwrap()
}

fn input<'a>(
    tool: &'a str,
    risk: Risk,
    args: &'a Value,
    claims: Option<&'a Value>,
) -> PolicyInput<'a> {
    PolicyInput {
        tool,
        target: crate::TargetKind::Tool,
        args,
        claims,
        principal: "alice",
        role: "default",
        risk,
        source: "builtin",
        issuer: "",
        subject: "",
        paths: None,
    }
}

/// What must decide a call: `None` (the role decides), or the rule, its decision, and
/// whether it decided by failing closed.
type Expected = Option<(&'static str, Decision, bool)>;

/// A row of the table: what it shows, the tool, its risk, the arguments, the claims.
type Row<'a> = (&'a str, &'a str, Risk, Value, Option<&'a Value>, Expected);

#[test]
fn rules_table() {
    use Risk::{Dangerous, Read, Write};
    let ask = Decision::Ask { confirm: false };
    let ask_confirm = Decision::Ask { confirm: true };
    let admins = json!({"groups": ["admins"]});
    let devs = json!({"groups": ["devs"]});
    let rules = rules(RULES);
    #[rustfmt::skip]
    let table: Vec<Row<'_>> = vec![
        ("regex deny, even for admins", "shell", Dangerous, json!({"command": "rm  -rf /tmp/x"}), Some(&admins),
            Some(("no-rm-rf", Decision::Deny, false))),
        ("regex does not match `rm -r`: the claims allow", "shell", Dangerous, json!({"command": "rm -r x"}), Some(&admins),
            Some(("admins-run-shell", Decision::Allow, false))),
        ("a shell call without `command` fails the deny rule closed", "shell", Dangerous, json!({}), Some(&admins),
            Some(("no-rm-rf", Decision::Deny, true))),
        ("no identity: the allow rule's missing key is no match; risk asks", "shell", Dangerous, json!({"command": "ls"}), None,
            Some(("dangerous-asks", ask_confirm, false))),
        ("github tool, not an admin: ask", "mcp__github__create_issue", Write, json!({}), Some(&devs),
            Some(("github-needs-admin", ask, false))),
        ("github tool, no groups claim: the ask rule fails closed", "mcp__github__create_issue", Write, json!({}), None,
            Some(("github-needs-admin", ask, true))),
        ("github tool, an admin: no rule, the role decides", "mcp__github__create_issue", Write, json!({}), Some(&admins),
            None),
        ("deploy without `env` fails the deny rule closed", "deploy", Write, json!({}), None,
            Some(("prod-deploys", Decision::Deny, true))),
        ("deploy to staging: no rule", "deploy", Write, json!({"env": "staging"}), None,
            None),
        ("read without `path`: a failing allow rule is no match", "read_file", Read, json!({}), None,
            None),
        ("read under docs/: allow", "read_file", Read, json!({"path": "docs/a.md"}), None,
            Some(("docs-read", Decision::Allow, false))),
        ("a condition that is not a bool fails closed", "oddity", Read, json!({}), None,
            Some(("not-bool", ask, true))),
        ("first match wins: docs-write before write-ask", "write_file", Write, json!({"path": "docs/x.md"}), None,
            Some(("docs-write", Decision::Allow, false))),
        ("write elsewhere: the later rule asks, with the confirmation it sets", "write_file", Write, json!({"path": "src/x.rs"}), None,
            Some(("write-ask", ask_confirm, false))),
    ];
    for (name, tool, risk, args, claims, expected) in table {
        let got = rules
            .first_match(input(tool, risk, &args, claims))
            .map(|m| {
                (
                    m.rule.id().to_owned(),
                    m.rule.decision(risk),
                    m.error.is_some(),
                )
            });
        let expected = expected.map(|(id, d, failed)| (id.to_owned(), d, failed));
        assert_eq!(got, expected, "{name}");
    }
}

/// `target` tells a prompt or resource read from a tool call of the same name, through both
/// the interpreter and the guard's fast path (`target == "…"` is a string comparison).
#[test]
fn a_rule_reads_what_the_call_acts_on() {
    let rules = rules(
        r#"
[[rules]]
id = "no-resource-reads"
when = 'target == "resource" && args.uri.startsWith("file:///etc")'
decision = "deny"

[[rules]]
id = "prompts-ask"
when = 'target in ["prompt"]'
decision = "ask"
"#,
    );
    let args = json!({"uri": "file:///etc/passwd"});
    let on = |target| PolicyInput {
        target,
        ..input("mcp__fs__x", Risk::Read, &args, None)
    };
    let id = |target| {
        rules
            .first_match(on(target))
            .map(|m| m.rule.id().to_owned())
    };
    use crate::TargetKind::{Prompt, Resource, Tool};
    assert_eq!(id(Resource).as_deref(), Some("no-resource-reads"));
    assert_eq!(id(Prompt).as_deref(), Some("prompts-ask"));
    assert_eq!(id(Tool), None);
}

#[test]
fn a_failed_condition_says_why() {
    let rules = rules(RULES);
    let args = json!({});
    let m = rules
        .first_match(input("oddity", Risk::Read, &args, None))
        .unwrap();
    assert_eq!(
        m.error.as_deref(),
        Some("the condition is a int, not a bool")
    );
    let m = rules
        .first_match(input("deploy", Risk::Write, &args, None))
        .unwrap();
    assert_eq!(m.error.as_deref(), Some("No such key: env"));
}

#[test]
fn verdicts_list_every_rule_in_order() {
    let rules = rules(RULES);
    let args = json!({"env": "prod"});
    let verdicts = rules.verdicts(input("deploy", Risk::Write, &args, None));
    assert_eq!(verdicts.len(), 9);
    assert_eq!(verdicts[0], Verdict::False);
    assert_eq!(verdicts[4], Verdict::True);
}

fn compile_error(id: &str, when: &str) -> String {
    let config = PolicyConfig {
        rules: vec![PolicyRuleConfig {
            id: id.to_owned(),
            when: when.to_owned(),
            decision: DecisionName::Deny,
            confirm: None,
            reason: None,
        }],
    };
    PolicyRules::compile(&config).unwrap_err().to_string()
}

#[test]
fn compile_errors_name_the_rule_and_the_position() {
    assert_eq!(
        compile_error("no-rm-rf", r#"tool == "shell" && args.command.matches("rm"#),
        r#"[[policy.rules]] "no-rm-rf": line 1, column 41: Syntax error: token recognition error at: '"rm'"#
    );
    assert_eq!(
        compile_error("two-lines", "tool == \"shell\" &&\n  args.command ==="),
        "[[policy.rules]] \"two-lines\": line 2, column 18: Syntax error: token recognition error at: '='"
    );
    assert_eq!(
        compile_error("typo", r#"tools == "shell""#),
        "[[policy.rules]] \"typo\": unknown variable `tools` (a condition may read tool, target, args, \
         claims, principal, role, risk, source, issuer, subject, facts)"
    );
    assert_eq!(
        compile_error(" ", "true"),
        "[[policy.rules]] number 1: `id` must not be empty"
    );
    let twice: PolicyConfig = toml::from_str(
        "[[rules]]\nid = \"a\"\nwhen = \"true\"\ndecision = \"allow\"\n\
         [[rules]]\nid = \"a\"\nwhen = \"false\"\ndecision = \"deny\"\n",
    )
    .unwrap();
    assert_eq!(
        PolicyRules::compile(&twice).unwrap_err().to_string(),
        "[[policy.rules]] \"a\": the id is already used by an earlier rule (rule 2)"
    );
}

#[test]
fn macro_variables_and_type_names_are_not_unknown() {
    let rules = rules(
        "[[rules]]\nid = \"src-only\"\n\
         when = 'args.paths.all(p, p.startsWith(\"src/\")) && type(args.n) == int'\n\
         decision = \"allow\"\n",
    );
    let args = json!({"paths": ["src/a", "src/b"], "n": 3});
    let m = rules
        .first_match(input("t", Risk::Write, &args, None))
        .unwrap();
    assert_eq!(m.rule.id(), "src-only");
}

fn layer_with(toml_text: &str) -> PolicyLayer {
    PolicyLayer::new(
        Arc::new(Roles::compile(&BTreeMap::new()).unwrap()),
        Arc::new(rules(toml_text)),
    )
}

#[tokio::test]
async fn a_deny_rule_names_itself_in_the_error_and_on_the_call() {
    let layer = layer_with(RULES);
    let mut call = call_for(
        echo_tool("shell", Risk::Dangerous),
        json!({"command": "rm -rf /"}),
    );
    let err = run_layer_on(&layer, &mut call).await.unwrap_err();
    assert_eq!(
        (err.code, err.message.as_str(), err.details),
        (
            ErrorCode::PolicyDenied,
            "policy rule \"no-rm-rf\" denies `shell`: recursive deletes are not allowed",
            Some(json!({"rule": "no-rm-rf"}))
        )
    );
    assert_eq!(call.policy_rule.as_deref(), Some("no-rm-rf"));
    assert_eq!(call.decision, None);
}

#[tokio::test]
async fn a_rule_reads_the_callers_claims_and_replaces_the_roles_decision() {
    let layer = layer_with(RULES);
    let mut call = call_for(
        echo_tool("shell", Risk::Dangerous),
        json!({"command": "ls"}),
    );
    call.request.identity = Some(Arc::new(Identity {
        issuer: "https://idp.example".into(),
        subject: "alice".into(),
        claims: json!({"groups": ["admins"]}),
    }));
    run_layer_on(&layer, &mut call).await.unwrap();
    // The default role would ask (dangerous); the claims-based rule allows.
    assert_eq!(call.decision, Some(Decision::Allow));
    assert_eq!(call.policy_rule.as_deref(), Some("admins-run-shell"));
}

#[tokio::test]
async fn a_rule_cannot_widen_the_tools_own_check_and_no_match_leaves_the_role() {
    let layer = layer_with(RULES);
    let mut call = call_for(
        echo_tool("read_file", Risk::Read),
        json!({"path": "docs/a", "deny": "outside the workspace"}),
    );
    let err = run_layer_on(&layer, &mut call).await.unwrap_err();
    assert_eq!(err.message, "outside the workspace");

    let mut call = call_for(echo_tool("w", Risk::Write), json!({}));
    run_layer_on(&layer, &mut call).await.unwrap();
    assert_eq!(call.decision, Some(Decision::Ask { confirm: false }));
    assert_eq!(call.policy_rule, None);
}

#[test]
fn an_invalid_regex_is_a_compile_error_at_its_position() {
    assert_eq!(
        compile_error(
            "bad-re",
            "tool == \"shell\" &&\n  args.command.matches(\"rm(\")"
        ),
        "[[policy.rules]] \"bad-re\": line 2, column 24: invalid regex \"rm(\": error: unclosed group"
    );
}

#[test]
fn a_pattern_computed_at_run_time_is_compiled_then_and_fails_closed_when_invalid() {
    let rules = rules(
        "[[rules]]\nid = \"dyn\"\nwhen = 'args.text.matches(args.pattern)'\ndecision = \"deny\"\n",
    );
    let args = json!({"text": "abc", "pattern": "^a"});
    assert!(
        rules
            .first_match(input("t", Risk::Read, &args, None))
            .is_some()
    );
    let args = json!({"text": "abc", "pattern": "^b"});
    assert!(
        rules
            .first_match(input("t", Risk::Read, &args, None))
            .is_none()
    );
    let args = json!({"text": "abc", "pattern": "("});
    let m = rules
        .first_match(input("t", Risk::Read, &args, None))
        .unwrap();
    assert!(m.error.unwrap().contains("\"(\" is not a valid regex"));
}

/// A false `tool` guard skips the rule; the verdict is what CEL gives (`false && error` is
/// false), wherever the guard stands among the conjuncts.
#[test]
fn a_failing_tool_guard_is_false_even_beside_an_error() {
    let rules = rules(
        r#"
        [[rules]]
        id = "guard-last"
        when = 'args.missing == 1 && tool == "shell"'
        decision = "deny"
        [[rules]]
        id = "prefix"
        when = 'tool.startsWith("mcp__gh__") && args.missing == 1'
        decision = "deny"
        "#,
    );
    let args = json!({});
    assert_eq!(
        rules.verdicts(input("echo", Risk::Read, &args, None)),
        [Verdict::False, Verdict::False]
    );
    let failed = |v: &Verdict| matches!(v, Verdict::Failed(_));
    let shell = rules.verdicts(input("shell", Risk::Read, &args, None));
    assert!(failed(&shell[0]) && shell[1] == Verdict::False, "{shell:?}");
    let gh = rules.verdicts(input("mcp__gh__x", Risk::Read, &args, None));
    assert!(failed(&gh[1]), "{gh:?}");
}
