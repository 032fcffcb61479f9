//! A second opinion on JSON Schema for `validate_args`: the keywords the built-in tools'
//! input schemas use (`type`, `required`, `properties`, `additionalProperties: false`,
//! `enum`, `minimum`, `maximum`, `minLength`, `maxLength`, `items`), checked by hand. Other
//! keywords are ignored, which only makes the oracle more lenient than the validator.

use serde_json::Value;

/// The first way `value` breaks `schema`, if any.
pub fn violation(schema: &Value, value: &Value, path: &str) -> Option<String> {
    let schema = schema.as_object()?;
    if let Some(t) = schema.get("type") {
        let ok = match t {
            Value::String(t) => has_type(value, t),
            Value::Array(ts) => ts
                .iter()
                .filter_map(Value::as_str)
                .any(|t| has_type(value, t)),
            _ => true,
        };
        if !ok {
            return Some(format!("{path}: not of type {t}"));
        }
    }
    if let Some(Value::Array(options)) = schema.get("enum")
        && !options.iter().any(|o| same(o, value))
    {
        return Some(format!("{path}: not one of {options:?}"));
    }
    if let Some(n) = value.as_f64() {
        if let Some(min) = schema.get("minimum").and_then(Value::as_f64)
            && n < min
        {
            return Some(format!("{path}: {n} < minimum {min}"));
        }
        if let Some(max) = schema.get("maximum").and_then(Value::as_f64)
            && n > max
        {
            return Some(format!("{path}: {n} > maximum {max}"));
        }
    }
    if let Some(s) = value.as_str() {
        let len = s.chars().count() as u64;
        if let Some(min) = schema.get("minLength").and_then(Value::as_u64)
            && len < min
        {
            return Some(format!("{path}: shorter than {min}"));
        }
        if let Some(max) = schema.get("maxLength").and_then(Value::as_u64)
            && len > max
        {
            return Some(format!("{path}: longer than {max}"));
        }
    }
    if let (Some(items), Some(arr)) = (schema.get("items"), value.as_array()) {
        for (i, item) in arr.iter().enumerate() {
            if let Some(v) = violation(items, item, &format!("{path}/{i}")) {
                return Some(v);
            }
        }
    }
    if let Some(obj) = value.as_object() {
        if let Some(Value::Array(required)) = schema.get("required") {
            for r in required.iter().filter_map(Value::as_str) {
                if !obj.contains_key(r) {
                    return Some(format!("{path}: missing required {r}"));
                }
            }
        }
        let props = schema.get("properties").and_then(Value::as_object);
        for (k, v) in obj {
            match props.and_then(|p| p.get(k)) {
                Some(sub) => {
                    if let Some(e) = violation(sub, v, &format!("{path}/{k}")) {
                        return Some(e);
                    }
                }
                None => {
                    if schema.get("additionalProperties") == Some(&Value::Bool(false)) {
                        return Some(format!("{path}: unexpected member {k:?}"));
                    }
                }
            }
        }
    }
    None
}

fn has_type(v: &Value, t: &str) -> bool {
    match t {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        "number" => v.is_number(),
        "integer" => v.is_i64() || v.is_u64() || v.as_f64().is_some_and(|f| f.fract() == 0.0),
        _ => true,
    }
}

/// JSON equality with numbers compared by value (`1` and `1.0` are the same number).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}
