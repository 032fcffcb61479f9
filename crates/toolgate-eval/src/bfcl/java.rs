//! `java_type_converter`: turns a Java source string (`"5L"`, `new int[]{1, 2}`,
//! `new HashMap<>() {{ put("k", 1); }}`) into the value the checker compares, with the same
//! regular expressions (backtracking, as Python's `re`). A string that does not parse stays
//! a string — so a malformed literal fails on its value, not on its type.

use std::sync::LazyLock;

use fancy_regex::Regex;

use super::types::{drop_last, py_float, py_int, strip_ends};
use super::value::PyValue;
use super::verdict::Failure;

fn re(pattern: &str) -> Regex {
    #[allow(clippy::expect_used)]
    Regex::new(pattern).expect("a fixed pattern compiles")
}

// Python's `$` also matches before a final newline.
static INT: LazyLock<Regex> = LazyLock::new(|| re(r"^-?\d+\n?\z"));
static FLOAT: LazyLock<Regex> = LazyLock::new(|| re(r"^-?\d+(\.\d+)?([eE][+-]?\d+)?[fF]\n?\z"));
static DOUBLE: LazyLock<Regex> = LazyLock::new(|| re(r"^-?\d+(\.\d+)?([eE][+-]?\d+)?\n?\z"));
static LONG: LazyLock<Regex> = LazyLock::new(|| re(r"^-?\d+[lL]\n?\z"));
static AS_LIST: LazyLock<Regex> =
    LazyLock::new(|| re(r"new\s+ArrayList<\w*>\(Arrays\.asList\((.+?)\)\)"));
static ADD_BLOCK: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?s)new\s+ArrayList<\w*>\(\)\s*\{\{\s*(.+?)\s*\}\}"));
static ADD: LazyLock<Regex> = LazyLock::new(|| re(r"add\((.+?)\)"));
static EMPTY_LIST: LazyLock<Regex> = LazyLock::new(|| re(r"new\s+ArrayList<\w*>\(\)"));
static ARRAY: LazyLock<Regex> = LazyLock::new(|| re(r"new\s+\w+\[\]\s*\{(.*?)\}"));
static HASHMAP: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?s)new\s+HashMap<.*?>\s*\(\)\s*\{\s*\{?\s*(.*?)\s*\}?\s*\}"));
static PUT: LazyLock<Regex> = LazyLock::new(|| re(r#"put\("(.*?)",\s*(.*?)\)"#));
static EMPTY_MAP: LazyLock<Regex> = LazyLock::new(|| re(r"new\s+HashMap<.*?>\s*\(\)"));

fn is_match(r: &Regex, s: &str) -> bool {
    r.is_match(s).unwrap_or(false)
}

fn group<'a>(r: &Regex, s: &'a str, i: usize) -> Option<&'a str> {
    r.captures(s).ok().flatten()?.get(i).map(|m| m.as_str())
}

fn or_str(v: Option<PyValue>, s: &str) -> PyValue {
    v.unwrap_or_else(|| PyValue::Str(s.to_owned()))
}

/// `java_type_converter(value, expected_type, nested_type)`.
pub fn convert(value: &str, expected: &str, nested: Option<&str>) -> Result<PyValue, Failure> {
    Ok(match expected {
        "byte" | "short" | "integer" => or_str(
            is_match(&INT, value)
                .then(|| py_int(value).map(PyValue::Int))
                .flatten(),
            value,
        ),
        "float" => or_str(
            is_match(&FLOAT, value)
                .then(|| {
                    py_float(value.trim_end().trim_end_matches(['f', 'F'])).map(PyValue::Float)
                })
                .flatten(),
            value,
        ),
        "double" => or_str(
            is_match(&DOUBLE, value)
                .then(|| py_float(value).map(PyValue::Float))
                .flatten(),
            value,
        ),
        "long" => or_str(
            is_match(&LONG, value)
                .then(|| py_int(value.trim_end().trim_end_matches(['l', 'L'])).map(PyValue::Int))
                .flatten(),
            value,
        ),
        "boolean" => match value {
            "true" => PyValue::Bool(true),
            "false" => PyValue::Bool(false),
            _ => PyValue::Str(value.to_owned()),
        },
        // The official pattern for char (`^\'.$\'`) can never match: a char stays a string.
        "char" | "String" | "any" => PyValue::Str(value.to_owned()),
        "ArrayList" => arraylist(value, nested)?,
        "Array" => array(value, nested)?,
        "HashMap" => hashmap(value),
        "Set" | "Hashtable" | "Queue" | "Stack" => {
            return Err(Failure::exception(format!(
                "{expected} conversion is not implemented in the official checker"
            )));
        }
        other => return Err(Failure::exception(format!("Unsupported type: {other}"))),
    })
}

fn element(text: &str, nested: Option<&str>) -> Result<PyValue, Failure> {
    match nested {
        Some("char" | "String") => Ok(PyValue::Str(strip_ends(text))),
        Some(n) => convert(text, n, None),
        None => Ok(parse_value(text)),
    }
}

fn arraylist(input: &str, nested: Option<&str>) -> Result<PyValue, Failure> {
    if let Some(elements) = group(&AS_LIST, input, 1) {
        let items = elements
            .split(',')
            .map(|e| element(e.trim(), nested))
            .collect::<Result<_, _>>()?;
        return Ok(PyValue::List(items));
    }
    if let Some(adds) = group(&ADD_BLOCK, input, 1) {
        let mut items = Vec::new();
        for m in ADD.captures_iter(adds).flatten() {
            let text = m.get(1).map_or("", |g| g.as_str()).trim();
            items.push(element(text, nested)?);
        }
        return Ok(PyValue::List(items));
    }
    if is_match(&EMPTY_LIST, input) {
        return Ok(PyValue::List(Vec::new()));
    }
    Ok(PyValue::Str(input.to_owned()))
}

fn array(input: &str, nested: Option<&str>) -> Result<PyValue, Failure> {
    let Some(elements) = group(&ARRAY, input, 1) else {
        return Ok(PyValue::Str(input.to_owned()));
    };
    let items = elements
        .split(',')
        .map(str::trim)
        .filter(|x| !x.is_empty())
        .map(|x| match nested {
            Some(n) => convert(x, n, None),
            None => Ok(parse_value(x)),
        })
        .collect::<Result<_, _>>()?;
    Ok(PyValue::List(items))
}

fn hashmap(input: &str) -> PyValue {
    if let Some(puts) = group(&HASHMAP, input, 1) {
        let mut pairs: Vec<(String, PyValue)> = Vec::new();
        if !puts.trim().is_empty() {
            for m in PUT.captures_iter(puts).flatten() {
                let key = m.get(1).map_or("", |g| g.as_str()).to_owned();
                let value = parse_value(m.get(2).map_or("", |g| g.as_str()).trim());
                match pairs.iter_mut().find(|(k, _)| *k == key) {
                    Some(slot) => slot.1 = value,
                    None => pairs.push((key, value)),
                }
            }
        }
        return PyValue::Dict(pairs);
    }
    if is_match(&EMPTY_MAP, input) {
        return PyValue::Dict(Vec::new());
    }
    PyValue::Str(input.to_owned())
}

/// `parse_java_value`: a literal without a declared type.
fn parse_value(s: &str) -> PyValue {
    if s == "true" {
        return PyValue::Bool(true);
    }
    if s == "false" {
        return PyValue::Bool(false);
    }
    if s.starts_with('"') && s.ends_with('"') {
        return PyValue::Str(strip_ends(s));
    }
    if is_match(&LONG, s)
        && let Some(i) = py_int(drop_last(s.trim_end_matches('\n')))
    {
        return PyValue::Int(i);
    }
    if is_match(&FLOAT, s)
        && let Some(f) = py_float(s.trim_end().trim_end_matches(['f', 'F']))
    {
        return PyValue::Float(f);
    }
    if let Some(i) = py_int(s) {
        return PyValue::Int(i);
    }
    if let Some(f) = py_float(s) {
        return PyValue::Float(f);
    }
    PyValue::Str(s.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(v: &str, t: &str, n: Option<&str>) -> String {
        convert(v, t, n).unwrap().to_string()
    }

    #[test]
    fn converts_like_the_official_tests() {
        assert_eq!(c("123", "integer", None), "123");
        assert_eq!(c("3.14f", "float", None), "3.14");
        assert_eq!(c("3.14", "float", None), "'3.14'");
        assert_eq!(c("-123L", "long", None), "-123");
        assert_eq!(c("true", "boolean", None), "True");
        assert_eq!(
            c("new int[]{1, 2, 3}", "Array", Some("integer")),
            "[1, 2, 3]"
        );
        assert_eq!(
            c("new long[]{1L, 2, 3L}", "Array", Some("long")),
            "[1, '2', 3]"
        );
        assert_eq!(
            c(
                r#"new ArrayList<>(Arrays.asList("a", "b"))"#,
                "ArrayList",
                Some("String")
            ),
            "['a', 'b']"
        );
        assert_eq!(
            c(
                "new ArrayList<Float>() {{ add(1.0f); add(2.0f); }}",
                "ArrayList",
                Some("float")
            ),
            "[1.0, 2.0]"
        );
        assert_eq!(
            c(
                r#"new HashMap<String, Object>() {{ put("key1", 1); put("key2", "value"); put("key3", true); }}"#,
                "HashMap",
                None
            ),
            "{'key1': 1, 'key2': 'value', 'key3': True}"
        );
        assert_eq!(c("new HashMap<>() {{ }}", "HashMap", None), "{}");
        assert_eq!(c("'a'", "char", None), "''a''");
        assert!(convert("x", "Set", None).is_err());
    }
}
