//! Fifty `[[policy.rules]]` of the kinds an operator writes — per-tool argument guards with
//! regexes, MCP server gates on the caller's claims, path and URL guards over every call,
//! principal and risk rules — none of which matches the bench's `echo` call, so every one
//! is considered (all fifty are settled by their guards, without the interpreter). With
//! `late_match`, the fiftieth matches (an allow: the call still runs), by a regex over the
//! call's text.

// From the parent, so the unit tests can include this file too.
use super::{DecisionName, PolicyConfig, PolicyRuleConfig};

fn rule(id: String, when: String, decision: DecisionName) -> PolicyRuleConfig {
    PolicyRuleConfig {
        id,
        when,
        decision,
        confirm: None,
        reason: None,
    }
}

pub fn fifty(late_match: bool) -> PolicyConfig {
    use DecisionName::{Allow, Ask, Deny};
    let mut rules = Vec::with_capacity(50);
    // 15 guards on other tools' arguments (short-circuit on the tool name).
    for i in 0..15 {
        rules.push(rule(
            format!("shell-guard-{i}"),
            format!(r#"tool == "shell_{i}" && args.command.matches("rm\\s+-rf|mkfs|dd\\s+if=")"#),
            Deny,
        ));
    }
    // 10 MCP servers that only admins may use without asking.
    for i in 0..10 {
        rules.push(rule(
            format!("mcp-server-{i}"),
            format!(r#"tool.startsWith("mcp__svc{i}__") && !("admins" in claims.groups)"#),
            Ask,
        ));
    }
    // 10 guards over every call's arguments, read when present.
    for (i, prefix) in ["/etc/", "/root/", "/var/lib/", "/proc/", "/sys/"]
        .iter()
        .enumerate()
    {
        rules.push(rule(
            format!("path-guard-{i}"),
            format!(r#"has(args.path) && args.path.startsWith("{prefix}")"#),
            Deny,
        ));
    }
    for (i, host) in [
        "169.254.169.254",
        "metadata.google",
        "localhost",
        "10.0.",
        "192.168.",
    ]
    .iter()
    .enumerate()
    {
        rules.push(rule(
            format!("url-guard-{i}"),
            format!(r#"has(args.url) && args.url.contains("{host}")"#),
            Deny,
        ));
    }
    // 5 on the call's text and tags.
    rules.push(rule(
        "huge-text".into(),
        "has(args.text) && size(args.text) > 100000".into(),
        Deny,
    ));
    rules.push(rule(
        "many-tags".into(),
        "has(args.tags) && size(args.tags) > 16".into(),
        Ask,
    ));
    rules.push(rule(
        "sql-in-text".into(),
        r#"tool == "sql" && args.text.matches("(?i)drop\\s+table")"#.into(),
        Deny,
    ));
    rules.push(rule(
        "verbose-echo".into(),
        r#"tool == "echo" && has(args.options) && args.options.verbose == true"#.into(),
        Ask,
    ));
    rules.push(rule(
        "bulk-count".into(),
        "has(args.count) && args.count > 50".into(),
        Ask,
    ));
    // 5 on who calls.
    for i in 0..5 {
        rules.push(rule(
            format!("intern-{i}"),
            format!(r#"principal == "intern-{i}" && risk != "read""#),
            Deny,
        ));
    }
    // 4 on risk, source and identity.
    rules.push(rule(
        "external-dangerous".into(),
        r#"risk == "dangerous" && source != "builtin""#.into(),
        Ask,
    ));
    rules.push(rule(
        "untrusted-issuer".into(),
        r#"issuer != "" && issuer != "https://idp.example" && risk != "read""#.into(),
        Deny,
    ));
    rules.push(rule(
        "contractors-write".into(),
        r#"risk == "write" && "contractors" in claims.groups"#.into(),
        Ask,
    ));
    rules.push(rule(
        "auditor-readonly".into(),
        r#"role == "auditor" && risk != "read""#.into(),
        Deny,
    ));
    // The fiftieth.
    let last = if late_match {
        r#"tool == "echo" && args.text.matches("(?i)failing\\s+health") && "engineers" in claims.groups"#
    } else {
        r#"tool == "echo" && "nothing-tagged-so" in args.tags"#
    };
    rules.push(rule("echo-deploys".into(), last.into(), Allow));
    assert_eq!(rules.len(), 50);
    PolicyConfig { rules }
}
