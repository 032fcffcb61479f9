//! Export of tool definitions in the shape each model API takes in its `tools` field (R-REG-2).
//! Golden tests in `tests/golden/` pin each shape to the provider's documentation.
//!
//! [`export_deferred`] gives the deferred-loading forms of the APIs that have one (Anthropic's
//! tool search tool, OpenAI Responses' `tool_search`): every definition is sent but marked
//! `defer_loading`, and the provider's own search loads the few the model asks for.

use serde_json::{Map, Value, json};

use crate::ToolSpec;

/// A provider format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExportFormat {
    /// OpenAI Chat Completions: `{"type":"function","function":{name,description,parameters}}`.
    OpenAiChat,
    /// OpenAI Responses: `{"type":"function",name,description,parameters,strict}`.
    OpenAiResponses,
    /// Anthropic Messages: `{name,description,input_schema}`.
    Anthropic,
    /// MCP `Tool`: `{name,title?,description,inputSchema,outputSchema?,annotations?}`.
    Mcp,
    /// Gemini: `[{"functionDeclarations":[{name,description,parameters}]}]`.
    Gemini,
}

impl ExportFormat {
    pub const ALL: [ExportFormat; 5] = [
        ExportFormat::OpenAiChat,
        ExportFormat::OpenAiResponses,
        ExportFormat::Anthropic,
        ExportFormat::Mcp,
        ExportFormat::Gemini,
    ];

    /// Whether the API has a deferred-loading form ([`export_deferred`]).
    pub fn has_deferred_form(self) -> bool {
        matches!(
            self,
            ExportFormat::Anthropic | ExportFormat::OpenAiResponses
        )
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ExportFormat::OpenAiChat => "openai-chat",
            ExportFormat::OpenAiResponses => "openai-responses",
            ExportFormat::Anthropic => "anthropic",
            ExportFormat::Mcp => "mcp",
            ExportFormat::Gemini => "gemini",
        }
    }
}

impl std::str::FromStr for ExportFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ExportFormat::ALL
            .into_iter()
            .find(|f| f.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "unknown export format `{s}` (expected one of: openai-chat, openai-responses, anthropic, mcp, gemini)"
                )
            })
    }
}

impl std::fmt::Display for ExportFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The value of the request's `tools` field for `format`.
pub fn export(specs: &[&ToolSpec], format: ExportFormat) -> Value {
    match format {
        ExportFormat::OpenAiChat => specs.iter().map(|s| openai_chat(s)).collect(),
        ExportFormat::OpenAiResponses => specs.iter().map(|s| openai_responses(s)).collect(),
        ExportFormat::Anthropic => specs.iter().map(|s| anthropic(s)).collect(),
        ExportFormat::Mcp => specs.iter().map(|s| mcp(s)).collect(),
        ExportFormat::Gemini => {
            let decls: Vec<Value> = specs.iter().map(|s| gemini(s)).collect();
            json!([{ "functionDeclarations": decls }])
        }
    }
}

/// Anthropic's server-side BM25 tool search tool (`type`); the name it must be given.
pub const ANTHROPIC_TOOL_SEARCH: (&str, &str) =
    ("tool_search_tool_bm25_20251119", "tool_search_tool_bm25");
/// The `anthropic-beta` header value a request with deferred tools needs.
pub const ANTHROPIC_TOOL_SEARCH_BETA: &str = "advanced-tool-use-2025-11-20";

/// The deferred-loading form of `specs` for `format`: the provider's tool search tool first,
/// then every definition, marked `"defer_loading": true` unless its name is in `loaded`
/// (tools the model should have from the start). `None` when the API has no such form
/// (Chat Completions, Gemini, MCP).
///
/// - Anthropic Messages: `{"type": "tool_search_tool_bm25_20251119", "name":
///   "tool_search_tool_bm25"}` (never deferred, so at least one tool is loaded, as the API
///   requires); the request needs `anthropic-beta: advanced-tool-use-2025-11-20`.
/// - OpenAI Responses: `{"type": "tool_search"}` (hosted search; gpt-5.4 and later).
pub fn export_deferred(
    specs: &[&ToolSpec],
    loaded: &[&str],
    format: ExportFormat,
) -> Option<Value> {
    let (search, shape): (Value, fn(&ToolSpec) -> Value) = match format {
        ExportFormat::Anthropic => (
            json!({"type": ANTHROPIC_TOOL_SEARCH.0, "name": ANTHROPIC_TOOL_SEARCH.1}),
            anthropic,
        ),
        ExportFormat::OpenAiResponses => (json!({"type": "tool_search"}), openai_responses),
        ExportFormat::OpenAiChat | ExportFormat::Mcp | ExportFormat::Gemini => return None,
    };
    let mut tools = vec![search];
    for spec in specs {
        let mut tool = shape(spec);
        if !loaded.contains(&spec.name.as_str())
            && let Value::Object(fields) = &mut tool
        {
            fields.insert("defer_loading".into(), Value::Bool(true));
        }
        tools.push(tool);
    }
    Some(Value::Array(tools))
}

fn openai_chat(spec: &ToolSpec) -> Value {
    json!({
        "type": "function",
        "function": {
            "name": spec.name,
            "description": spec.description,
            "parameters": spec.input_schema,
        }
    })
}

/// The Responses API enforces `strict` unless told otherwise, and strict mode rejects
/// schemas with optional properties or open objects, so the flag says what the schema allows.
fn openai_responses(spec: &ToolSpec) -> Value {
    json!({
        "type": "function",
        "name": spec.name,
        "description": spec.description,
        "parameters": spec.input_schema,
        "strict": is_strict_compatible(&spec.input_schema),
    })
}

fn anthropic(spec: &ToolSpec) -> Value {
    json!({
        "name": spec.name,
        "description": spec.description,
        "input_schema": spec.input_schema,
    })
}

fn mcp(spec: &ToolSpec) -> Value {
    let mut tool = Map::new();
    tool.insert("name".into(), json!(spec.name));
    if let Some(title) = &spec.annotations.title {
        tool.insert("title".into(), json!(title));
    }
    tool.insert("description".into(), json!(spec.description));
    tool.insert("inputSchema".into(), spec.input_schema.clone());
    if let Some(out) = &spec.output_schema {
        tool.insert("outputSchema".into(), out.clone());
    }
    if !spec.annotations.is_empty() {
        tool.insert("annotations".into(), json!(spec.annotations));
    }
    Value::Object(tool)
}

fn gemini(spec: &ToolSpec) -> Value {
    json!({
        "name": spec.name,
        "description": spec.description,
        "parameters": gemini_schema(&spec.input_schema),
    })
}

/// Gemini's `Schema` is an OpenAPI 3.0 subset: keep the keywords it documents, turn
/// `"type": [T, "null"]` into `nullable`, `const` into a one-value `enum`, drop the rest.
fn gemini_schema(schema: &Value) -> Value {
    const KEPT: [&str; 15] = [
        "type",
        "format",
        "title",
        "description",
        "nullable",
        "enum",
        "maxItems",
        "minItems",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "pattern",
        "default",
        "required",
    ];
    let Value::Object(obj) = schema else {
        return schema.clone();
    };
    let mut out = Map::new();
    for (key, value) in obj {
        match key.as_str() {
            "type" => match value {
                Value::Array(types) => {
                    let non_null: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
                    if non_null.len() < types.len() {
                        out.insert("nullable".into(), json!(true));
                    }
                    if let Some(first) = non_null.first() {
                        out.insert("type".into(), (*first).clone());
                    }
                }
                other => {
                    out.insert("type".into(), other.clone());
                }
            },
            "const" => {
                out.insert("enum".into(), json!([value]));
            }
            "properties" => {
                let props: Map<String, Value> = value
                    .as_object()
                    .map(|p| {
                        p.iter()
                            .map(|(k, v)| (k.clone(), gemini_schema(v)))
                            .collect()
                    })
                    .unwrap_or_default();
                out.insert("properties".into(), Value::Object(props));
            }
            "items" => {
                out.insert("items".into(), gemini_schema(value));
            }
            "anyOf" | "oneOf" => {
                let alts: Vec<Value> = value
                    .as_array()
                    .map(|a| a.iter().map(gemini_schema).collect())
                    .unwrap_or_default();
                out.insert("anyOf".into(), Value::Array(alts));
            }
            k if KEPT.contains(&k) => {
                out.insert(key.clone(), value.clone());
            }
            _ => {}
        }
    }
    Value::Object(out)
}

/// Strict function calling needs every object closed (`additionalProperties: false`) with
/// all of its properties required, all the way down.
fn is_strict_compatible(schema: &Value) -> bool {
    let Value::Object(obj) = schema else {
        return true;
    };
    let is_object = match obj.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
        _ => obj.contains_key("properties"),
    };
    if is_object {
        if obj.get("additionalProperties") != Some(&Value::Bool(false)) {
            return false;
        }
        let props = obj.get("properties").and_then(Value::as_object);
        let required: Vec<&str> = obj
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if let Some(props) = props {
            if props.keys().any(|k| !required.contains(&k.as_str())) {
                return false;
            }
            if !props.values().all(is_strict_compatible) {
                return false;
            }
        }
    }
    ["items", "anyOf", "$defs", "definitions"]
        .iter()
        .all(|k| match obj.get(*k) {
            None => true,
            Some(Value::Array(a)) => a.iter().all(is_strict_compatible),
            Some(Value::Object(m)) if *k == "$defs" || *k == "definitions" => {
                m.values().all(is_strict_compatible)
            }
            Some(v) => is_strict_compatible(v),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strictness_follows_schema() {
        let closed = json!({"type":"object","properties":{"a":{"type":"string"}},
            "required":["a"],"additionalProperties":false});
        let optional = json!({"type":"object","properties":{"a":{"type":"string"}},
            "additionalProperties":false});
        let open = json!({"type":"object","properties":{"a":{"type":"string"}},"required":["a"]});
        assert!(is_strict_compatible(&closed));
        assert!(!is_strict_compatible(&optional));
        assert!(!is_strict_compatible(&open));
    }

    #[test]
    fn gemini_maps_nullable_and_const() {
        let s = json!({"type":"object","additionalProperties":false,"$schema":"x",
            "properties":{"u":{"type":["string","null"]},"k":{"const":"x"}}});
        assert_eq!(
            gemini_schema(&s),
            json!({"type":"object","properties":{"u":{"type":"string","nullable":true},
                "k":{"enum":["x"]}}})
        );
    }

    #[test]
    fn only_anthropic_and_responses_have_a_deferred_form() {
        let spec = ToolSpec::new("t", "d", json!({"type": "object"}));
        for f in ExportFormat::ALL {
            assert_eq!(
                export_deferred(&[&spec], &[], f).is_some(),
                f.has_deferred_form(),
                "{f}"
            );
        }
    }

    #[test]
    fn formats_parse_from_their_names() {
        for f in ExportFormat::ALL {
            assert_eq!(f.as_str().parse::<ExportFormat>(), Ok(f));
        }
        assert!("openai".parse::<ExportFormat>().is_err());
    }
}
