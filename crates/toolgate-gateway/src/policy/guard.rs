//! Guards: the part of a condition whose value Rust can compute without CEL — a string
//! variable or a value read from `args` / `claims` compared with a literal
//! (`tool == "shell"`, `risk != "read"`, `args.count > 50`, `size(args.text) > 100000`,
//! `"admins" in claims.groups`, `args.path.startsWith("/etc/")`, `args.text.matches("…")`)
//! and presence tests (`has(args.path)`), combined by `&&`, `||` and `!`. A guard is found
//! when its rule compiles and checked before the condition is evaluated; when it settles
//! the condition, the interpreter is not run. Most rules are about one tool, one server,
//! one caller or one argument, so most rules are decided for most calls without touching CEL.
//!
//! # Why a guard never changes a verdict
//!
//! [`Guard::value`] returns `Some(b)` only when evaluating the same subexpression with CEL
//! (cel 0.15, as `vars` binds the variables) gives exactly `Ok(Bool(b))` — never an error,
//! never another type — and `None` (not known) otherwise. By induction over the guard:
//!
//! - Reading a value: the seven string variables are always strings; `args.a.b` is known
//!   only when every key is present in a JSON object (CEL errors on a missing key or a
//!   non-map, so then the guard says `None`). Absent claims read as `{}`.
//! - Comparisons are known only for the types CEL compares without error or conversion:
//!   `==` / `!=` of a string, a bool or an int (a JSON integer that fits `i64`, as
//!   `vars::json_val` makes it) with a literal of the same type, `<` … `>=` of two ints;
//!   `size` of a string (code points, as CEL counts), a list or a map; `startsWith`,
//!   `endsWith`, `contains` and `matches` (the same regex, compiled the same way) on a
//!   string; `"…" in` a list whose elements are all strings. Any other type is `None`.
//! - `has(args.k)` / `has(claims.k)`: known only when the map is a JSON object; then CEL
//!   answers whether the key is present, without error. On anything else `has` may fail.
//! - `!g`: CEL negates a bool and errors on anything else; `g` known means a bool.
//! - `a && b` (cel 0.15 `LOGICAL_AND`): if either side is `false` the result is `false`,
//!   even when the other side errors or is not a bool (`false && err`, `err && false`);
//!   both `true` gives `true`. An unknown side (any CEL at all) is kept as `None`, so
//!   `x && false` is known `false` and `x && true` is unknown.
//! - `a || b`: dually, either side `true` gives `true` whatever the other; both `false`
//!   gives `false`.
//! - Anything else (`?:`, macros, arithmetic, other functions) is `None`.
//!
//! So a rule whose guard is known `false` has the verdict `False` (a deny or ask rule that
//! would error is never skipped: an error is never known `false`), and one whose guard is
//! known `true` has the verdict `True`. Only literal idents are recognised; a guard never
//! looks inside a macro, so a name there cannot be a comprehension's bound variable.
//! `guard_tests` checks all this against the interpreter on generated calls, so a change of
//! CEL's semantics in a new cel release shows up as a failing test, not a changed decision.

use cel::common::ast::{Expr, IdedExpr, LiteralValue, operators};
use regex::Regex;
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
    Target,
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
            "target" => StrVar::Target,
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
            StrVar::Target => input.target.as_str(),
        }
    }
}

/// A map variable of the call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MapVar {
    Args,
    Claims,
}

/// Where a compared value comes from: a string variable, or a chain of keys into `args` or
/// `claims` (`args.options.verbose`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Operand {
    Var(StrVar),
    Path { map: MapVar, keys: Box<[Box<str>]> },
}

/// An operand's value on one call.
#[derive(Clone, Copy)]
enum Fact<'a> {
    Str(&'a str),
    Json(&'a Value),
}

impl Operand {
    fn of(expr: &IdedExpr) -> Option<Operand> {
        if let Some(var) = StrVar::of(expr) {
            return Some(Operand::Var(var));
        }
        let mut keys = Vec::new();
        let mut at = expr;
        while let Expr::Select(select) = &at.expr {
            if select.test {
                return None;
            }
            keys.push(select.field.as_str().into());
            at = &select.operand;
        }
        let map = match &at.expr {
            Expr::Ident(name) if name == "args" => MapVar::Args,
            Expr::Ident(name) if name == "claims" => MapVar::Claims,
            _ => return None,
        };
        if keys.is_empty() {
            return None;
        }
        keys.reverse();
        Some(Operand::Path {
            map,
            keys: keys.into(),
        })
    }

    /// The value CEL reads, when reading it cannot fail: every key on the path is present
    /// in a JSON object (CEL errors on a missing key or a non-map).
    fn get<'a>(&self, input: &PolicyInput<'a>) -> Option<Fact<'a>> {
        match self {
            Operand::Var(var) => Some(Fact::Str(var.get(input))),
            Operand::Path { map, keys } => {
                let mut value = match map {
                    MapVar::Args => input.args,
                    MapVar::Claims => input.claims?,
                };
                for key in keys {
                    value = value.as_object()?.get(&**key)?;
                }
                Some(Fact::Json(value))
            }
        }
    }
}

impl<'a> Fact<'a> {
    fn str(self) -> Option<&'a str> {
        match self {
            Fact::Str(s) => Some(s),
            Fact::Json(v) => v.as_str(),
        }
    }

    /// An `int` in CEL: the JSON integers that fit `i64` (see `vars::json_val`).
    fn int(self) -> Option<i64> {
        match self {
            Fact::Json(Value::Number(n)) => n.as_i64(),
            _ => None,
        }
    }

    fn bool(self) -> Option<bool> {
        match self {
            Fact::Json(Value::Bool(b)) => Some(*b),
            _ => None,
        }
    }

    /// CEL's `size`: code points of a string, elements of a list or a map.
    fn size(self) -> Option<i64> {
        let n = match self {
            Fact::Str(_) | Fact::Json(Value::String(_)) => self.str()?.chars().count(),
            Fact::Json(Value::Array(items)) => items.len(),
            Fact::Json(Value::Object(map)) => map.len(),
            Fact::Json(_) => return None,
        };
        i64::try_from(n).ok()
    }
}

/// A literal a value is compared with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Literal {
    Str(Box<str>),
    Int(i64),
    Bool(bool),
}

impl Literal {
    fn of(expr: &IdedExpr) -> Option<Literal> {
        match &expr.expr {
            Expr::Literal(LiteralValue::String(s)) => Some(Literal::Str(s.inner().into())),
            Expr::Literal(LiteralValue::Int(i)) => Some(Literal::Int(*i.inner())),
            Expr::Literal(LiteralValue::Boolean(b)) => Some(Literal::Bool(*b.inner())),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Cmp {
    fn of(func: &str) -> Option<Cmp> {
        Some(match func {
            operators::EQUALS => Cmp::Eq,
            operators::NOT_EQUALS => Cmp::Ne,
            operators::LESS => Cmp::Lt,
            operators::LESS_EQUALS => Cmp::Le,
            operators::GREATER => Cmp::Gt,
            operators::GREATER_EQUALS => Cmp::Ge,
            _ => return None,
        })
    }

    /// `lit OP x` as `x OP' lit`.
    fn flip(self) -> Cmp {
        match self {
            Cmp::Lt => Cmp::Gt,
            Cmp::Le => Cmp::Ge,
            Cmp::Gt => Cmp::Lt,
            Cmp::Ge => Cmp::Le,
            same => same,
        }
    }

    fn holds(self, ord: std::cmp::Ordering) -> bool {
        match self {
            Cmp::Eq => ord.is_eq(),
            Cmp::Ne => ord.is_ne(),
            Cmp::Lt => ord.is_lt(),
            Cmp::Le => ord.is_le(),
            Cmp::Gt => ord.is_gt(),
            Cmp::Ge => ord.is_ge(),
        }
    }

    fn is_equality(self) -> bool {
        matches!(self, Cmp::Eq | Cmp::Ne)
    }
}

/// A string method with a literal argument.
#[derive(Debug, Clone)]
pub(crate) enum StrTest {
    StartsWith(Box<str>),
    EndsWith(Box<str>),
    Contains(Box<str>),
    /// Our `matches` ([`super::patterns`]), with the same pattern compiled the same way.
    Matches(Regex),
}

impl PartialEq for StrTest {
    fn eq(&self, other: &StrTest) -> bool {
        match (self, other) {
            (StrTest::StartsWith(a), StrTest::StartsWith(b))
            | (StrTest::EndsWith(a), StrTest::EndsWith(b))
            | (StrTest::Contains(a), StrTest::Contains(b)) => a == b,
            (StrTest::Matches(a), StrTest::Matches(b)) => a.as_str() == b.as_str(),
            _ => false,
        }
    }
}

impl StrTest {
    fn holds(&self, s: &str) -> bool {
        match self {
            StrTest::StartsWith(p) => s.starts_with(&**p),
            StrTest::EndsWith(p) => s.ends_with(&**p),
            StrTest::Contains(p) => s.contains(&**p),
            StrTest::Matches(re) => re.is_match(s),
        }
    }
}

/// What Rust can tell about a (sub)condition; see the module docs for why each is exact.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Guard {
    /// `x OP literal` (or `literal OP x`): equality of a string, an int or a bool with a
    /// literal of the same type; order of two ints.
    Compare {
        of: Operand,
        cmp: Cmp,
        literal: Literal,
    },
    /// `size(x) OP int`.
    Size {
        of: Operand,
        cmp: Cmp,
        n: i64,
    },
    /// `x.startsWith("…")`, `endsWith`, `contains`, `matches`.
    Str {
        of: Operand,
        test: StrTest,
    },
    /// `"…" in x`, for a list of strings.
    In {
        needle: Box<str>,
        of: Operand,
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
        let func = call.func_name.as_str();
        match (func, call.target.as_deref(), &call.args[..]) {
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
            (operators::IN, None, [needle, of]) => match (Literal::of(needle), Operand::of(of)) {
                (Some(Literal::Str(needle)), Some(of)) => Guard::In { needle, of },
                _ => Guard::Opaque,
            },
            (_, None, [a, b]) if Cmp::of(func).is_some() => {
                Cmp::of(func).map_or(Guard::Opaque, |cmp| Guard::compare(a, cmp, b))
            }
            ("startsWith" | "endsWith" | "contains" | "matches", Some(target), [arg]) => {
                let Some(Literal::Str(lit)) = Literal::of(arg) else {
                    return Guard::Opaque;
                };
                let test = match func {
                    "startsWith" => StrTest::StartsWith(lit),
                    "endsWith" => StrTest::EndsWith(lit),
                    "contains" => StrTest::Contains(lit),
                    _ => match Regex::new(&lit) {
                        Ok(re) => StrTest::Matches(re),
                        Err(_) => return Guard::Opaque,
                    },
                };
                Operand::of(target).map_or(Guard::Opaque, |of| Guard::Str { of, test })
            }
            _ => Guard::Opaque,
        }
    }

    /// `a OP b`, one side an operand, the other a literal (or `size(operand)` and an int).
    fn compare(a: &IdedExpr, cmp: Cmp, b: &IdedExpr) -> Guard {
        let one_way = |x: &IdedExpr, cmp: Cmp, lit: &IdedExpr| {
            let literal = Literal::of(lit)?;
            if let Some(of) = size_of(x) {
                let Literal::Int(n) = literal else {
                    return None;
                };
                return Some(Guard::Size { of, cmp, n });
            }
            Some(Guard::Compare {
                of: Operand::of(x)?,
                cmp,
                literal,
            })
        };
        one_way(a, cmp, b)
            .or_else(|| one_way(b, cmp.flip(), a))
            .unwrap_or(Guard::Opaque)
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
            Guard::Compare { of, cmp, literal } => {
                let fact = of.get(input)?;
                let ord = match literal {
                    Literal::Str(lit) if cmp.is_equality() => fact.str()?.cmp(&**lit),
                    Literal::Bool(lit) if cmp.is_equality() => fact.bool()?.cmp(lit),
                    Literal::Int(lit) => fact.int()?.cmp(lit),
                    Literal::Str(_) | Literal::Bool(_) => return None,
                };
                Some(cmp.holds(ord))
            }
            Guard::Size { of, cmp, n } => Some(cmp.holds(of.get(input)?.size()?.cmp(n))),
            Guard::Str { of, test } => Some(test.holds(of.get(input)?.str()?)),
            Guard::In { needle, of } => {
                let Fact::Json(Value::Array(items)) = of.get(input)? else {
                    return None;
                };
                let mut found = false;
                for item in items {
                    found |= item.as_str()? == &**needle;
                }
                Some(found)
            }
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

/// `x` of `size(x)`.
fn size_of(expr: &IdedExpr) -> Option<Operand> {
    let Expr::Call(call) = &expr.expr else {
        return None;
    };
    match (
        call.func_name.as_str(),
        call.target.as_deref(),
        &call.args[..],
    ) {
        ("size", None, [x]) => Operand::of(x),
        _ => None,
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
