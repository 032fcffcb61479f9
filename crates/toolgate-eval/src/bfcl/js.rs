//! `js_type_converter`: turns a JavaScript source string (`"'text'"`, `"[1, 2]"`,
//! `"{key: 'v'}"`, `"12n"`) into the value the checker compares, with the official regular
//! expressions (backtracking, as Python's `re`). Unparseable text stays a string.

use std::sync::LazyLock;

use fancy_regex::Regex;

use super::types::{drop_last, py_float, py_int, strip_ends};
use super::value::PyValue;
use super::verdict::Failure;

fn re(pattern: &str) -> Regex {
    #[allow(clippy::expect_used)]
    Regex::new(pattern).expect("a fixed pattern compiles")
}

static INT: LazyLock<Regex> = LazyLock::new(|| re(r"^-?\d+\n?\z"));
static FLOAT: LazyLock<Regex> = LazyLock::new(|| re(r"^-?\d+(\.\d+)?\n?\z"));
static BIGINT: LazyLock<Regex> = LazyLock::new(|| re(r"^-?\d+n\n?\z"));
static ARRAY_2D: LazyLock<Regex> = LazyLock::new(|| {
    re(r"^(?:\[\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\]|\bnew\s+Array\(\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\))")
});
static INNER: LazyLock<Regex> = LazyLock::new(|| re(r"\[(.*?)\]"));
static ARRAY: LazyLock<Regex> = LazyLock::new(|| re(r"^(?:\[(.*?)\]|\bnew\s+Array\((.*?)\))"));
static DICT: LazyLock<Regex> = LazyLock::new(|| re(r"^\{(.*?)\}"));
static PAIR: LazyLock<Regex> = LazyLock::new(|| re(r"([^:]+):\s*(.*?)(?:,\s*(?=[^,]+:)|$)"));

fn is_match(r: &Regex, s: &str) -> bool {
    r.is_match(s).unwrap_or(false)
}

fn quoted(s: &str) -> bool {
    (s.starts_with('"') && s.ends_with('"')) || (s.starts_with('\'') && s.ends_with('\''))
}

/// `js_type_converter(value, expected_type, nested_type)`.
pub fn convert(value: &str, expected: &str, nested: Option<&str>) -> Result<PyValue, Failure> {
    let text = || PyValue::Str(value.to_owned());
    Ok(match expected {
        "String" => {
            if quoted(value) {
                PyValue::Str(strip_ends(value))
            } else {
                text()
            }
        }
        "integer" => match is_match(&INT, value).then(|| py_int(value)).flatten() {
            Some(i) => PyValue::Int(i),
            None => text(),
        },
        "float" => match is_match(&FLOAT, value).then(|| py_float(value)).flatten() {
            Some(f) => PyValue::Float(f),
            None => text(),
        },
        "Bigint" => match is_match(&BIGINT, value)
            .then(|| py_int(drop_last(value.trim_end_matches('\n'))))
            .flatten()
        {
            Some(i) => PyValue::Int(i),
            None => text(),
        },
        "Boolean" => match value {
            "true" => PyValue::Bool(true),
            "false" => PyValue::Bool(false),
            _ => text(),
        },
        "dict" => collection(value, false, nested),
        "array" => collection(value, true, nested),
        "any" => text(),
        other => return Err(Failure::exception(format!("Unsupported type: {other}"))),
    })
}

/// `parse_js_collection`: on any error inside, the (stripped) text is returned as is.
fn collection(code: &str, array: bool, nested: Option<&str>) -> PyValue {
    let code = code.trim();
    let parsed = if array {
        parse_array(code, nested)
    } else {
        parse_dict(code)
    };
    parsed.unwrap_or_else(|| PyValue::Str(code.to_owned()))
}

fn parse_array(code: &str, nested: Option<&str>) -> Option<PyValue> {
    if let Some(m) = ARRAY_2D.captures(code).ok().flatten() {
        let all = m.get(0).map_or("", |g| g.as_str());
        let mut rows = Vec::new();
        for (idx, inner) in INNER.captures_iter(all).flatten().enumerate() {
            let mut inner = inner.get(1).map_or("", |g| g.as_str()).trim();
            if idx == 0 && inner.starts_with('[') {
                inner = &inner[1..];
            }
            rows.push(PyValue::List(
                inner.split(',').map(|e| parse_value(e.trim())).collect(),
            ));
        }
        return Some(PyValue::List(rows));
    }
    let m = ARRAY.captures(code).ok().flatten()?;
    let elements_str = m.get(1).or_else(|| m.get(2)).map(|g| g.as_str().trim());
    let elements: Vec<&str> = match elements_str {
        Some(s) if !s.is_empty() => s.split(',').collect(),
        _ => Vec::new(),
    };
    let mut items = Vec::with_capacity(elements.len());
    for e in elements {
        let e = e.trim();
        items.push(match nested {
            Some(n) => {
                let inner = if e.starts_with('\'') || e.starts_with('"') {
                    Some("String")
                } else {
                    None
                };
                // Any exception inside falls back to the whole text.
                convert(e, n, inner).ok()?
            }
            None => parse_value(e),
        });
    }
    Some(PyValue::List(items))
}

fn parse_dict(code: &str) -> Option<PyValue> {
    if code == "{}" {
        return Some(PyValue::Dict(Vec::new()));
    }
    let content = DICT.captures(code).ok().flatten()?.get(1)?.as_str();
    let mut pairs: Vec<(String, PyValue)> = Vec::new();
    for m in PAIR.captures_iter(content) {
        let m = m.ok()?;
        let key = m
            .get(1)
            .map_or("", |g| g.as_str())
            .trim()
            .trim_matches(['\'', '"'])
            .to_owned();
        let value = m.get(2).map_or("", |g| g.as_str()).trim();
        let parsed = if value.starts_with('[') && value.ends_with(']') {
            collection(value, true, None)
        } else if value.starts_with('{') && value.ends_with('}') {
            collection(value, false, None)
        } else {
            parse_value(value.trim_matches(['\'', '"']))
        };
        match pairs.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = parsed,
            None => pairs.push((key, parsed)),
        }
    }
    Some(PyValue::Dict(pairs))
}

/// `parse_js_value`.
fn parse_value(s: &str) -> PyValue {
    let s = s.trim();
    match s {
        "true" => PyValue::Bool(true),
        "false" => PyValue::Bool(false),
        _ if quoted(s) => PyValue::Str(strip_ends(s)),
        _ => py_int(s)
            .map(PyValue::Int)
            .or_else(|| py_float(s).map(PyValue::Float))
            .unwrap_or_else(|| PyValue::Str(s.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(v: &str, t: &str) -> String {
        convert(v, t, None).unwrap().to_string()
    }

    #[test]
    fn converts_like_the_official_tests() {
        assert_eq!(c("true", "Boolean"), "True");
        assert_eq!(c("123", "integer"), "123");
        assert_eq!(c("3.14", "float"), "3.14");
        assert_eq!(c("123n", "Bigint"), "123");
        assert_eq!(c("abc", "String"), "'abc'");
        assert_eq!(c("'abc'", "String"), "'abc'");
        assert_eq!(c("[1, 2, 3]", "array"), "[1, 2, 3]");
        assert_eq!(c("new Array(1, 2, 3)", "array"), "[1, 2, 3]");
        assert_eq!(c("[1, 'two', true]", "array"), "[1, 'two', True]");
        assert_eq!(c("[[1, 2], [3]]", "array"), "[[1, 2], [3]]");
        assert_eq!(c("{'key': 'value'}", "dict"), "{'key': 'value'}");
        assert_eq!(
            c("{'key1': 123, 'key2': 'value', 'key3': false}", "dict"),
            "{'key1': 123, 'key2': 'value', 'key3': False}"
        );
        assert_eq!(c("{}", "dict"), "{}");
        assert_eq!(c("[]", "array"), "[]");
        assert_eq!(
            convert("['a', 'b']", "array", Some("String"))
                .unwrap()
                .to_string(),
            "['a', 'b']"
        );
        assert_eq!(c("not a dict", "dict"), "'not a dict'");
    }
}
