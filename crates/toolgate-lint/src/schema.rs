//! Parameter rules over a tool's input schema, walked to 16 levels: every
//! parameter described; a string that takes one of a few quoted values has an `enum`; a
//! numeric quantity (a timeout, a size, a price) says its unit; a date or time says its
//! format; `required` names only declared parameters (and exists); the schema is not too
//! deep or too big for a model to fill in reliably.

use serde_json::{Map, Value};

use crate::finding::{Finding, Rule, Severity};

/// Nesting (objects and arrays) past this is hard for a model to fill in.
pub const MAX_DEPTH: usize = 4;
/// A schema larger than this (serialised bytes) costs every request and confuses models.
pub const MAX_BYTES: usize = 8192;
/// More parameters than this, counted at every level, is too many to fill in reliably.
pub const MAX_PARAMS: usize = 30;
/// How deep the walk goes (hostile schemas).
const MAX_WALK: usize = 16;

const QUANTITIES: &[&str] = &[
    "timeout",
    "duration",
    "delay",
    "interval",
    "wait",
    "ttl",
    "age",
    "size",
    "length",
    "width",
    "height",
    "distance",
    "radius",
    "weight",
    "mass",
    "price",
    "cost",
    "amount",
    "budget",
    "temperature",
    "temp",
    "speed",
    "memory",
    "bandwidth",
    "latency",
    "period",
    "elapsed",
    "altitude",
    "depth",
    "volume",
    "area",
];

const UNITS: &[&str] = &[
    "ms",
    "millisecond",
    "milliseconds",
    "sec",
    "secs",
    "second",
    "seconds",
    "s",
    "minute",
    "minutes",
    "min",
    "mins",
    "hour",
    "hours",
    "hr",
    "hrs",
    "day",
    "days",
    "week",
    "weeks",
    "month",
    "months",
    "year",
    "years",
    "byte",
    "bytes",
    "kb",
    "kib",
    "mb",
    "mib",
    "gb",
    "gib",
    "bit",
    "bits",
    "px",
    "pixel",
    "pixels",
    "pt",
    "em",
    "%",
    "percent",
    "percentage",
    "meter",
    "meters",
    "metre",
    "metres",
    "km",
    "kilometer",
    "kilometers",
    "mile",
    "miles",
    "m",
    "cm",
    "mm",
    "kg",
    "gram",
    "grams",
    "g",
    "lb",
    "lbs",
    "pound",
    "pounds",
    "celsius",
    "fahrenheit",
    "kelvin",
    "°c",
    "°f",
    "usd",
    "eur",
    "dollar",
    "dollars",
    "cents",
    "currency",
    "character",
    "characters",
    "chars",
    "token",
    "tokens",
    "word",
    "words",
    "line",
    "lines",
    "item",
    "items",
    "degree",
    "degrees",
    "fps",
    "hz",
    "ns",
    "us",
    "µs",
    "feet",
    "ft",
    "inch",
    "inches",
];

const TIMES: &[&str] = &[
    "date",
    "time",
    "timestamp",
    "datetime",
    "since",
    "until",
    "deadline",
    "birthday",
    "dob",
    "expiry",
    "expires",
    "created",
    "updated",
    "modified",
    "when",
];

const FORMAT_HINTS: &[&str] = &[
    "iso", "8601", "rfc", "3339", "yyyy", "mm-dd", "hh:mm", "unix", "epoch", "format", "dd/mm",
    "mm/dd",
];

/// Lower-case words of a name (`startDate`, `start_date` → `start`, `date`) or a text.
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in text.chars() {
        let keep = c.is_alphanumeric() || c == '%' || c == '°' || c == 'µ';
        if !keep {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn has_type(prop: &Value, ty: &str) -> bool {
    match prop.get("type") {
        Some(Value::String(t)) => t == ty,
        Some(Value::Array(ts)) => ts.iter().any(|t| t == ty),
        _ => false,
    }
}

fn description(prop: &Value) -> &str {
    prop.get("description")
        .and_then(Value::as_str)
        .unwrap_or("")
        .trim()
}

/// Values quoted in a text (`'asc'`, `"desc"`, `` `none` ``), when the text reads as a closed
/// set ("one of", "either", "or").
fn closed_set(text: &str) -> Option<Vec<String>> {
    let lower = text.to_lowercase();
    let phrased = [
        "one of",
        "either",
        "possible values",
        "allowed values",
        "valid values",
    ]
    .iter()
    .any(|p| lower.contains(p))
        || quoted_or_quoted(text);
    if !phrased {
        return None;
    }
    let mut values: Vec<String> = Vec::new();
    for quote in ['\'', '"', '`'] {
        let parts: Vec<&str> = text.split(quote).collect();
        for inner in parts.iter().skip(1).step_by(2).take(parts.len() / 2) {
            let v = inner.trim();
            if !v.is_empty() && v.len() <= 40 && !v.contains(' ') && !values.iter().any(|x| x == v)
            {
                values.push(v.to_owned());
            }
        }
    }
    (values.len() >= 2).then_some(values)
}

/// `'a' or 'b'`, `"x", "y" or "z"`: an `or` right between two quoted values (examples such
/// as `("NeurIPS"), or a category ("cs.CL")` are not a closed set).
fn quoted_or_quoted(text: &str) -> bool {
    let quote = |c: char| matches!(c, '\'' | '"' | '`');
    text.match_indices(" or ").any(|(at, _)| {
        let before = text[..at].trim_end_matches([' ', ',']).chars().next_back();
        let after = text[at + 4..].trim_start().chars().next();
        before.is_some_and(quote) && after.is_some_and(quote)
    })
}

fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

/// The parameter rules for one tool's input schema.
pub fn check(tool: &str, schema: &Value) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut params = 0;
    let mut deepest = (0, String::new());
    walk(tool, schema, "", 0, &mut out, &mut params, &mut deepest);
    if let Some(obj) = schema.as_object() {
        let has_props = obj
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|p| !p.is_empty());
        if has_props && !obj.contains_key("required") {
            out.push(
                Finding::new(
                    tool,
                    Rule::RequiredList,
                    Severity::Note,
                    "the schema has no `required` list: a model cannot tell which parameters it must give",
                    "add \"required\": [the parameters a call must give] (or [] when all are optional)",
                )
                .at(""),
            );
        }
    }
    if deepest.0 > MAX_DEPTH {
        out.push(
            Finding::new(
                tool,
                Rule::SchemaDepth,
                Severity::Warning,
                format!("the schema nests {} levels deep (over {MAX_DEPTH})", deepest.0),
                "flatten it: lift inner fields to the top level, or take the nested value as a JSON string with an example",
            )
            .at(deepest.1),
        );
    }
    let bytes = schema.to_string().len();
    if bytes > MAX_BYTES || params > MAX_PARAMS {
        out.push(
            Finding::new(
                tool,
                Rule::SchemaSize,
                Severity::Warning,
                format!("the schema is {bytes} bytes with {params} parameters (limits {MAX_BYTES} bytes, {MAX_PARAMS} parameters)"),
                "split the tool by task, or drop parameters a model never needs to set",
            )
            .at(""),
        );
    }
    out
}

fn walk(
    tool: &str,
    schema: &Value,
    path: &str,
    depth: usize,
    out: &mut Vec<Finding>,
    params: &mut usize,
    deepest: &mut (usize, String),
) {
    if depth > deepest.0 {
        *deepest = (depth, path.to_owned());
    }
    if depth >= MAX_WALK {
        return;
    }
    let Some(obj) = schema.as_object() else {
        return;
    };
    if let Some(props) = obj.get("properties").and_then(Value::as_object) {
        required(tool, obj, props, path, out);
        for (name, prop) in props {
            *params += 1;
            let at = format!("{path}/properties/{}", escape(name));
            parameter(tool, name, prop, &at, out);
            walk(tool, prop, &at, depth + 1, out, params, deepest);
        }
    }
    if let Some(items) = obj.get("items") {
        walk(
            tool,
            items,
            &format!("{path}/items"),
            depth + 1,
            out,
            params,
            deepest,
        );
    }
}

fn required(
    tool: &str,
    obj: &Map<String, Value>,
    props: &Map<String, Value>,
    path: &str,
    out: &mut Vec<Finding>,
) {
    let Some(list) = obj.get("required").and_then(Value::as_array) else {
        return;
    };
    for name in list.iter().filter_map(Value::as_str) {
        if !props.contains_key(name) {
            out.push(
                Finding::new(
                    tool,
                    Rule::RequiredList,
                    Severity::Error,
                    format!("`required` names `{name}`, which is not a declared parameter"),
                    format!("declare `{name}` under properties, or remove it from `required`"),
                )
                .at(format!("{path}/required")),
            );
        }
    }
}

fn parameter(tool: &str, name: &str, prop: &Value, at: &str, out: &mut Vec<Finding>) {
    let text = description(prop);
    let is_ref = prop.get("$ref").is_some();
    if text.is_empty() && !is_ref {
        out.push(
            Finding::new(
                tool,
                Rule::ParamDescription,
                Severity::Warning,
                format!("parameter `{name}` has no description"),
                format!("describe `{name}`: what it is, its unit or format, and an example value"),
            )
            .at(at),
        );
    }
    let name_words = words(name);
    let all_words: Vec<String> = name_words.iter().cloned().chain(words(text)).collect();
    let has_enum = prop.get("enum").is_some() || prop.get("const").is_some();
    if has_type(prop, "string")
        && !has_enum
        && let Some(values) = closed_set(text)
    {
        let list: Vec<String> = values.iter().map(|v| format!("\"{v}\"")).collect();
        out.push(
            Finding::new(
                tool,
                Rule::ParamEnum,
                Severity::Warning,
                format!(
                    "`{name}` takes one of {} values but lists them only in prose",
                    values.len()
                ),
                format!("add \"enum\": [{}]", list.join(", ")),
            )
            .at(at),
        );
    }
    if (has_type(prop, "number") || has_type(prop, "integer"))
        && name_words.iter().any(|w| QUANTITIES.contains(&w.as_str()))
        && !all_words.iter().any(|w| UNITS.contains(&w.as_str()))
    {
        out.push(
            Finding::new(
                tool,
                Rule::ParamUnit,
                Severity::Warning,
                format!("`{name}` is a quantity without a unit"),
                format!("say the unit in the description (\"… in seconds\") or the name (`{name}_secs`, `{name}_bytes`)"),
            )
            .at(at),
        );
    }
    let timeish = name_words.iter().any(|w| TIMES.contains(&w.as_str()));
    let formatted = prop.get("format").is_some()
        || prop.get("pattern").is_some()
        || has_enum
        || words(text)
            .iter()
            .any(|w| FORMAT_HINTS.contains(&w.as_str()))
        || text.to_lowercase().contains("yyyy");
    if has_type(prop, "string") && timeish && !formatted {
        let format = if name_words
            .iter()
            .any(|w| matches!(w.as_str(), "date" | "birthday" | "dob"))
        {
            "date"
        } else {
            "date-time"
        };
        out.push(
            Finding::new(
                tool,
                Rule::ParamFormat,
                Severity::Warning,
                format!("`{name}` is a date or time without a format"),
                format!("add \"format\": \"{format}\" and say it in the description (ISO 8601, e.g. 2026-12-07)"),
            )
            .at(at),
        );
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Findings by path (property order depends on serde_json's features).
    fn found(schema: Value) -> Vec<(Rule, String, String)> {
        let mut got: Vec<_> = check("t", &schema)
            .into_iter()
            .map(|f| (f.rule, f.path.unwrap_or_default(), f.fix))
            .collect();
        got.sort_by(|a, b| (&a.1, a.0).cmp(&(&b.1, b.0)));
        got
    }

    #[test]
    fn a_well_described_schema_passes() {
        let schema = json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Workspace-relative file path."},
                "order": {"type": "string", "enum": ["asc", "desc"], "description": "Sort order: 'asc' or 'desc'."},
                "timeout_secs": {"type": "integer", "description": "Deadline."},
                "since": {"type": "string", "format": "date-time", "description": "Oldest change included."},
                "venue": {"type": "string", "description": "A journal (\"NeurIPS\"), or an arXiv category (\"cs.CL\")."}
            },
            "required": ["path"]
        });
        assert_eq!(found(schema), []);
    }

    #[test]
    fn each_parameter_rule_names_the_fix() {
        let schema = json!({
            "type": "object",
            "properties": {
                "q": {"type": "string"},
                "order": {"type": "string", "description": "Either 'asc' or 'desc'."},
                "timeout": {"type": "number", "description": "How long to wait."},
                "startDate": {"type": "string", "description": "First day."}
            },
            "required": ["q", "query"]
        });
        assert_eq!(
            found(schema),
            [
                (Rule::ParamEnum, "/properties/order".into(), "add \"enum\": [\"asc\", \"desc\"]".into()),
                (Rule::ParamDescription, "/properties/q".into(), "describe `q`: what it is, its unit or format, and an example value".into()),
                (Rule::ParamFormat, "/properties/startDate".into(), "add \"format\": \"date\" and say it in the description (ISO 8601, e.g. 2026-12-07)".into()),
                (Rule::ParamUnit, "/properties/timeout".into(), "say the unit in the description (\"… in seconds\") or the name (`timeout_secs`, `timeout_bytes`)".into()),
                (Rule::RequiredList, "/required".into(), "declare `query` under properties, or remove it from `required`".into()),
            ]
        );
    }

    #[test]
    fn depth_size_and_a_missing_required_list_are_found() {
        let mut deep = json!({"type": "string", "description": "leaf"});
        for _ in 0..5 {
            deep = json!({"type": "object", "description": "level", "properties": {"inner": deep}, "required": []});
        }
        let rules: Vec<Rule> = found(deep).into_iter().map(|(r, ..)| r).collect();
        assert_eq!(rules, [Rule::SchemaDepth]);
        let many: Map<String, Value> = (0..31)
            .map(|i| {
                (
                    format!("p{i}"),
                    json!({"type": "string", "description": "x"}),
                )
            })
            .collect();
        let rules: Vec<Rule> = found(json!({"type": "object", "properties": many}))
            .into_iter()
            .map(|(r, ..)| r)
            .collect();
        assert_eq!(rules, [Rule::RequiredList, Rule::SchemaSize]);
    }
}
