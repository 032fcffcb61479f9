//! MCP hints against the operator's risk. A server's `readOnlyHint` / `destructiveHint` are
//! its own claims; the risk the catalog holds is the operator's decision (toolgate trusts
//! hints only from trusted servers). When they disagree one of them is probably wrong: a
//! destructive tool running at risk `read` skips approval.

use toolgate_protocol::{Annotations, Risk};

use crate::finding::{Finding, Rule, Severity};

/// The hint rule for one tool.
pub fn check(tool: &str, risk: Risk, hints: &Annotations) -> Vec<Finding> {
    let mut out = Vec::new();
    if hints.destructive_hint == Some(true) && risk == Risk::Read {
        out.push(Finding::new(
            tool,
            Rule::HintRisk,
            Severity::Warning,
            "the server marks the tool destructive, but it runs at risk read (no approval)",
            format!("set its risk to dangerous (MCP: `risk = {{ {} = \"dangerous\" }}` on the server), or confirm it only reads", own(tool)),
        ));
    } else if hints.read_only_hint == Some(false) && risk == Risk::Read {
        out.push(Finding::new(
            tool,
            Rule::HintRisk,
            Severity::Warning,
            "the server says the tool changes state (readOnlyHint false), but it runs at risk read",
            format!("set its risk to write (MCP: `risk = {{ {} = \"write\" }}` on the server), or confirm it only reads", own(tool)),
        ));
    } else if hints.read_only_hint == Some(true) && risk != Risk::Read {
        out.push(Finding::new(
            tool,
            Rule::HintRisk,
            Severity::Note,
            format!("the server marks the tool read-only, but it runs at risk {risk}: every call asks for approval it may not need"),
            format!("if it only reads, set its risk to read (MCP: `risk = {{ {} = \"read\" }}` on the server)", own(tool)),
        ));
    }
    out
}

fn own(tool: &str) -> &str {
    crate::name::own_name(tool)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hints(read_only: Option<bool>, destructive: Option<bool>) -> Annotations {
        Annotations {
            read_only_hint: read_only,
            destructive_hint: destructive,
            ..Annotations::default()
        }
    }

    #[test]
    fn contradictions_are_found_agreement_is_not() {
        let got: Vec<(Severity, String)> = [
            check("mcp__fs__delete_file", Risk::Read, &hints(None, Some(true))),
            check("mcp__fs__write_file", Risk::Read, &hints(Some(false), None)),
            check("mcp__fs__read_file", Risk::Write, &hints(Some(true), None)),
            check(
                "mcp__fs__read_file",
                Risk::Read,
                &hints(Some(true), Some(false)),
            ),
            check(
                "mcp__fs__delete_file",
                Risk::Dangerous,
                &hints(None, Some(true)),
            ),
        ]
        .into_iter()
        .flatten()
        .map(|f| (f.severity, f.fix))
        .collect();
        assert_eq!(
            got,
            [
                (Severity::Warning, "set its risk to dangerous (MCP: `risk = { delete_file = \"dangerous\" }` on the server), or confirm it only reads".to_owned()),
                (Severity::Warning, "set its risk to write (MCP: `risk = { write_file = \"write\" }` on the server), or confirm it only reads".to_owned()),
                (Severity::Note, "if it only reads, set its risk to read (MCP: `risk = { read_file = \"read\" }` on the server)".to_owned()),
            ]
        );
    }
}
