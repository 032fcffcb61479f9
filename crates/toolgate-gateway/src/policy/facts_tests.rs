//! `facts`: paths in one spelling, the shell command as the programs it runs, and the
//! documentation's example rules against the rewordings that walked around the rules they
//! replaced (issue 30, item 6).
use super::shell_parse;
use super::*;
use serde_json::{Value, json};
use toolgate_protocol::Risk;

/// The first TOML block of docs/configuration.md's "Policy rules" section: the example rules
/// users copy, tested as written.
fn docs_rules() -> PolicyRules {
    let doc = include_str!("../../../../docs/configuration.md");
    let section = &doc[doc.find("## Policy rules").expect("section")..];
    let start = section.find("```toml\n").expect("toml block") + "```toml\n".len();
    let block = &section[start..start + section[start..].find("```").expect("block end")];
    #[derive(serde::Deserialize)]
    struct File {
        policy: PolicyConfig,
    }
    let file: File = toml::from_str(block).expect("the docs' rules parse");
    PolicyRules::compile(&file.policy).expect("the docs' rules compile")
}

fn policy_rules(toml_text: &str) -> PolicyRules {
    PolicyRules::compile(&toml::from_str(toml_text).expect("toml")).expect("compiles")
}

fn risk_of(tool: &str) -> Risk {
    match tool {
        "shell" => Risk::Dangerous,
        "write_file" | "edit_file" => Risk::Write,
        _ => Risk::Read,
    }
}

/// The id of the rule that decides the call, or `None` when the role decides.
fn deciding_rule(rules: &PolicyRules, tool: &str, args: &Value) -> Option<String> {
    let input = PolicyInput {
        tool,
        target: crate::TargetKind::Tool,
        args,
        claims: None,
        principal: "cli:tester",
        role: "default",
        risk: risk_of(tool),
        source: "builtin",
        issuer: "",
        subject: "",
        paths: None,
    };
    rules.first_match(input).map(|m| {
        assert_eq!(
            m.error, None,
            "{tool} {args}: the rule failed instead of matching"
        );
        m.rule.id().to_owned()
    })
}

fn shell(command: &str) -> (&'static str, Value) {
    ("shell", json!({ "command": command }))
}

/// Every rewording found against the old rules (`args.command.matches("rm\\s+-rf")`,
/// `args.path.startsWith("secret/")`) and the rule of the docs' examples that stops it.
#[test]
fn the_docs_rules_stop_every_rewording() {
    let rules = docs_rules();
    let rows: Vec<((&str, Value), &str)> = vec![
        // The 15 `rm` variants.
        (shell("/bin/rm -rf build"), "no-deletes"),
        (shell("\\rm -rf build"), "no-deletes"),
        (shell("r''m -rf build"), "no-deletes"),
        (shell("command rm -rf build"), "no-deletes"),
        (shell("env rm -rf build"), "no-deletes"),
        (shell("echo build | xargs rm -rf"), "no-deletes"),
        (shell("find build -delete"), "no-deletes"),
        (shell("rm  \t -rf   build"), "no-deletes"),
        (shell("$(printf rm) -rf build"), "no-opaque-shell"),
        (shell("busybox rm -rf build"), "no-deletes"),
        (shell("unlink build/a"), "no-deletes"),
        (shell("\"rm\" -r -f build"), "no-deletes"),
        (shell("ls; true && rm --recursive build"), "no-deletes"),
        (shell("`echo rm` -rf build"), "no-opaque-shell"),
        (shell("find . -name '*.o' -exec rm {} \\;"), "no-deletes"),
        // `secret/` through a path that is spelled otherwise or reached from above.
        (("read_file", json!({"path": "./secret/x"})), "no-secret"),
        (("list_dir", json!({"path": "secret"})), "no-secret"),
        (
            ("search_files", json!({"pattern": "key", "path": "secret/"})),
            "no-secret",
        ),
        // Others found while writing the facts.
        (
            ("read_file", json!({"path": "docs/../secret//x"})),
            "no-secret",
        ),
        (("list_dir", json!({"recursive": true})), "no-secret"),
        (("search_files", json!({"pattern": "key"})), "no-secret"),
        (shell("sh -c 'rm -rf build'"), "no-opaque-shell"),
        (shell("x=rm; $x -rf build"), "no-opaque-shell"),
        (shell("$'\\x72m' -rf build"), "no-deletes"),
        (shell("eval 'rm -rf build'"), "no-opaque-shell"),
        (shell("echo rm -rf build | bash"), "no-opaque-shell"),
        (shell("/bin/r? -rf build"), "no-opaque-shell"),
        (shell("{rm,-rf,build}"), "no-opaque-shell"),
        (
            shell("sudo -u root nice -n 5 timeout 9 rm -rf build"),
            "no-deletes",
        ),
        (shell("r\\\nm -rf build"), "no-deletes"),
        (shell("time -p rm -r build"), "no-deletes"),
        (shell("alias r=rm; r -rf build"), "no-opaque-shell"),
        (shell("trap 'rm -rf build' EXIT"), "no-opaque-shell"),
        (shell("flock /tmp/lock rm -r build"), "no-deletes"),
        (shell("strace -f -o /dev/null rm -r build"), "no-deletes"),
        (
            shell("python3 -c 'import shutil; shutil.rmtree(\"b\")'"),
            "no-opaque-shell",
        ),
        (
            ("shell", json!({"command": "ls", "cwd": "./secret"})),
            "no-secret",
        ),
        (
            (
                "edit_file",
                json!({"path": "secret/./x", "old_string": "a", "new_string": "b"}),
            ),
            "no-secret",
        ),
    ];
    let mut missed = Vec::new();
    for ((tool, args), want) in &rows {
        let got = deciding_rule(&rules, tool, args);
        if got.as_deref() != Some(*want) {
            missed.push(format!("{tool} {args}: {got:?}, want {want:?}"));
        }
    }
    assert!(
        missed.is_empty(),
        "not stopped as expected:\n{}",
        missed.join("\n")
    );
    assert_eq!(rows.len(), 38);

    // The rules they replace, over the spelling, let most of the same calls through.
    let old = policy_rules(
        r#"
[[rules]]
id = "no-rm-rf"
when = 'tool == "shell" && args.command.matches("rm\\s+-rf")'
decision = "deny"

[[rules]]
id = "no-secret"
when = 'has(args.path) && args.path.startsWith("secret/")'
decision = "deny"
"#,
    );
    let through: Vec<String> = rows
        .iter()
        .filter(|((tool, args), _)| deciding_rule(&old, tool, args).is_none())
        .map(|((tool, args), _)| format!("{tool} {args}"))
        .collect();
    assert_eq!(through.len(), 24, "{through:#?}");
}

/// Ordinary work is not caught by the same rules.
#[test]
fn the_docs_rules_let_ordinary_calls_through() {
    let rules = docs_rules();
    let calls: Vec<(&str, Value)> = vec![
        shell("ls -la"),
        shell("cargo test"),
        shell("git status"),
        shell("[ -f Cargo.toml ] && time cargo build"),
        shell("cargo test 2>&1 | tail -n 50"),
        shell("grep -rn 'rm -rf' src"),
        shell("echo \"don't rm anything\" > notes.txt"),
        shell("FOO=1 cargo build --release && ./target/release/app --help"),
        shell("find . -name '*.rs' -print"),
        ("read_file", json!({"path": "README.md"})),
        ("read_file", json!({"path": "secretary/notes.md"})),
        ("list_dir", json!({"path": "."})),
        ("search_files", json!({"pattern": "fn main", "path": "src"})),
        ("write_file", json!({"path": "./docs/a.md", "content": ""})),
    ];
    for (tool, args) in &calls {
        assert_eq!(deciding_rule(&rules, tool, args), None, "{tool} {args}");
    }
}

#[test]
fn paths_have_one_spelling() {
    let cases = [
        ("./secret/x", "secret/x"),
        ("secret//x", "secret/x"),
        ("secret/./x/", "secret/x"),
        ("a/../secret/x", "secret/x"),
        (".", "."),
        ("./", "."),
        ("a/..", "."),
        ("../x", "../x"),
        ("a/../../x", "../x"),
        ("/etc//passwd", "/etc/passwd"),
        ("/../etc", "/etc"),
    ];
    let got: Vec<(&str, String)> = cases.iter().map(|(p, _)| (*p, normalise(p))).collect();
    let want: Vec<(&str, String)> = cases.iter().map(|(p, n)| (*p, (*n).to_owned())).collect();
    assert_eq!(got, want);
}

#[test]
fn shell_facts_are_whole_values() {
    let facts = Facts::of(
        "shell",
        "builtin",
        &json!({"command": "env A=1 rm -rf 'a b' 2>/dev/null && git status"}),
        None,
    );
    assert_eq!(
        facts,
        Facts {
            paths: vec![".".to_owned()],
            recursive: false,
            argv: vec![
                vec!["env", "A=1", "rm", "-rf", "a b"]
                    .into_iter()
                    .map(String::from)
                    .collect(),
                vec!["git".to_owned(), "status".to_owned()],
            ],
            words: ["env", "A=1", "rm", "-rf", "a b", "git", "status"]
                .map(String::from)
                .to_vec(),
            executables: ["env", "rm", "git"].map(String::from).to_vec(),
            shell_dynamic: false,
        }
    );
    let sub = Facts::of(
        "shell",
        "builtin",
        &json!({"command": "echo \"$(rm -rf x)\""}),
        None,
    );
    assert_eq!(
        (sub.executables, sub.shell_dynamic),
        (vec!["rm".to_owned(), "echo".to_owned()], true)
    );
    let other = Facts::of("shell", "mcp:remote", &json!({"command": "rm -rf x"}), None);
    assert_eq!(other, Facts::default());
}

#[test]
fn facts_is_a_known_variable() {
    assert!(VARIABLES.contains(&"facts"));
}

/// A file tool whose path `link/x` resolves into `secret/` (a symlink inside the workspace).
struct LinkedRead(toolgate_protocol::ToolSpec);

#[async_trait::async_trait]
impl toolgate_core::Tool for LinkedRead {
    fn spec(&self) -> &toolgate_protocol::ToolSpec {
        &self.0
    }

    fn policy_paths(&self, args: &Value) -> Option<Vec<String>> {
        let path = args.get("path")?.as_str()?;
        Some(vec![path.replacen("link/", "secret/", 1)])
    }

    async fn call(
        &self,
        _args: Value,
        _ctx: toolgate_core::ToolContext,
    ) -> Result<toolgate_protocol::ToolOutput, toolgate_core::ToolError> {
        Ok(toolgate_protocol::ToolOutput::text("read"))
    }
}

/// In the pipeline the rules see the path as the tool resolves it, so a link into
/// `secret/` is denied though its spelling is not under `secret/`; other paths pass.
#[tokio::test]
async fn the_layer_gives_rules_the_tools_resolved_paths() {
    use crate::testing::{call_for, run_layer_on};
    let layer = PolicyLayer::new(
        std::sync::Arc::new(Roles::compile(&std::collections::BTreeMap::new()).expect("roles")),
        std::sync::Arc::new(docs_rules()),
    );
    let tool: toolgate_core::DynTool = std::sync::Arc::new(LinkedRead(
        toolgate_protocol::ToolSpec::new("read_file", "Reads.", json!({"type": "object"}))
            .with_risk(Risk::Read),
    ));
    let mut call = call_for(tool.clone(), json!({"path": "link/x"}));
    let err = run_layer_on(&layer, &mut call).await.expect_err("denied");
    assert_eq!(
        (err.code, call.policy_rule.as_deref()),
        (ErrorCode::PolicyDenied, Some("no-secret"))
    );
    let mut call = call_for(tool, json!({"path": "docs/x"}));
    assert!(run_layer_on(&layer, &mut call).await.is_ok());
}

/// Any text parses without a panic and in time linear in its length: random lines over the
/// shell's special characters, deep nesting, and long runs of one opener.
#[test]
fn the_shell_parser_takes_any_text() {
    let alphabet: Vec<char> = "rm -\\'\"`$(){};|&<>#*?[],.=\n\tabc12x".chars().collect();
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    for _ in 0..20_000 {
        let len = (state % 40) as usize;
        let text: String = (0..len)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                alphabet[(state % alphabet.len() as u64) as usize]
            })
            .collect();
        let _ = shell_parse::parse(&text);
    }
    let deep = format!("{}rm{}", "$(".repeat(500), ")".repeat(500));
    assert!(shell_parse::parse(&deep).dynamic);
    let ticks = format!("{}rm", "`".repeat(501));
    let _ = shell_parse::parse(&ticks);
    for opener in ["{", "$(", "'", "\"", "`", "${", "$'", "\\"] {
        let _ = shell_parse::parse(&opener.repeat(100_000));
    }
}
