//! What a `[[policy.rules]]` condition can read: the call's facts as CEL variables, and the
//! compile-time check that a condition reads nothing else.
//!
//! The variables are built once per call and shared by every rule. Strings and the JSON of
//! the arguments and claims are borrowed from the call, not copied: a JSON object becomes a
//! CEL map whose string keys and values point into the call's own `serde_json::Value`.

use std::collections::HashMap;
use std::sync::OnceLock;

use cel::common::ast::{EntryExpr, Expr, IdedExpr};
use cel::common::types::{
    CelBool, CelDouble, CelInt, CelList, CelMap, CelMapKey, CelNull, CelString, CelUInt,
};
use cel::common::value::{CowVal, Val};
use cel::context::VariableResolver;
use serde_json::Value;
use toolgate_protocol::Risk;

use super::facts::Facts;

/// The variables a condition may name, in the order the documentation lists them.
pub const VARIABLES: [&str; 11] = [
    "tool",
    "target",
    "args",
    "claims",
    "principal",
    "role",
    "risk",
    "source",
    "issuer",
    "subject",
    "facts",
];

/// Type names CEL resolves as identifiers (`type(args.n) == int`).
const TYPE_NAMES: [&str; 10] = [
    "bool",
    "bytes",
    "double",
    "dyn",
    "int",
    "list",
    "map",
    "null_type",
    "string",
    "type",
];

/// The facts of one call that rules are evaluated against.
#[derive(Debug, Clone, Copy)]
pub struct PolicyInput<'a> {
    pub tool: &'a str,
    /// What the call acts on: `tool`, `prompt` or `resource` ([`crate::TargetKind`]).
    pub target: crate::TargetKind,
    /// The validated arguments.
    pub args: &'a Value,
    /// The caller's claims; `None` (no identity) reads as `{}`.
    pub claims: Option<&'a Value>,
    pub principal: &'a str,
    pub role: &'a str,
    pub risk: Risk,
    /// [`toolgate_protocol::ToolSpec::source`]: `builtin`, `mcp:<server>`, ….
    pub source: &'a str,
    /// `""` when the caller has no identity.
    pub issuer: &'a str,
    pub subject: &'a str,
    /// The call's paths as its tool resolved them ([`toolgate_core::Tool::policy_paths`]);
    /// `None` normalises the arguments' paths lexically.
    pub paths: Option<&'a [String]>,
}

/// The variables of one call, as CEL values borrowing the call's data. `args` and `claims`
/// are converted on first use, so a call whose rules all fail their tool guard converts
/// nothing.
pub(crate) struct CallVars<'a> {
    input: PolicyInput<'a>,
    strings: [CelString<'a>; 8],
    args: OnceLock<Box<dyn Val + 'a>>,
    claims: OnceLock<Box<dyn Val + 'a>>,
    facts: OnceLock<Box<dyn Val + 'a>>,
}

impl<'a> CallVars<'a> {
    pub(crate) fn new(input: PolicyInput<'a>) -> Self {
        let i = input;
        CallVars {
            strings: [
                i.tool,
                i.principal,
                i.role,
                i.risk.as_str(),
                i.source,
                i.issuer,
                i.subject,
                i.target.as_str(),
            ]
            .map(CelString::from),
            input,
            args: OnceLock::new(),
            claims: OnceLock::new(),
            facts: OnceLock::new(),
        }
    }
}

impl VariableResolver for CallVars<'_> {
    fn resolve<'b>(&'b self, variable: &str) -> Option<CowVal<'b, 'b>> {
        let string = |i: usize| Some(CowVal::Borrowed(&self.strings[i]));
        match variable {
            "tool" => string(0),
            "principal" => string(1),
            "role" => string(2),
            "risk" => string(3),
            "source" => string(4),
            "issuer" => string(5),
            "subject" => string(6),
            "target" => string(7),
            "args" => Some(CowVal::Borrowed(
                self.args.get_or_init(|| json_val(self.input.args)).as_ref(),
            )),
            "claims" => Some(CowVal::Borrowed(
                self.claims
                    .get_or_init(|| match self.input.claims {
                        Some(c) => json_val(c),
                        None => Box::new(CelMap::from(HashMap::new())),
                    })
                    .as_ref(),
            )),
            "facts" => Some(CowVal::Borrowed(
                self.facts
                    .get_or_init(|| {
                        let i = &self.input;
                        let facts = Facts::of(i.tool, i.source, i.args, i.paths);
                        owned_val(serde_json::to_value(facts).unwrap_or_default())
                    })
                    .as_ref(),
            )),
            _ => None,
        }
    }
}

/// A JSON value as a CEL value that owns its strings (for values built per call).
fn owned_val(v: Value) -> Box<dyn Val + 'static> {
    match v {
        Value::String(s) => Box::new(CelString::from(s)),
        Value::Array(items) => Box::new(CelList::from(
            items.into_iter().map(owned_val).collect::<Vec<_>>(),
        )),
        Value::Object(map) => Box::new(CelMap::from(
            map.into_iter()
                .map(|(k, v)| (CelMapKey::from(k), owned_val(v)))
                .collect::<HashMap<_, _>>(),
        )),
        Value::Null => Box::new(CelNull),
        Value::Bool(b) => Box::new(CelBool::from(b)),
        Value::Number(n) => match n.as_i64() {
            Some(i) => Box::new(CelInt::from(i)),
            None => Box::new(CelDouble::from(n.as_f64().unwrap_or(f64::NAN))),
        },
    }
}

/// A JSON value as a CEL value borrowing its strings. Integers that fit `i64` are `int`
/// (so `args.count > 3` compares like with like), larger ones `uint`, the rest `double`.
fn json_val(v: &Value) -> Box<dyn Val + '_> {
    match v {
        Value::Null => Box::new(CelNull),
        Value::Bool(b) => Box::new(CelBool::from(*b)),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => Box::new(CelInt::from(i)),
            (None, Some(u)) => Box::new(CelUInt::from(u)),
            (None, None) => Box::new(CelDouble::from(n.as_f64().unwrap_or(f64::NAN))),
        },
        Value::String(s) => Box::new(CelString::from(s.as_str())),
        Value::Array(items) => Box::new(CelList::from(
            items.iter().map(json_val).collect::<Vec<_>>(),
        )),
        Value::Object(map) => Box::new(CelMap::from(
            map.iter()
                .map(|(k, v)| (CelMapKey::from(k.as_str()), json_val(v)))
                .collect::<HashMap<_, _>>(),
        )),
    }
}

/// The identifiers `expr` reads that are neither a [`VARIABLES`] entry, a type name, nor a
/// variable bound by an enclosing macro (`args.paths.all(p, …)` binds `p`).
pub(crate) fn unknown_identifiers(expr: &IdedExpr) -> Vec<String> {
    let mut unknown = Vec::new();
    walk(expr, &mut Vec::new(), &mut unknown);
    unknown
}

fn walk<'e>(expr: &'e IdedExpr, bound: &mut Vec<&'e str>, unknown: &mut Vec<String>) {
    match &expr.expr {
        Expr::Ident(name) => {
            let known = name.starts_with('@')
                || VARIABLES.contains(&name.as_str())
                || TYPE_NAMES.contains(&name.as_str())
                || bound.contains(&name.as_str());
            if !known && !unknown.contains(name) {
                unknown.push(name.clone());
            }
        }
        Expr::Call(call) => {
            call.target.iter().for_each(|t| walk(t, bound, unknown));
            call.args.iter().for_each(|a| walk(a, bound, unknown));
        }
        Expr::Comprehension(c) => {
            walk(&c.iter_range, bound, unknown);
            walk(&c.accu_init, bound, unknown);
            let depth = bound.len();
            bound.push(&c.accu_var);
            bound.push(&c.iter_var);
            bound.extend(c.iter_var2.as_deref());
            for e in [&c.loop_cond, &c.loop_step, &c.result] {
                walk(e, bound, unknown);
            }
            bound.truncate(depth);
        }
        Expr::List(list) => list.elements.iter().for_each(|e| walk(e, bound, unknown)),
        Expr::Map(m) => walk_entries(&m.entries, bound, unknown),
        Expr::Struct(s) => walk_entries(&s.entries, bound, unknown),
        Expr::Select(select) => walk(&select.operand, bound, unknown),
        Expr::Literal(_) | Expr::Unspecified => {}
    }
}

fn walk_entries<'e>(
    entries: &'e [cel::common::ast::IdedEntryExpr],
    bound: &mut Vec<&'e str>,
    unknown: &mut Vec<String>,
) {
    for entry in entries {
        match &entry.expr {
            EntryExpr::StructField(f) => walk(&f.value, bound, unknown),
            EntryExpr::MapEntry(e) => {
                walk(&e.key, bound, unknown);
                walk(&e.value, bound, unknown);
            }
        }
    }
}
