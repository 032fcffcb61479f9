//! What the model is shown for one entry: the function docs as tool definitions, the way
//! BFCL's function-calling handlers prepare them — a language hint appended to every
//! description; BFCL type names mapped to JSON Schema (`dict` → `object`, `float` →
//! `number` with a note, `tuple` → `array`, `any` → `string`, Java/JavaScript names to their
//! JSON counterparts); dots in names replaced by `_` (no model API accepts them); and, in
//! the Java and JavaScript categories, every parameter typed `string` with its real type in
//! the description (the values are source code).

use serde_json::{Map, Value, json};
use toolgate_protocol::ToolSpec;

use super::category::Language;
use super::data::{Entry, FunctionDoc};

/// The name a function is sent under (`math.factorial` → `math_factorial`).
pub fn api_name(name: &str) -> String {
    name.replace('.', "_")
}

fn hint(language: Language) -> &'static str {
    match language {
        Language::Python => " Note that the provided function is in Python 3 syntax.",
        Language::Java => " Note that the provided function is in Java 8 SDK syntax.",
        Language::JavaScript => " Note that the provided function is in JavaScript syntax.",
    }
}

fn json_type(t: &str) -> &'static str {
    match t {
        "integer" | "byte" | "short" | "long" | "Bigint" => "integer",
        "float" | "double" | "number" => "number",
        "boolean" | "bool" | "Boolean" => "boolean",
        "array" | "list" | "tuple" | "ArrayList" | "Array" | "Queue" | "Stack" => "array",
        "dict" | "object" | "HashMap" | "Hashtable" => "object",
        _ => "string",
    }
}

/// One parameter schema with BFCL type names turned into JSON Schema ones, recursively.
fn cast(schema: &Value) -> Value {
    let Value::Object(map) = schema else {
        return schema.clone();
    };
    let mut out: Map<String, Value> = map.clone();
    let bfcl_type = map.get("type").and_then(Value::as_str).unwrap_or("string");
    out.insert("type".into(), json!(json_type(bfcl_type)));
    if bfcl_type == "float" {
        out.insert("format".into(), json!("float"));
        let d = map.get("description").and_then(Value::as_str).unwrap_or("");
        out.insert(
            "description".into(),
            json!(format!("{d} This is a float type value.")),
        );
    }
    if let Some(Value::Object(props)) = map.get("properties") {
        let props: Map<String, Value> = props.iter().map(|(k, v)| (k.clone(), cast(v))).collect();
        out.insert("properties".into(), Value::Object(props));
    }
    if let Some(items) = map.get("items") {
        out.insert("items".into(), cast(items));
    }
    out.remove("optional");
    Value::Object(out)
}

/// Java/JavaScript: every parameter is a string of source code; the real type goes into the
/// description (as BFCL's `_func_doc_language_specific_pre_processing` does).
fn as_source_string(schema: &Value, language: Language) -> Value {
    let lang = if language == Language::Java {
        "Java"
    } else {
        "JavaScript"
    };
    let t = schema.get("type").and_then(Value::as_str).unwrap_or("any");
    let mut d = schema
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    if t == "any" {
        d.push_str(&format!(
            " This parameter can be of any type of {lang} object in string representation."
        ));
    } else {
        d.push_str(&format!(
            " This is {lang} {t} type parameter in string representation."
        ));
    }
    if let Some(item) = schema
        .get("items")
        .and_then(|i| i.get("type"))
        .and_then(Value::as_str)
    {
        d.push_str(&format!(
            " The list elements are of type {item}; they are not in string representation."
        ));
    }
    if language == Language::JavaScript
        && t == "dict"
        && let Some(props) = schema.get("properties")
    {
        d.push_str(&format!(
            " The dictionary entries have the following schema; they are not in string representation. {props}"
        ));
    }
    json!({"type": "string", "description": d})
}

/// The tool definition of one function doc.
pub fn tool_spec(doc: &FunctionDoc, language: Language) -> ToolSpec {
    let properties: Map<String, Value> = doc
        .properties()
        .map(|(name, schema)| {
            let converted = match language {
                Language::Python => cast(schema),
                _ => as_source_string(schema, language),
            };
            (name.to_owned(), converted)
        })
        .collect();
    let mut schema = json!({"type": "object", "properties": properties});
    if let Some(required) = doc.parameters.get("required") {
        schema["required"] = required.clone();
    }
    let mut spec = ToolSpec::new(
        api_name(&doc.name),
        format!("{}{}", doc.description, hint(language)),
        schema,
    );
    spec.source = "bfcl".to_owned();
    spec
}

/// The tool definitions of an entry.
pub fn tool_specs(entry: &Entry, language: Language) -> Vec<ToolSpec> {
    entry
        .functions
        .iter()
        .map(|f| tool_spec(f, language))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_names_and_hints_follow_bfcl() {
        let doc: FunctionDoc = serde_json::from_value(json!({
            "name": "math.hypot",
            "description": "Norm.",
            "parameters": {"type": "dict", "properties": {
                "x": {"type": "float", "description": "X."},
                "pts": {"type": "array", "items": {"type": "dict", "properties": {"t": {"type": "tuple", "items": {"type": "integer"}}}}},
                "opts": {"type": "dict", "properties": {"k": {"type": "any"}}}
            }, "required": ["x"]}
        }))
        .unwrap();
        let spec = tool_spec(&doc, Language::Python);
        assert_eq!(spec.name, "math_hypot");
        assert_eq!(
            spec.description,
            "Norm. Note that the provided function is in Python 3 syntax."
        );
        assert_eq!(
            spec.input_schema,
            json!({"type": "object", "required": ["x"], "properties": {
                "x": {"type": "number", "format": "float", "description": "X. This is a float type value."},
                "pts": {"type": "array", "items": {"type": "object", "properties": {"t": {"type": "array", "items": {"type": "integer"}}}}},
                "opts": {"type": "object", "properties": {"k": {"type": "string"}}}
            }})
        );
        let java = tool_spec(&doc, Language::Java);
        assert_eq!(java.input_schema["properties"]["x"]["type"], "string");
        assert!(
            java.input_schema["properties"]["pts"]["description"]
                .as_str()
                .unwrap()
                .ends_with(
                    "The list elements are of type dict; they are not in string representation."
                )
        );
    }
}
