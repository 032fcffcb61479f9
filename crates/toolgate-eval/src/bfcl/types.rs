//! The type tables and the string normalisation of the official checker.

use super::value::PyType;

/// `PYTHON_TYPE_MAPPING`: a Python-category type name → the Python type of its values.
pub fn python_type(name: &str) -> Option<PyType> {
    Some(match name {
        "string" | "any" => PyType::Str,
        "integer" => PyType::Int,
        "float" => PyType::Float,
        "boolean" => PyType::Bool,
        "array" | "tuple" => PyType::List,
        "dict" => PyType::Dict,
        _ => return None,
    })
}

/// `JAVA_TYPE_CONVERSION`.
pub fn java_type(name: &str) -> Option<PyType> {
    Some(match name {
        "byte" | "short" | "integer" | "long" => PyType::Int,
        "float" | "double" => PyType::Float,
        "boolean" => PyType::Bool,
        "char" | "String" | "any" => PyType::Str,
        "Array" | "ArrayList" | "Queue" | "Stack" => PyType::List,
        "Set" => PyType::Set,
        "HashMap" | "Hashtable" => PyType::Dict,
        _ => return None,
    })
}

/// `JS_TYPE_CONVERSION`.
pub fn js_type(name: &str) -> Option<PyType> {
    Some(match name {
        "String" | "any" => PyType::Str,
        "integer" | "Bigint" => PyType::Int,
        "float" => PyType::Float,
        "Boolean" => PyType::Bool,
        "dict" => PyType::Dict,
        "array" => PyType::List,
        _ => return None,
    })
}

/// `standardize_string`: drops spaces and `,./-_*^`, lowercases, and turns `'` into `"`, so
/// that "April 1, 2024" and "april 1 2024" compare equal.
pub fn standardize(s: &str) -> String {
    s.chars()
        .filter(|c| !matches!(c, ' ' | ',' | '.' | '/' | '-' | '_' | '*' | '^'))
        .collect::<String>()
        .to_lowercase()
        .replace('\'', "\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standardizes_like_bfcl() {
        assert_eq!(standardize("April 1, 2024"), "april12024");
        assert_eq!(standardize("New_York-City/NY.*^"), "newyorkcityny");
        assert_eq!(standardize("it's"), "it\"s");
        assert_eq!(standardize("a\tb"), "a\tb");
    }
}

/// Python's `int(s)` for a string: surrounding whitespace, a sign, ASCII digits with single
/// underscores between them.
pub(crate) fn py_int(s: &str) -> Option<i128> {
    let t = s.trim();
    let (neg, digits) = match t.as_bytes().first()? {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    if digits.is_empty()
        || digits.starts_with('_')
        || digits.ends_with('_')
        || digits.contains("__")
        || !digits.chars().all(|c| c.is_ascii_digit() || c == '_')
    {
        return None;
    }
    let n: i128 = digits.replace('_', "").parse().ok()?;
    Some(if neg { -n } else { n })
}

/// Python's `float(s)` for a string (decimal and exponent forms, `inf`, `nan`, underscores
/// between digits).
pub(crate) fn py_float(s: &str) -> Option<f64> {
    let t = s.trim();
    if t.is_empty() {
        return None;
    }
    let chars: Vec<char> = t.chars().collect();
    for (i, c) in chars.iter().enumerate() {
        if *c == '_' {
            let before = i > 0 && chars[i - 1].is_ascii_digit();
            let after = chars.get(i + 1).is_some_and(char::is_ascii_digit);
            if !(before && after) {
                return None;
            }
        }
    }
    let cleaned = t.replace('_', "");
    let lower = cleaned.to_ascii_lowercase();
    let body = lower.trim_start_matches(['+', '-']);
    if !matches!(body, "inf" | "infinity" | "nan")
        && !body
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | '+' | '-'))
    {
        return None;
    }
    cleaned.parse().ok()
}

/// Python's `s[1:-1]` on characters.
pub(crate) fn strip_ends(s: &str) -> String {
    let n = s.chars().count();
    if n <= 2 {
        return String::new();
    }
    s.chars().skip(1).take(n - 2).collect()
}

/// Python's `s[:-1]` on characters.
pub(crate) fn drop_last(s: &str) -> &str {
    match s.char_indices().last() {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

#[cfg(test)]
mod py_tests {
    use super::*;

    #[test]
    fn int_and_float_parse_like_python() {
        assert_eq!(py_int(" -1_000 "), Some(-1000));
        assert_eq!(py_int("1__0"), None);
        assert_eq!(py_int("1.0"), None);
        assert_eq!(py_float("1e3"), Some(1000.0));
        assert_eq!(py_float("-Infinity"), Some(f64::NEG_INFINITY));
        assert_eq!(py_float("1_0.5"), Some(10.5));
        assert_eq!(py_float("abc"), None);
        assert_eq!(py_float("0x10"), None);
        assert_eq!(strip_ends("'a'"), "a");
        assert_eq!(strip_ends("\""), "");
        assert_eq!(drop_last("5L"), "5");
    }
}
