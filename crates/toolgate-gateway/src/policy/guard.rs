//! Tool guards: the conjuncts of a condition that only compare `tool` with a literal
//! (`tool == "shell"`, `tool.startsWith("mcp__github__")`), found when the rule compiles and
//! checked in Rust before the condition is evaluated. Most rules are about one tool or one
//! server, so most rules are skipped for most calls without touching CEL.
//!
//! Skipping is exact: in CEL `false && x` is `false` whatever `x` is, an error included
//! (`&&` is commutative), so a condition with a false guard among its top-level conjuncts is
//! false — the verdict evaluation would have given.

use cel::common::ast::{Expr, IdedExpr, LiteralValue};

/// One `tool` test a condition requires.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ToolGuard {
    Is(String),
    StartsWith(String),
}

impl ToolGuard {
    pub(crate) fn holds(&self, tool: &str) -> bool {
        match self {
            ToolGuard::Is(name) => tool == name,
            ToolGuard::StartsWith(prefix) => tool.starts_with(prefix.as_str()),
        }
    }
}

/// The guards among the top-level conjuncts of `expr`.
pub(crate) fn tool_guards(expr: &IdedExpr) -> Vec<ToolGuard> {
    let mut guards = Vec::new();
    collect(expr, &mut guards);
    guards
}

fn collect(expr: &IdedExpr, guards: &mut Vec<ToolGuard>) {
    let Expr::Call(call) = &expr.expr else {
        return;
    };
    match (
        call.func_name.as_str(),
        call.target.as_deref(),
        &call.args[..],
    ) {
        ("_&&_", None, [left, right]) => {
            collect(left, guards);
            collect(right, guards);
        }
        ("_==_", None, [a, b]) => {
            let lit = match (is_tool(a), is_tool(b)) {
                (true, _) => string_literal(b),
                (_, true) => string_literal(a),
                _ => None,
            };
            guards.extend(lit.map(|l| ToolGuard::Is(l.to_owned())));
        }
        ("startsWith", Some(target), [prefix]) if is_tool(target) => {
            guards.extend(string_literal(prefix).map(|p| ToolGuard::StartsWith(p.to_owned())));
        }
        _ => {}
    }
}

fn is_tool(expr: &IdedExpr) -> bool {
    matches!(&expr.expr, Expr::Ident(name) if name == "tool")
}

fn string_literal(expr: &IdedExpr) -> Option<&str> {
    match &expr.expr {
        Expr::Literal(LiteralValue::String(s)) => Some(s.inner()),
        _ => None,
    }
}
