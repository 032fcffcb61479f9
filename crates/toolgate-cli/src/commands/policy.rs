//! `toolgate policy test --tool T --args JSON [--claims JSON]`: which `[[policy.rules]]` rule
//! decides a call and why, or the role's decision when none does. Evaluates exactly what the
//! policy layer evaluates (same compiled rules, same variables); runs no tool, opens no store
//! and starts no MCP server. Exit 0 allow, 3 ask, 2 deny (as `toolgate call`), 1 bad input.

use anyhow::{Context, bail};
use serde_json::{Value, json};
use toolgate_gateway::policy::{Decision, Facts, PolicyInput, PolicyRules, Roles, Verdict};
use toolgate_protocol::Risk;

use crate::cli::{PolicyCommand, PolicyTestArgs};
use crate::commands::call::read_arguments;
use crate::output;
use crate::user::local_user;
use toolgate_app::Config;

pub fn run(settings: &Config, cmd: PolicyCommand) -> anyhow::Result<i32> {
    match cmd {
        PolicyCommand::Test(args) => test(settings, args),
    }
}

/// A JSON object from `--args` / `--claims` text.
fn object(flag: &str, spec: &str, limit: usize) -> anyhow::Result<Value> {
    let text = read_arguments(spec, limit)?;
    let value: Value =
        serde_json::from_str(&text).with_context(|| format!("{flag} is not valid JSON"))?;
    if !value.is_object() {
        bail!("{flag} must be a JSON object");
    }
    Ok(value)
}

/// The tool's risk and source: the flags, else the built-in tool's, else (source only) the
/// configured MCP server its name belongs to.
fn risk_and_source(settings: &Config, a: &PolicyTestArgs) -> anyhow::Result<(Risk, String)> {
    let local = toolgate_app::assemble::local_tools(settings)?;
    let spec = local.iter().map(|t| t.spec()).find(|s| s.name == a.tool);
    let risk = match (a.risk, spec) {
        (Some(r), _) => r,
        (None, Some(s)) => s.risk,
        (None, None) => bail!(
            "`{}` is not a built-in tool (MCP servers are not started here): give --risk read|write|dangerous",
            a.tool
        ),
    };
    let server = settings.file.mcp.servers.iter().find(|s| {
        a.tool
            .strip_prefix("mcp__")
            .and_then(|rest| rest.strip_prefix(s.name.as_str()))
            .is_some_and(|rest| rest.starts_with("__"))
    });
    let source = a
        .source
        .clone()
        .or_else(|| spec.map(|s| s.source.clone()))
        .or_else(|| server.map(|s| s.source_name()))
        .unwrap_or_default();
    Ok((risk, source))
}

fn decision_word(d: Decision) -> &'static str {
    match d {
        Decision::Allow => "allow",
        Decision::Ask { confirm: false } => "ask",
        Decision::Ask { confirm: true } => "ask (typed confirmation)",
        Decision::Deny => "deny",
    }
}

fn exit_code(d: Decision) -> i32 {
    match d {
        Decision::Allow => 0,
        Decision::Ask { .. } => 3,
        Decision::Deny => 2,
    }
}

fn test(settings: &Config, a: PolicyTestArgs) -> anyhow::Result<i32> {
    let limit = settings.file.limits.max_argument_bytes;
    if a.args == "-" && a.claims.as_deref() == Some("-") {
        bail!("--args and --claims cannot both read stdin");
    }
    let args = object("--args", &a.args, limit)?;
    let claims = a
        .claims
        .as_deref()
        .map(|c| object("--claims", c, limit))
        .transpose()?;
    let (risk, source) = risk_and_source(settings, &a)?;
    let roles = Roles::compile(&settings.file.roles)?;
    let Some(role) = roles.get(&settings.role) else {
        let names: Vec<&str> = roles.names().collect();
        bail!(
            "unknown role `{}` (configured roles: {})",
            settings.role,
            names.join(", ")
        );
    };
    let rules = PolicyRules::compile(&settings.file.policy)?;
    let principal = a
        .principal
        .clone()
        .unwrap_or_else(|| format!("cli:{}", local_user()));
    let input = PolicyInput {
        tool: &a.tool,
        target: toolgate_gateway::TargetKind::Tool,
        args: &args,
        claims: claims.as_ref(),
        principal: &principal,
        role: role.name(),
        risk,
        source: &source,
        issuer: a.issuer.as_deref().unwrap_or(""),
        subject: a.subject.as_deref().unwrap_or(""),
        paths: None,
    };
    let facts = Facts::of(&a.tool, &source, &args, None);
    let mut report = json!({
        "tool": a.tool, "risk": risk, "source": source, "role": role.name(),
        "principal": principal, "facts": facts,
    });
    // The allowlist (authorize layer) refuses the call before any rule is evaluated.
    if !role.allows(&a.tool) {
        let why = format!(
            "deny: role {:?} may not call `{}` (its `tools` list; the call fails `forbidden` before any rule)",
            role.name(),
            a.tool
        );
        report["decision"] = json!("deny");
        report["decided_by"] = json!("allowlist");
        return finish(&a, report, &[why], Decision::Deny);
    }
    let verdicts = rules.verdicts(input);
    let mut lines = vec![format!(
        "call: `{}` ({risk} risk, source {source:?}) by {principal} as role {:?}",
        a.tool,
        role.name()
    )];
    if facts != Facts::default() {
        lines.push(facts_line(&facts));
    }
    let mut listed = Vec::new();
    let mut decided = None;
    for (i, (rule, verdict)) in rules.rules().iter().zip(&verdicts).enumerate() {
        let decides = rule.decides(verdict);
        let (word, error) = match verdict {
            Verdict::True => ("true", None),
            Verdict::False => ("false", None),
            Verdict::Failed(e) => ("error", Some(e.as_str())),
        };
        let mut line = format!("rule {} {:?}: {word}", i + 1, rule.id());
        if let Some(e) = error {
            let effect = if decides {
                "fails closed: decides"
            } else {
                "an allow rule: no match"
            };
            line.push_str(&format!(" ({e}; {effect})"));
        }
        lines.push(line);
        listed.push(json!({"id": rule.id(), "verdict": word, "error": error}));
        if decides {
            decided = Some((i, rule, error));
            break;
        }
    }
    report["rules"] = json!(listed);
    let decision = match decided {
        Some((i, rule, error)) => {
            let d = rule.decision(risk);
            lines.push(format!(
                "{} by rule {:?} (rule {} of {}): {}",
                decision_word(d),
                rule.id(),
                i + 1,
                rules.rules().len(),
                rule.when()
            ));
            if let (Decision::Deny, Some(reason)) = (d, rule.reason()) {
                lines.push(format!("reason: {reason}"));
            }
            report["decided_by"] = json!("rule");
            report["rule"] = json!({"id": rule.id(), "index": i + 1, "when": rule.when(),
                                    "reason": rule.reason(), "error": error});
            d
        }
        None => {
            let d = role.decide(&a.tool, risk);
            let lead = if rules.is_empty() {
                "no rules configured"
            } else {
                "no rule matched"
            };
            lines.push(format!(
                "{lead}; role {:?} decides {} for {risk} risk",
                role.name(),
                decision_word(d)
            ));
            report["decided_by"] = json!("role");
            d
        }
    };
    report["decision"] = json!(match decision {
        Decision::Allow => "allow",
        Decision::Ask { .. } => "ask",
        Decision::Deny => "deny",
    });
    if let Decision::Ask { confirm } = decision {
        report["confirm"] = json!(confirm);
    }
    finish(&a, report, &lines, decision)
}

/// `facts: paths ["src"], recursive false` and, for the shell, its programs and words;
/// lists as JSON so a control character in a word is escaped, not printed.
fn facts_line(facts: &Facts) -> String {
    let mut line = format!(
        "facts: paths {}, recursive {}",
        json!(facts.paths),
        facts.recursive
    );
    if !facts.argv.is_empty() {
        line.push_str(&format!(
            ", executables {}, shell_dynamic {}, argv {}",
            json!(facts.executables),
            facts.shell_dynamic,
            json!(facts.argv)
        ));
    }
    line
}

fn finish(
    a: &PolicyTestArgs,
    report: Value,
    lines: &[String],
    decision: Decision,
) -> anyhow::Result<i32> {
    if a.json {
        output::json(&report)?;
    } else {
        for line in lines {
            output::line(line);
        }
    }
    Ok(exit_code(decision))
}
