//! Outputs for testing a checker: the ground truth written as a model would (Java and
//! JavaScript values as source strings) and mutations of it, each of which the official
//! checker should judge in a known way. Used by the agreement test against the official
//! checker and by the benchmark.
//!
//! Every AST entry yields the ground truth plus at least the five mutations the issue names
//! (wrong value, missing required parameter, extra parameter, wrong function name, wrong
//! type), and more where they apply (int for float, a re-spelled string, the second accepted
//! value, optional parameters left out, calls reordered, dropped or repeated, another offered
//! function), and, for every argument of every call, another value, another type, an element
//! of another type, an inner value changed or an inner key dropped.

use super::category::{CheckKind, Language};
use super::data::{Case, ExpectedCall, FunctionDoc};
use super::output::Call;
use super::value::PyValue;

/// One generated output and what it is.
#[derive(Debug, Clone)]
pub struct Mutant {
    /// `ground_truth`, `wrong_value`, `missing_required`, …
    pub label: &'static str,
    /// The decoded output.
    pub output: Vec<Call>,
}

/// The ground truth and its mutations for one case.
pub fn mutants(case: &Case) -> Vec<Mutant> {
    let functions = &case.entry.functions;
    let Some(answer) = &case.answer else {
        // Irrelevance / relevance: no call, and a call of the first offered function.
        let mut out = vec![Mutant {
            label: "no_call",
            output: Vec::new(),
        }];
        let name = functions
            .first()
            .map_or("any_function", |f| f.name.as_str());
        out.push(Mutant {
            label: "a_call",
            output: vec![Call::new(name, Vec::new())],
        });
        return out;
    };
    let language = case.category.language();
    let render = |which: Pick| -> Vec<Call> {
        answer
            .iter()
            .map(|e| render_call(e, doc(functions, &e.name), language, which))
            .collect()
    };
    let truth = render(Pick::First);
    let mut out = vec![Mutant {
        label: "ground_truth",
        output: truth.clone(),
    }];
    let mut push = |label: &'static str, output: Vec<Call>| out.push(Mutant { label, output });

    let first_doc = truth.first().and_then(|c| doc(functions, &c.name));

    // wrong value: the first argument changed to another value of the same type.
    let mut m = truth.clone();
    if let Some(c) = m.first_mut() {
        match c.args.first_mut() {
            Some((_, v)) => *v = other_value(v),
            None => c.args.push(("zz_value".into(), PyValue::Int(1))),
        }
    }
    push("wrong_value", m);

    // missing required: the first required parameter (or the first argument) left out.
    let mut m = truth.clone();
    if let Some(c) = m.first_mut() {
        let required = first_doc
            .and_then(FunctionDoc::required)
            .unwrap_or_default();
        let pos = c
            .args
            .iter()
            .position(|(k, _)| required.contains(&k.as_str()))
            .or(if c.args.is_empty() { None } else { Some(0) });
        match pos {
            Some(i) => {
                c.args.remove(i);
            }
            None => {
                m.clear();
            }
        }
    }
    push("missing_required", m);

    // extra parameter.
    let mut m = truth.clone();
    if let Some(c) = m.first_mut() {
        c.args.push(("zz_unexpected".into(), PyValue::Int(1)));
    }
    push("extra_param", m);

    // wrong function name.
    let mut m = truth.clone();
    if let Some(c) = m.first_mut() {
        c.name.push_str("_v2");
    }
    push("wrong_name", m);

    // wrong type: the first argument as a value of another type.
    let mut m = truth.clone();
    if let Some(c) = m.first_mut() {
        match c.args.first_mut() {
            Some((_, v)) => *v = other_type(v),
            None => c.args.push(("zz_type".into(), PyValue::Str("1".into()))),
        }
    }
    push("wrong_type", m);

    // Every argument of every call, one at a time: another value, another type, and inside
    // lists and objects (an element of another type, an inner value changed, an inner key
    // dropped) — these reach the nested type, list, object and list-of-objects rules.
    for (ci, call) in truth.iter().enumerate() {
        for (ai, (_, value)) in call.args.iter().enumerate() {
            let mut with = |label: &'static str, v: PyValue| {
                let mut m = truth.clone();
                m[ci].args[ai].1 = v;
                push(label, m);
            };
            if ci > 0 || ai > 0 {
                with("wrong_value_each", other_value(value));
                with("wrong_type_each", other_type(value));
            }
            match value {
                PyValue::List(items) if !items.is_empty() => {
                    let mut items = items.clone();
                    items[0] = other_type(&items[0]);
                    with("element_type", PyValue::List(items.clone()));
                    if let PyValue::Dict(pairs) = &value_first(value)
                        && let Some((k, v)) = pairs.first()
                    {
                        let mut inner = pairs.clone();
                        inner[0] = (k.clone(), other_value(v));
                        let mut list = match value {
                            PyValue::List(l) => l.clone(),
                            _ => Vec::new(),
                        };
                        list[0] = PyValue::Dict(inner);
                        with("inner_value", PyValue::List(list));
                    }
                }
                PyValue::Dict(pairs) if !pairs.is_empty() => {
                    let mut changed = pairs.clone();
                    changed[0].1 = other_value(&changed[0].1);
                    with("inner_value", PyValue::Dict(changed));
                    let mut dropped = pairs.clone();
                    dropped.remove(0);
                    with("inner_key_dropped", PyValue::Dict(dropped));
                }
                _ => {}
            }
        }
    }

    // int for float: every integral float argument written as an int.
    let mut m = truth.clone();
    let mut changed = false;
    for c in &mut m {
        for (_, v) in &mut c.args {
            if let PyValue::Float(f) = v
                && f.fract() == 0.0
                && f.abs() < 1e15
            {
                *v = PyValue::Int(*f as i128);
                changed = true;
            }
        }
    }
    if changed {
        push("int_for_float", m);
    }

    // a string re-spelled: upper case, with spaces and punctuation the normalisation drops.
    let mut m = truth.clone();
    if let Some((_, v)) = m
        .iter_mut()
        .flat_map(|c| c.args.iter_mut())
        .find(|(_, v)| matches!(v, PyValue::Str(s) if !s.is_empty()))
    {
        if let PyValue::Str(s) = v {
            *v = PyValue::Str(format!(" {}.", s.to_uppercase()));
        }
        push("respelled_string", m);
    }

    // the second accepted value wherever there is one.
    let second = render(Pick::Second);
    if second != truth {
        push("second_accepted", second);
    }

    // optional parameters left out.
    let omitted = render(Pick::OmitOptional);
    if omitted != truth {
        push("optional_omitted", omitted);
    }

    // several calls: reversed, and one dropped.
    if truth.len() > 1 {
        let mut m = truth.clone();
        m.reverse();
        push("reordered", m);
        let mut m = truth.clone();
        m.pop();
        push("call_dropped", m);
    } else {
        let mut m = truth.clone();
        m.extend(truth.iter().cloned());
        push("call_repeated", m);
    }

    // multiple: the arguments sent to another offered function.
    if case.category.check_kind() == CheckKind::Multiple
        && let Some(other) = truth
            .first()
            .and_then(|c| functions.iter().find(|f| f.name != c.name))
    {
        let mut m = truth.clone();
        m[0].name = other.name.clone();
        push("other_function", m);
    }
    out
}

#[derive(Clone, Copy, PartialEq)]
enum Pick {
    First,
    Second,
    OmitOptional,
}

fn doc<'a>(functions: &'a [FunctionDoc], name: &str) -> Option<&'a FunctionDoc> {
    functions.iter().find(|f| f.name == name)
}

/// One expected call written as output: per parameter the chosen accepted value (or the
/// parameter left out when only `""` is accepted).
fn render_call(
    expected: &ExpectedCall,
    doc: Option<&FunctionDoc>,
    language: Language,
    pick: Pick,
) -> Call {
    let mut args = Vec::new();
    for (param, accepted) in &expected.params {
        let optional = accepted.iter().any(PyValue::is_empty_str);
        let declared = doc.is_none_or(|d| d.property(param).is_some());
        if optional && (pick == Pick::OmitOptional || !declared) {
            continue;
        }
        let mut values = accepted.iter().filter(|v| !v.is_empty_str());
        let first = values.next();
        let chosen = match pick {
            Pick::Second => values.next().or(first),
            _ => first,
        };
        let schema = doc.and_then(|d| d.property(param));
        let required = doc
            .and_then(FunctionDoc::required)
            .is_some_and(|r| r.contains(&param.as_str()));
        let empty = PyValue::Str(String::new());
        // A required parameter whose only accepted value is "" is written as "".
        let Some(value) = chosen.or(required.then_some(&empty)) else {
            continue;
        };
        let type_name = schema
            .and_then(|s| s.get("type"))
            .and_then(serde_json::Value::as_str)
            .unwrap_or("any");
        let items = schema
            .and_then(|s| s.get("items"))
            .and_then(|i| i.get("type"))
            .and_then(serde_json::Value::as_str);
        let value = match language {
            Language::Python if type_name == "dict" || items == Some("dict") => realize(value),
            Language::Python => value.clone(),
            Language::Java => PyValue::Str(java_source(value, type_name, items)),
            Language::JavaScript => PyValue::Str(js_source(value, type_name)),
        };
        args.push((param.clone(), value));
    }
    Call::new(expected.name.clone(), args)
}

/// An accepted object (key → accepted values) or list of them, as a model would write it:
/// each key with its first accepted value, keys that may be left out (only `""`) left out.
fn realize(v: &PyValue) -> PyValue {
    match v {
        PyValue::Dict(pairs) => PyValue::Dict(
            pairs
                .iter()
                .filter_map(|(k, accepted)| match accepted {
                    PyValue::List(values) => values
                        .iter()
                        .find(|x| !x.is_empty_str())
                        .map(|x| (k.clone(), x.clone())),
                    other => Some((k.clone(), other.clone())),
                })
                .collect(),
        ),
        PyValue::List(items) => PyValue::List(items.iter().map(realize).collect()),
        other => other.clone(),
    }
}

fn value_first(v: &PyValue) -> PyValue {
    match v {
        PyValue::List(items) => items.first().cloned().unwrap_or(PyValue::None),
        other => other.clone(),
    }
}

fn other_value(v: &PyValue) -> PyValue {
    match v {
        PyValue::Str(s) => PyValue::Str(format!("{s}zq")),
        PyValue::Int(i) => PyValue::Int(i + 7919),
        PyValue::Float(f) => PyValue::Float(f + 0.25),
        PyValue::Bool(b) => PyValue::Bool(!b),
        PyValue::List(items) => {
            let mut items = items.clone();
            items.push(items.first().cloned().unwrap_or(PyValue::Str("zq".into())));
            PyValue::List(items)
        }
        PyValue::Dict(pairs) => {
            let mut pairs = pairs.clone();
            pairs.push(("zq".into(), PyValue::Int(1)));
            PyValue::Dict(pairs)
        }
        PyValue::None => PyValue::Str("zq".into()),
    }
}

fn other_type(v: &PyValue) -> PyValue {
    match v {
        PyValue::Str(_) | PyValue::None => PyValue::Int(1),
        PyValue::Int(i) => PyValue::Str(i.to_string()),
        PyValue::Float(f) => PyValue::Str(f.to_string()),
        PyValue::Bool(b) => PyValue::Str(b.to_string()),
        PyValue::List(_) | PyValue::Dict(_) => PyValue::Str(v.to_string()),
    }
}

/// One Java literal. Strings are written bare, as the converter compares them (a `String`
/// parameter keeps any quotes), except inside `ArrayList`s of `String`/`char`, whose
/// elements lose their first and last character.
fn java_literal(v: &PyValue, type_name: Option<&str>, quote: bool) -> String {
    match (v, type_name) {
        (PyValue::Str(s), _) if quote => format!("\"{s}\""),
        (PyValue::Str(s), _) => s.clone(),
        (PyValue::Int(i), Some("long")) => format!("{i}L"),
        (PyValue::Int(i), Some("float")) => format!("{i}.0f"),
        (PyValue::Int(i), _) => i.to_string(),
        (PyValue::Float(f), Some("float")) => format!("{f:?}f"),
        (PyValue::Float(f), _) => format!("{f:?}"),
        (PyValue::Bool(b), _) => b.to_string(),
        (PyValue::None, _) => "null".into(),
        (other, _) => java_source(other, "any", None),
    }
}

/// A Python value written as Java source for a parameter of `type_name`.
fn java_source(v: &PyValue, type_name: &str, items: Option<&str>) -> String {
    match v {
        PyValue::List(values) => {
            if type_name == "ArrayList" {
                let quote = matches!(items, Some("String" | "char"));
                let parts: Vec<String> = values
                    .iter()
                    .map(|x| java_literal(x, items, quote))
                    .collect();
                format!("new ArrayList<>(Arrays.asList({}))", parts.join(", "))
            } else {
                let parts: Vec<String> = values
                    .iter()
                    .map(|x| java_literal(x, items, false))
                    .collect();
                let elem = match items {
                    Some("integer") => "int",
                    Some("long") => "long",
                    Some("double") => "double",
                    Some("float") => "float",
                    Some("boolean") => "boolean",
                    _ => "String",
                };
                format!("new {elem}[]{{{}}}", parts.join(", "))
            }
        }
        PyValue::Dict(pairs) => {
            let puts: Vec<String> = pairs
                .iter()
                .filter_map(|(k, x)| {
                    let x = match x {
                        PyValue::List(accepted) => accepted.iter().find(|a| !a.is_empty_str())?,
                        _ => x,
                    };
                    let lit = match x {
                        PyValue::Str(s) => format!("\"{s}\""),
                        other => java_literal(other, None, false),
                    };
                    Some(format!("put(\"{k}\", {lit});"))
                })
                .collect();
            format!("new HashMap<String, Object>() {{{{ {} }}}}", puts.join(" "))
        }
        other => java_literal(other, Some(type_name), false),
    }
}

/// A Python value written as JavaScript source for a parameter of `type_name`.
fn js_source(v: &PyValue, type_name: &str) -> String {
    fn lit(v: &PyValue) -> String {
        match v {
            PyValue::Str(s) => format!("'{s}'"),
            PyValue::Int(i) => i.to_string(),
            PyValue::Float(f) => format!("{f:?}"),
            PyValue::Bool(b) => b.to_string(),
            PyValue::None => "null".into(),
            PyValue::List(items) => {
                format!("[{}]", items.iter().map(lit).collect::<Vec<_>>().join(", "))
            }
            PyValue::Dict(pairs) => format!(
                "{{{}}}",
                pairs
                    .iter()
                    .map(|(k, x)| {
                        let x = match x {
                            PyValue::List(accepted) => accepted.first().unwrap_or(x),
                            _ => x,
                        };
                        format!("{k}: {}", lit(x))
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
    match (v, type_name) {
        (PyValue::Str(s), _) => s.clone(),
        (PyValue::Int(i), "Bigint") => format!("{i}n"),
        (other, _) => lit(other),
    }
}
