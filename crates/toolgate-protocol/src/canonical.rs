//! Canonical JSON: object keys sorted, no whitespace. The one text that is hashed wherever a
//! JSON value must have a stable identity (approval argument hashes, pinned definitions).

use std::fmt::Write as _;

use serde_json::Value;

/// `v` as canonical JSON text.
pub fn canonical_json(v: &Value) -> String {
    let mut out = String::new();
    write_canonical(v, &mut out);
    out
}

fn write_canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (key, value)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(key, out);
                out.push(':');
                write_canonical(value, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        Value::String(s) => write_string(s, out),
        // null, booleans and numbers have exactly one serde_json rendering.
        scalar => {
            let _ = write!(out, "{scalar}");
        }
    }
}

fn write_string(s: &str, out: &mut String) {
    // Display of a JSON string value is its escaped, quoted form.
    let _ = write!(out, "{}", Value::String(s.to_owned()));
}
