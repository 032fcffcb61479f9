//! Guards never change a decision: on thousands of generated calls, every rule's verdict with
//! its guard equals the interpreter's alone, for the table's rules, the benchmark's fifty and
//! a set written to attack the guards (errors beside false conjuncts, `||`, `!`, shadowing).

use serde_json::{Value, json};
use toolgate_protocol::Risk;

use super::*;

#[path = "../../benches/pipeline/rules.rs"]
mod bench_rules;

/// Conditions whose guards are easy to get wrong: an error must never be skipped.
const TRICKY: &str = r#"
[[rules]]
id = "error-then-false-guard"
when = 'args.missing == 1 && tool == "shell"'
decision = "deny"

[[rules]]
id = "guard-or-error"
when = 'tool == "shell" || args.missing == 1'
decision = "deny"

[[rules]]
id = "error-or-guard"
when = 'args.missing == 1 || principal == "ci"'
decision = "ask"

[[rules]]
id = "two-tools"
when = '(tool == "a" || tool == "shell_0") && args.command.matches("rm")'
decision = "deny"

[[rules]]
id = "not-a-conjunction"
when = '!(tool == "shell" && args.missing == 1)'
decision = "ask"

[[rules]]
id = "not-has"
when = '!has(args.path)'
decision = "allow"

[[rules]]
id = "double-negation"
when = '!!has(args.count) && args.count > 50'
decision = "ask"

[[rules]]
id = "claims-groups"
when = '!has(claims.groups) || !("admins" in claims.groups)'
decision = "ask"

[[rules]]
id = "literal-first"
when = '"svc-checkout-bot" == subject && issuer.startsWith("https://idp.")'
decision = "allow"

[[rules]]
id = "risk-source-role"
when = 'risk != "read" && (source == "builtin" || source.startsWith("mcp:")) && role != "auditor"'
decision = "deny"

[[rules]]
id = "not-a-bool-beside-a-guard"
when = '(tool == "oddity" || tool == "t") && args'
decision = "deny"

[[rules]]
id = "ternary"
when = 'tool == "echo" ? has(args.text) : false'
decision = "ask"

[[rules]]
id = "shadowed-tool"
when = '[1].exists(tool, tool == 1) && tool == "echo"'
decision = "deny"

[[rules]]
id = "has-compared"
when = 'has(args.x) == false && principal != "alice"'
decision = "deny"

[[rules]]
id = "path-guard"
when = '!(principal == "ci") && has(args.path) && args.path.startsWith("/etc/")'
decision = "deny"

[[rules]]
id = "arg-order"
when = 'args.count > 50 || 3 >= args.count'
decision = "ask"

[[rules]]
id = "arg-equality"
when = 'args.options.verbose == true && args.command != "ls" && args.count == 3'
decision = "deny"

[[rules]]
id = "size-and-in"
when = 'size(args.text) > 5 && "deploy" in args.tags && size(claims.groups) != 1'
decision = "ask"

[[rules]]
id = "string-methods"
when = 'args.text.matches("(?i)fail") || args.path.endsWith(".md") || args.url.contains("localhost")'
decision = "deny"

[[rules]]
id = "claims-in"
when = '"admins" in claims.groups && !(tool.endsWith("_0") || tool.contains("svc"))'
decision = "allow"

[[rules]]
id = "mixed-types"
when = 'args.x == 1 || args.x == "ls" || args.x == false || args.env < 2'
decision = "deny"

[[rules]]
id = "size-alone"
when = 'size(args.text) > 5 || size(args.tags) >= 2'
decision = "deny"

[[rules]]
id = "bare-guard"
when = 'principal == "alice"'
decision = "allow"
"#;

/// A deterministic source of choices (xorshift64*).
struct Gen(u64);

impl Gen {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n
    }

    fn pick<T: Clone>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())].clone()
    }

    fn value(&mut self) -> Value {
        match self.below(8) {
            0 => self.pick(&[
                json!("/etc/passwd"),
                json!("docs/a.md"),
                json!("http://localhost:8080/x"),
                json!("rm -rf /"),
                json!("ls"),
                json!("DROP TABLE users"),
                json!("list the failing health checks"),
                json!("("),
                json!("héllo"),
                json!("hello"),
            ]),
            1 => self.pick(&[json!(3), json!(51), json!(100_001), json!(-1), json!(2.5)]),
            2 => json!(self.below(2) == 0),
            3 => Value::Null,
            4 => json!(["deploy", "prod"]),
            5 => json!({"verbose": self.below(2) == 0}),
            6 => json!([1, "a"]),
            _ => json!(u64::MAX),
        }
    }

    fn args(&mut self) -> Value {
        if self.below(10) == 0 {
            return self.pick(&[Value::Null, json!("text"), json!([1, 2]), json!(3)]);
        }
        let keys = [
            "path", "url", "text", "tags", "count", "options", "command", "env", "x", "pattern",
        ];
        let mut args = serde_json::Map::new();
        for key in keys {
            if self.below(3) == 0 {
                args.insert(key.to_owned(), self.value());
            }
        }
        Value::Object(args)
    }

    fn claims(&mut self) -> Option<Value> {
        match self.below(6) {
            0 => None,
            1 => Some(json!({})),
            2 => Some(json!("not an object")),
            3 => Some(json!({"groups": "admins"})),
            _ => {
                let groups: Vec<&str> = ["admins", "engineers", "contractors"]
                    .into_iter()
                    .filter(|_| self.below(2) == 0)
                    .collect();
                Some(json!({"groups": groups}))
            }
        }
    }
}

/// One generated call's owned data.
struct Call {
    tool: &'static str,
    args: Value,
    claims: Option<Value>,
    principal: &'static str,
    role: &'static str,
    risk: Risk,
    source: &'static str,
    issuer: &'static str,
    subject: &'static str,
}

impl Call {
    fn generate(g: &mut Gen) -> Call {
        Call {
            tool: g.pick(&[
                "shell",
                "shell_0",
                "shell_14",
                "sql",
                "echo",
                "deploy",
                "read_file",
                "write_file",
                "oddity",
                "t",
                "a",
                "mcp__svc0__x",
                "mcp__svc9__",
                "mcp__github__create_issue",
                "",
            ]),
            args: g.args(),
            claims: g.claims(),
            principal: g.pick(&["alice", "ci", "local", "intern-0", "intern-4", ""]),
            role: g.pick(&["default", "auditor", "readonly"]),
            risk: g.pick(&[Risk::Read, Risk::Write, Risk::Dangerous]),
            source: g.pick(&["builtin", "mcp:svc0", "mcp:github", ""]),
            issuer: g.pick(&["", "https://idp.example", "https://evil.example"]),
            subject: g.pick(&["", "alice", "svc-checkout-bot"]),
        }
    }

    fn input(&self) -> PolicyInput<'_> {
        PolicyInput {
            tool: self.tool,
            target: crate::TargetKind::Tool,
            args: &self.args,
            claims: self.claims.as_ref(),
            principal: self.principal,
            role: self.role,
            risk: self.risk,
            source: self.source,
            issuer: self.issuer,
            subject: self.subject,
            paths: None,
        }
    }
}

fn compile(toml_text: &str) -> PolicyRules {
    let config: PolicyConfig = toml::from_str(toml_text).unwrap();
    PolicyRules::compile(&config).unwrap()
}

#[test]
fn guards_agree_with_the_interpreter_on_generated_calls() {
    let sets = [
        ("table", compile(super::tests::RULES)),
        ("tricky", compile(TRICKY)),
        (
            "bench",
            PolicyRules::compile(&bench_rules::fifty(false)).unwrap(),
        ),
        (
            "bench-late",
            PolicyRules::compile(&bench_rules::fifty(true)).unwrap(),
        ),
    ];
    let mut g = Gen(0x9e37_79b9_7f4a_7c15);
    // How often a guard settled a rule true, false, or left it to the interpreter.
    let mut settled = [0usize; 3];
    for n in 0..3000 {
        let call = Call::generate(&mut g);
        let input = call.input();
        for (name, rules) in &sets {
            let evaluated = rules.evaluated_verdicts(input);
            assert_eq!(
                rules.verdicts(input),
                evaluated,
                "{name}, call {n}: {:?} {} {:?}",
                call.tool,
                call.args,
                call.claims
            );
            let expected = rules
                .rules()
                .iter()
                .zip(&evaluated)
                .position(|(rule, verdict)| rule.decides(verdict));
            let got = rules.first_match(input);
            assert_eq!(got.as_ref().map(|m| m.index), expected, "{name}, call {n}");
            if let Some(m) = got {
                assert_eq!(
                    m.error.is_some(),
                    matches!(evaluated[m.index], Verdict::Failed(_))
                );
            }
            for rule in rules.rules() {
                settled[match rule.known_verdict(&input) {
                    Some(Verdict::True) => 0,
                    Some(_) => 1,
                    None => 2,
                }] += 1;
            }
        }
    }
    // The calls exercise every way out.
    assert!(settled.iter().all(|&n| n > 1000), "{settled:?}");
}

/// The benchmark's call: every one of the fifty rules is settled without CEL.
#[test]
fn the_bench_call_needs_no_interpreter() {
    let args = json!({
        "text": "Summarise the last deploy", "count": 3, "tags": ["deploy"],
        "options": {"verbose": false, "format": "text"}
    });
    let claims = json!({"groups": ["engineers"]});
    let input = PolicyInput {
        tool: "echo",
        target: crate::TargetKind::Tool,
        args: &args,
        claims: Some(&claims),
        principal: "local",
        role: "default",
        risk: Risk::Read,
        source: "builtin",
        issuer: "https://idp.example",
        subject: "svc-checkout-bot",
        paths: None,
    };
    for late in [false, true] {
        let rules = PolicyRules::compile(&bench_rules::fifty(late)).unwrap();
        let left: Vec<&str> = rules
            .rules()
            .iter()
            .filter(|r| r.known_verdict(&input).is_none())
            .map(PolicyRule::id)
            .collect();
        assert_eq!(left, [""; 0], "late match: {late}");
    }
}

/// A deny rule that errors is never skipped by its guard: it fails closed.
#[test]
fn an_error_beside_a_guard_still_fails_closed() {
    let rules = compile(TRICKY);
    let args = json!({});
    let call = |tool, principal| PolicyInput {
        tool,
        target: crate::TargetKind::Tool,
        args: &args,
        claims: None,
        principal,
        role: "default",
        risk: Risk::Read,
        source: "builtin",
        issuer: "",
        subject: "",
        paths: None,
    };
    let failed = |v: &Verdict| matches!(v, Verdict::Failed(_));
    let v = rules.verdicts(call("echo", "bob"));
    // `tool == "shell" || args.missing == 1`: false || error is an error.
    assert!(failed(&v[1]), "{v:?}");
    // `args.missing == 1 || principal == "ci"`: error || false is an error, error || true true.
    assert!(failed(&v[2]), "{v:?}");
    assert_eq!(rules.verdicts(call("echo", "ci"))[2], Verdict::True);
    // `!(tool == "shell" && error)`: for another tool, !(false) is true without evaluating.
    assert_eq!(v[4], Verdict::True);
    assert!(failed(&rules.verdicts(call("shell", "bob"))[4]));
    let m = rules.first_match(call("echo", "bob")).unwrap();
    assert_eq!((m.rule.id(), m.error.is_some()), ("guard-or-error", true));
}
