//! Name rules: the tool's own name (after `mcp__{server}__` for federated tools) is
//! snake_case and starts with a verb (`read_file`, `search_issues`), so that a model reads
//! the action first and names look alike across servers.

use crate::finding::{Finding, Rule, Severity};

/// Verbs a tool name may start with: actions on data, files, services and processes.
const VERBS: &[&str] = &[
    "abort",
    "accept",
    "add",
    "analyze",
    "append",
    "apply",
    "approve",
    "archive",
    "ask",
    "assign",
    "attach",
    "browser",
    "build",
    "calculate",
    "call",
    "cancel",
    "check",
    "clear",
    "click",
    "clone",
    "close",
    "commit",
    "compare",
    "compile",
    "compute",
    "configure",
    "confirm",
    "connect",
    "convert",
    "copy",
    "count",
    "create",
    "decide",
    "decode",
    "delete",
    "deploy",
    "describe",
    "detect",
    "diff",
    "disable",
    "download",
    "draft",
    "drop",
    "edit",
    "enable",
    "encode",
    "estimate",
    "evaluate",
    "execute",
    "explain",
    "export",
    "extract",
    "fetch",
    "fill",
    "find",
    "fork",
    "format",
    "generate",
    "get",
    "grant",
    "import",
    "index",
    "insert",
    "inspect",
    "install",
    "invite",
    "join",
    "label",
    "launch",
    "list",
    "load",
    "lock",
    "log",
    "lookup",
    "make",
    "mark",
    "merge",
    "move",
    "navigate",
    "notify",
    "open",
    "parse",
    "patch",
    "pause",
    "ping",
    "plan",
    "play",
    "post",
    "predict",
    "press",
    "preview",
    "print",
    "publish",
    "pull",
    "push",
    "put",
    "query",
    "rank",
    "read",
    "record",
    "refresh",
    "reject",
    "reload",
    "remove",
    "rename",
    "render",
    "reply",
    "report",
    "request",
    "reset",
    "resolve",
    "restart",
    "restore",
    "resume",
    "retrieve",
    "revoke",
    "run",
    "save",
    "scan",
    "schedule",
    "screenshot",
    "scroll",
    "search",
    "select",
    "send",
    "set",
    "share",
    "show",
    "sign",
    "snapshot",
    "sort",
    "start",
    "stop",
    "stream",
    "submit",
    "subscribe",
    "summarize",
    "switch",
    "sync",
    "tag",
    "take",
    "test",
    "toggle",
    "track",
    "transfer",
    "transform",
    "translate",
    "trigger",
    "type",
    "undo",
    "unlock",
    "unsubscribe",
    "update",
    "upload",
    "upsert",
    "validate",
    "verify",
    "view",
    "wait",
    "watch",
    "write",
];

/// The part of a catalog name its author chose (`mcp__github__create_issue` → `create_issue`).
pub fn own_name(catalog_name: &str) -> &str {
    match catalog_name.strip_prefix("mcp__") {
        Some(rest) => rest.split_once("__").map_or(rest, |(_, tool)| tool),
        None => catalog_name,
    }
}

/// `getUser`, `get-user`, `Get User` → `get_user`.
pub fn to_snake(name: &str) -> String {
    let mut out = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            if prev_lower && !out.ends_with('_') {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
            prev_lower = false;
        } else if c.is_ascii_alphanumeric() {
            out.push(c);
            prev_lower = true;
        } else if !out.is_empty() && !out.ends_with('_') {
            out.push('_');
            prev_lower = false;
        }
    }
    out.trim_end_matches('_').to_owned()
}

fn is_snake(name: &str) -> bool {
    !name.is_empty()
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name.split('_').all(|w| {
            !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        })
}

/// The name rules for one tool.
pub fn check(catalog_name: &str) -> Vec<Finding> {
    let own = own_name(catalog_name);
    let mut out = Vec::new();
    let snake = to_snake(own);
    if !is_snake(own) {
        out.push(Finding::new(
            catalog_name,
            Rule::NameStyle,
            Severity::Warning,
            format!("`{own}` is not snake_case"),
            format!("rename it `{snake}`"),
        ));
    }
    let words: Vec<&str> = snake.split('_').filter(|w| !w.is_empty()).collect();
    let Some(first) = words.first() else {
        return out;
    };
    if !VERBS.contains(first) {
        let fix = match words.iter().position(|w| VERBS.contains(w)) {
            Some(at) => {
                let mut reordered = vec![words[at]];
                reordered.extend(
                    words
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| *i != at)
                        .map(|(_, w)| *w),
                );
                format!("put the verb first: `{}`", reordered.join("_"))
            }
            None => format!(
                "say the action first: `<verb>_{snake}` (get, list, search, create, run, …)"
            ),
        };
        out.push(Finding::new(
            catalog_name,
            Rule::NameVerb,
            Severity::Note,
            format!("`{own}` does not start with a verb"),
            fix,
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(name: &str) -> Vec<(Rule, String)> {
        check(name).into_iter().map(|f| (f.rule, f.fix)).collect()
    }

    #[test]
    fn snake_case_verb_first_names_pass() {
        for name in [
            "read_file",
            "mcp__github__create_issue",
            "search_tools",
            "get_v2_user",
        ] {
            assert_eq!(rules(name), [], "{name}");
        }
    }

    #[test]
    fn other_names_get_a_concrete_rename() {
        assert_eq!(
            rules("mcp__files__fileRead"),
            [
                (Rule::NameStyle, "rename it `file_read`".to_owned()),
                (Rule::NameVerb, "put the verb first: `read_file`".to_owned()),
            ]
        );
        assert_eq!(
            rules("weather"),
            [(
                Rule::NameVerb,
                "say the action first: `<verb>_weather` (get, list, search, create, run, …)"
                    .to_owned()
            )]
        );
        assert_eq!(to_snake("Get-HTTP Response"), "get_http_response");
    }
}
