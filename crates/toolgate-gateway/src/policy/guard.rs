//! Guards: the part of a condition whose value Rust can compute without CEL — comparisons of
//! a string variable with a literal (`tool == "shell"`, `risk != "read"`,
//! `principal.startsWith("ci-")`) and presence tests on the call's maps (`has(args.path)`,
//! `has(claims.groups)`), combined by `&&`, `||` and `!`. A guard is found when its rule
//! compiles and checked before the condition is evaluated; when it settles the condition,
//! the interpreter is not run. Most rules are about one tool, one server, one caller or one
//! argument, so most rules are decided for most calls without touching CEL.
//!
//! # Why a guard never changes a verdict
//!
//! [`Guard::value`] returns `Some(b)` only when evaluating the same subexpression with CEL
//! gives exactly `Ok(Bool(b))` — never an error, never another type — and `None` (not
//! known) otherwise. By induction over the guard:
//!
//! - `var == "lit"`, `var != "lit"`, `var.startsWith("lit")`: the seven string variables
//!   are always bound to strings, and these operations on two strings cannot fail.
//! - `has(args.k)` / `has(claims.k)`: known only when the map is a JSON object (absent
//!   claims read as `{}`); then CEL answers whether the key is present, without error. On
//!   anything else `has` may fail, so the guard says `None`.
//! - `!g`: CEL negates a bool and errors on anything else; `g` known means a bool.
//! - `a && b` (cel 0.15 `LOGICAL_AND`): if either side is `false` the result is `false`,
//!   even when the other side errors or is not a bool (`false && err`, `err && false`);
//!   both `true` gives `true`. An unknown side (any CEL at all) is kept as `None`, so
//!   `x && false` is known `false` and `x && true` is unknown.
//! - `a || b`: dually, either side `true` gives `true` whatever the other; both `false`
//!   gives `false`.
//! - Anything else (`in`, `size`, `matches`, `?:`, macros, `args.k == …`) is `None`.
//!
//! So a rule whose guard is known `false` has the verdict `False` (a deny or ask rule that
//! would error is never skipped: an error is never known `false`), and one whose guard is
//! known `true` has the verdict `True`. Only literal idents are recognised; a guard never
//! looks inside a macro, so a name there cannot be a comprehension's bound variable.

use cel::common::ast::{Expr, IdedExpr, LiteralValue, operators};
use serde_json::Value;

use super::vars::PolicyInput;

/// A string variable of the call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StrVar {
    Tool,
    Principal,
    Role,
    Risk,
    Source,
    Issuer,
    Subject,
}

impl StrVar {
    fn of(expr: &IdedExpr) -> Option<StrVar> {
        let Expr::Ident(name) = &expr.expr else {
            return None;
        };
        Some(match name.as_str() {
            "tool" => StrVar::Tool,
            "principal" => StrVar::Principal,
            "role" => StrVar::Role,
            "risk" => StrVar::Risk,
            "source" => StrVar::Source,
            "issuer" => StrVar::Issuer,
            "subject" => StrVar::Subject,
            _ => return None,
        })
    }

    fn get<'a>(self, input: &PolicyInput<'a>) -> &'a str {
        match self {
            StrVar::Tool => input.tool,
            StrVar::Principal => input.principal,
            StrVar::Role => input.role,
            StrVar::Risk => input.risk.as_str(),
            StrVar::Source => input.source,
            StrVar::Issuer => input.issuer,
            StrVar::Subject => input.subject,
        }
    }
}

/// A map variable of the call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MapVar {
    Args,
    Claims,
}

/// What Rust can tell about a (sub)condition; see the module docs for why each is exact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Guard {
    /// `var == "lit"` when `equal`, `var != "lit"` otherwise.
    Compare {
        var: StrVar,
        literal: Box<str>,
        equal: bool,
    },
    StartsWith {
        var: StrVar,
        prefix: Box<str>,
    },
    Has {
        map: MapVar,
        key: Box<str>,
    },
    Not(Box<Guard>),
    /// Every conjunct of a chain of `&&`.
    All(Vec<Guard>),
    /// Every disjunct of a chain of `||`.
    Any(Vec<Guard>),
    /// CEL only can tell.
    Opaque,
}

impl Guard {
    /// The guard of `expr`, or `None` when nothing of it can be checked in Rust.
    pub(crate) fn of_condition(expr: &IdedExpr) -> Option<Guard> {
        Some(Guard::of(expr)).filter(|g| *g != Guard::Opaque)
    }

    fn of(expr: &IdedExpr) -> Guard {
        let Expr::Call(call) = &expr.expr else {
            return Guard::of_has(expr);
        };
        match (
            call.func_name.as_str(),
            call.target.as_deref(),
            &call.args[..],
        ) {
            (operators::LOGICAL_AND, None, [_, _]) => {
                let mut all = Vec::new();
                flatten(expr, operators::LOGICAL_AND, &mut all);
                if all.iter().all(|g| *g == Guard::Opaque) {
                    Guard::Opaque
                } else {
                    Guard::All(all)
                }
            }
            (operators::LOGICAL_OR, None, [_, _]) => {
                let mut any = Vec::new();
                flatten(expr, operators::LOGICAL_OR, &mut any);
                if any.iter().all(|g| *g == Guard::Opaque) {
                    Guard::Opaque
                } else {
                    Guard::Any(any)
                }
            }
            (operators::LOGICAL_NOT, None, [inner]) => match Guard::of(inner) {
                Guard::Opaque => Guard::Opaque,
                inner => Guard::Not(Box::new(inner)),
            },
            (operators::EQUALS | operators::NOT_EQUALS, None, [a, b]) => {
                let equal = call.func_name == operators::EQUALS;
                let compare = |var: &IdedExpr, lit: &IdedExpr| {
                    Some(Guard::Compare {
                        var: StrVar::of(var)?,
                        literal: string_literal(lit)?.into(),
                        equal,
                    })
                };
                compare(a, b)
                    .or_else(|| compare(b, a))
                    .unwrap_or(Guard::Opaque)
            }
            ("startsWith", Some(target), [prefix]) => StrVar::of(target)
                .zip(string_literal(prefix))
                .map_or(Guard::Opaque, |(var, prefix)| Guard::StartsWith {
                    var,
                    prefix: prefix.into(),
                }),
            _ => Guard::Opaque,
        }
    }

    /// `has(args.k)` / `has(claims.k)`.
    fn of_has(expr: &IdedExpr) -> Guard {
        let Expr::Select(select) = &expr.expr else {
            return Guard::Opaque;
        };
        let map = match &select.operand.expr {
            Expr::Ident(name) if name == "args" => MapVar::Args,
            Expr::Ident(name) if name == "claims" => MapVar::Claims,
            _ => return Guard::Opaque,
        };
        if !select.test {
            return Guard::Opaque;
        }
        Guard::Has {
            map,
            key: select.field.as_str().into(),
        }
    }

    /// The value CEL would give this (sub)condition on `input`, when Rust knows it.
    pub(crate) fn value(&self, input: &PolicyInput<'_>) -> Option<bool> {
        match self {
            Guard::Compare {
                var,
                literal,
                equal,
            } => Some((var.get(input) == &**literal) == *equal),
            Guard::StartsWith { var, prefix } => Some(var.get(input).starts_with(&**prefix)),
            Guard::Has { map, key } => {
                let value = match map {
                    MapVar::Args => input.args,
                    MapVar::Claims => match input.claims {
                        Some(claims) => claims,
                        None => return Some(false),
                    },
                };
                match value {
                    Value::Object(object) => Some(object.contains_key(&**key)),
                    _ => None,
                }
            }
            Guard::Not(inner) => inner.value(input).map(|b| !b),
            Guard::All(all) => {
                let mut known = true;
                for g in all {
                    match g.value(input) {
                        Some(false) => return Some(false),
                        Some(true) => {}
                        None => known = false,
                    }
                }
                known.then_some(true)
            }
            Guard::Any(any) => {
                let mut known = true;
                for g in any {
                    match g.value(input) {
                        Some(true) => return Some(true),
                        Some(false) => {}
                        None => known = false,
                    }
                }
                known.then_some(false)
            }
            Guard::Opaque => None,
        }
    }
}

/// The operands of a chain of `op` (`a && b && c`, however the parser nested it), as guards.
fn flatten(expr: &IdedExpr, op: &str, out: &mut Vec<Guard>) {
    if let Expr::Call(call) = &expr.expr
        && call.func_name == op
        && call.target.is_none()
        && let [left, right] = &call.args[..]
    {
        flatten(left, op, out);
        flatten(right, op, out);
        return;
    }
    out.push(Guard::of(expr));
}

fn string_literal(expr: &IdedExpr) -> Option<&str> {
    match &expr.expr {
        Expr::Literal(LiteralValue::String(s)) => Some(s.inner()),
        _ => None,
    }
}
