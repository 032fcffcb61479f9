//! `toolgate policy test`: which `[[policy.rules]]` rule decides a call and why, with the
//! exit status of the decision; and a bad rule stops every command with its position.

use serde_json::json;

use super::harness::Env;

const RULES: &str = r#"
[[policy.rules]]
id = "no-rm-rf"
when = 'tool == "shell" && args.command.matches("rm\\s+-rf")'
decision = "deny"
reason = "recursive deletes are not allowed"

[[policy.rules]]
id = "github-needs-admin"
when = 'tool.startsWith("mcp__github__") && !("admins" in claims.groups)'
decision = "ask"

[[policy.rules]]
id = "docs-writes"
when = 'tool == "write_file" && args.path.startsWith("docs/") && principal == "cli:tester"'
decision = "allow"
"#;

#[test]
fn a_deny_rule_names_itself_and_exits_2() {
    let env = Env::with_config(RULES);
    let run = env.run(&[
        "policy",
        "test",
        "--tool",
        "shell",
        "--args",
        r#"{"command": "rm -rf /"}"#,
    ]);
    run.assert_code(2);
    assert_eq!(
        run.stdout,
        "call: `shell` (dangerous risk, source \"builtin\") by cli:tester as role \"default\"\n\
         facts: paths [\".\"], recursive false, executables [\"rm\"], shell_dynamic false, argv [[\"rm\",\"-rf\",\"/\"]]\n\
         rule 1 \"no-rm-rf\": true\n\
         deny by rule \"no-rm-rf\" (rule 1 of 3): tool == \"shell\" && args.command.matches(\"rm\\\\s+-rf\")\n\
         reason: recursive deletes are not allowed\n"
    );
    // Nothing ran, nothing was opened.
    assert!(!env.data.exists());
}

#[test]
fn an_ask_rule_over_missing_claims_fails_closed_and_exits_3() {
    let env = Env::with_config(RULES);
    let run = env.run(&[
        "policy",
        "test",
        "--tool",
        "mcp__github__create_issue",
        "--risk",
        "write",
        "--source",
        "mcp:github",
        "--json",
    ]);
    run.assert_code(3);
    assert_eq!(
        run.json(),
        json!({
            "tool": "mcp__github__create_issue", "risk": "write", "source": "mcp:github",
            "role": "default", "principal": "cli:tester",
            "facts": {"paths": [], "recursive": false, "argv": [], "words": [],
                      "executables": [], "shell_dynamic": false},
            "rules": [
                {"id": "no-rm-rf", "verdict": "false", "error": null},
                {"id": "github-needs-admin", "verdict": "error", "error": "No such key: groups"}
            ],
            "decided_by": "rule",
            "rule": {
                "id": "github-needs-admin", "index": 2,
                "when": "tool.startsWith(\"mcp__github__\") && !(\"admins\" in claims.groups)",
                "reason": null, "error": "No such key: groups"
            },
            "decision": "ask",
            "confirm": false
        })
    );
}

#[test]
fn claims_and_the_principal_reach_the_rules_and_no_match_leaves_the_role() {
    let env = Env::with_config(RULES);
    let github = |claims: &str| {
        env.run(&[
            "policy",
            "test",
            "--tool",
            "mcp__github__create_issue",
            "--risk",
            "write",
            "--claims",
            claims,
        ])
    };
    let run = github(r#"{"groups": ["admins"]}"#);
    run.assert_code(3);
    assert!(
        run.stdout
            .ends_with("no rule matched; role \"default\" decides ask for write risk\n"),
        "{run:#?}"
    );
    let write = |principal: &str| {
        env.run(&[
            "policy",
            "test",
            "--tool",
            "write_file",
            "--args",
            r#"{"path": "docs/a.md"}"#,
            "--principal",
            principal,
        ])
    };
    let run = write("cli:tester");
    run.assert_code(0);
    assert!(
        run.stdout
            .contains("allow by rule \"docs-writes\" (rule 3 of 3)"),
        "{run:#?}"
    );
    write("someone-else").assert_code(3);
}

/// The rules see `facts` — the call as the programs and paths it names — and `policy test`
/// prints them, so a rule can be checked against a rewording before it is trusted.
#[test]
fn the_facts_of_a_call_are_shown_and_ruled_on() {
    let env = Env::with_config(
        r#"
[[policy.rules]]
id = "no-opaque-shell"
when = 'tool == "shell" && facts.shell_dynamic'
decision = "deny"

[[policy.rules]]
id = "no-deletes"
when = 'tool == "shell" && "rm" in facts.executables'
decision = "deny"

[[policy.rules]]
id = "no-secret"
when = 'facts.paths.exists(p, p == "secret" || p.startsWith("secret/"))'
decision = "deny"
"#,
    );
    let policy =
        |tool: &str, args: &str| env.run(&["policy", "test", "--tool", tool, "--args", args]);
    let run = policy("shell", r#"{"command": "echo x | env r''m -rf"}"#);
    run.assert_code(2);
    assert_eq!(
        run.stdout,
        "call: `shell` (dangerous risk, source \"builtin\") by cli:tester as role \"default\"\n\
         facts: paths [\".\"], recursive false, executables [\"echo\",\"env\",\"rm\"], shell_dynamic false, argv [[\"echo\",\"x\"],[\"env\",\"rm\",\"-rf\"]]\n\
         rule 1 \"no-opaque-shell\": false\n\
         rule 2 \"no-deletes\": true\n\
         deny by rule \"no-deletes\" (rule 2 of 3): tool == \"shell\" && \"rm\" in facts.executables\n"
    );
    policy("shell", r#"{"command": "$(printf rm) -rf x"}"#).assert_code(2);
    let run = policy("read_file", r#"{"path": "./docs/..//secret/x"}"#);
    run.assert_code(2);
    assert!(
        run.stdout
            .contains("facts: paths [\"secret/x\"], recursive false\n"),
        "{run:#?}"
    );
    policy(
        "shell",
        r#"{"command": "git status && cargo test 2>&1 | tail"}"#,
    )
    .assert_code(3);
}

#[test]
fn bad_input_and_a_bad_rule_exit_1_with_the_reason() {
    let env = Env::with_config(RULES);
    let run = env.run(&["policy", "test", "--tool", "mcp__github__x"]);
    run.assert_code(1);
    assert_eq!(
        run.stderr,
        "toolgate: error: `mcp__github__x` is not a built-in tool (MCP servers are not started here): give --risk read|write|dangerous\n"
    );
    let run = env.run(&["policy", "test", "--tool", "shell", "--args", "[1]"]);
    run.assert_code(1);
    assert_eq!(
        run.stderr,
        "toolgate: error: --args must be a JSON object\n"
    );

    let bad = Env::with_config(
        "[[policy.rules]]\nid = \"typo\"\nwhen = 'tool = \"shell\"'\ndecision = \"deny\"\n",
    );
    for args in [
        &["config", "check"][..],
        &["policy", "test", "--tool", "shell"],
    ] {
        let run = bad.run(args);
        run.assert_code(1);
        assert!(
            run.stderr.contains(
                "invalid configuration: [[policy.rules]] \"typo\": line 1, column 6: Syntax error"
            ),
            "{run:#?}"
        );
    }
}
