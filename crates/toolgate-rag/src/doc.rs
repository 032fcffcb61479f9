//! What the index reads of a tool: its name, description, parameter names and descriptions,
//! server name and tags, as one [`ToolDoc`].

use serde_json::Value;
use sha2::{Digest, Sha256};
use toolgate_protocol::ToolSpec;
use toolgate_registry::definition_hash;

/// The searchable text of one tool, split by field so that fields can be weighted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolDoc {
    /// The key of the index: the catalog name for catalog tools; distinct ids when several
    /// documents share a name (the retrieval eval's catalog).
    pub id: String,
    /// The tool's name (tokenised and weighted).
    pub name: String,
    pub description: String,
    /// `name: description` per parameter, nested objects flattened (depth-limited).
    pub params: Vec<String>,
    /// The MCP server name (`mcp:github` → `github`), empty for built-ins.
    pub server: String,
    pub tags: Vec<String>,
    /// Changes whenever anything above changes: the pinned definition hash (R-REG-5) plus
    /// the source and tags, which the pin does not cover but the index reads.
    pub key: String,
}

impl ToolDoc {
    /// A document outside the catalog (no pinned hash): `key` is the SHA-256 of its fields.
    pub fn new(id: &str, name: &str, description: &str, input_schema: &Value) -> Self {
        let mut params = Vec::new();
        collect_params(input_schema, "", 0, &mut params);
        let mut h = Sha256::new();
        h.update(TEXT_FORMAT.as_bytes());
        for part in [name, description, &input_schema.to_string()] {
            h.update(part.as_bytes());
            h.update(b"\0");
        }
        ToolDoc {
            id: id.to_owned(),
            name: name.to_owned(),
            description: description.to_owned(),
            params,
            server: String::new(),
            tags: Vec::new(),
            key: hex::encode(h.finalize()),
        }
    }

    pub fn from_spec(spec: &ToolSpec) -> Self {
        let mut params = Vec::new();
        collect_params(&spec.input_schema, "", 0, &mut params);
        let server = spec
            .source
            .strip_prefix("mcp:")
            .unwrap_or_default()
            .to_owned();
        let mut extra = Sha256::new();
        extra.update(TEXT_FORMAT.as_bytes());
        extra.update(spec.source.as_bytes());
        for t in &spec.tags {
            extra.update(b"\0");
            extra.update(t.as_bytes());
        }
        let key = format!(
            "{}-{}",
            definition_hash(spec),
            &hex::encode(extra.finalize())[..16]
        );
        ToolDoc {
            id: spec.name.clone(),
            name: spec.name.clone(),
            description: spec.description.clone(),
            params,
            server,
            tags: spec.tags.clone(),
            key,
        }
    }

    /// The text a sentence-embedding model reads: name words, description, parameters.
    pub fn embedding_text(&self) -> String {
        // `mcp__server__tool` reads as `tool (server)`.
        let short = match self.name.strip_prefix("mcp__") {
            Some(rest) => rest.rsplit("__").next().unwrap_or(rest),
            None => &self.name,
        };
        let mut s = short.replace(['_', '-'], " ");
        if !self.server.is_empty() {
            s.push_str(" (");
            s.push_str(&self.server);
            s.push(')');
        }
        s.push_str(": ");
        s.push_str(&self.description);
        if !self.params.is_empty() {
            s.push_str(" Parameters: ");
            s.push_str(&self.params.join("; "));
        }
        if !self.tags.is_empty() {
            s.push_str(" Tags: ");
            s.push_str(&self.tags.join(", "));
        }
        s
    }
}

/// What the key covers besides the definition: the version of the text the index derives
/// from it. Bumped whenever that text changes (e.g. enum values joined the parameters), so
/// vectors cached for the old text are not reused.
const TEXT_FORMAT: &str = "toolgate-rag doc text v3\0";

/// At most this many characters of a parameter's allowed values are indexed.
const ENUM_CHARS: usize = 160;

/// Appends ` (one of: a, b, c)`: the allowed values are the words users say ("Family
/// Counselor", "Theater"), often nowhere else in the definition.
fn push_enum(values: Option<&Value>, line: &mut String) {
    let Some(values) = values.and_then(Value::as_array) else {
        return;
    };
    let mut list = String::new();
    for v in values {
        let v = match v {
            Value::String(s) => s.clone(),
            Value::Number(_) | Value::Bool(_) => v.to_string(),
            _ => continue,
        };
        if v.trim().is_empty() {
            continue;
        }
        if list.len() + v.len() > ENUM_CHARS {
            // Nothing fits (one huge value): nothing is added.
            if !list.is_empty() {
                list.push_str(", …");
            }
            break;
        }
        if !list.is_empty() {
            list.push_str(", ");
        }
        list.push_str(&v);
    }
    if !list.is_empty() {
        line.push_str(" (one of: ");
        line.push_str(&list);
        line.push(')');
    }
}

fn collect_params(schema: &Value, prefix: &str, depth: usize, out: &mut Vec<String>) {
    if depth > 3 {
        return;
    }
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (name, p) in props {
        let full = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}.{name}")
        };
        let desc = p.get("description").and_then(Value::as_str).unwrap_or("");
        let mut line = if desc.is_empty() {
            full.clone()
        } else {
            format!("{full}: {desc}")
        };
        push_enum(
            p.get("enum").or_else(|| p.get("items")?.get("enum")),
            &mut line,
        );
        out.push(line);
        collect_params(p, &full, depth + 1, out);
        if let Some(items) = p.get("items") {
            collect_params(items, &full, depth + 1, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_every_field() {
        let spec = ToolSpec::new(
            "mcp__wx__get_weather",
            "Current weather.",
            json!({"type": "object", "properties": {
                "city": {"type": "string", "description": "City name"},
                "opts": {"type": "object", "properties": {"units": {"type": "string", "enum": ["metric", "imperial", ""]}}}
            }}),
        )
        .with_source("mcp:wx")
        .with_tags(["weather"]);
        let doc = ToolDoc::from_spec(&spec);
        assert_eq!(
            doc.params,
            [
                "city: City name",
                "opts",
                "opts.units (one of: metric, imperial)"
            ]
        );
        assert_eq!(doc.server, "wx");
        assert_eq!(
            doc.embedding_text(),
            "get weather (wx): Current weather. Parameters: city: City name; opts; opts.units (one of: metric, imperial) Tags: weather"
        );
        let retagged = ToolDoc::from_spec(&spec.clone().with_tags(["other"]));
        assert_ne!(doc.key, retagged.key);
        assert_eq!(doc.key, ToolDoc::from_spec(&spec).key);
    }

    #[test]
    fn long_enums_are_cut_and_array_items_read() {
        let many: Vec<String> = (0..100).map(|i| format!("value{i:03}")).collect();
        let doc = ToolDoc::new(
            "t",
            "t",
            "",
            &json!({"type": "object", "properties": {
                "big": {"type": "string", "enum": many},
                "tags": {"type": "array", "items": {"type": "string", "enum": ["a", 1, true, null]}}
            }}),
        );
        assert!(doc.params[0].starts_with("big (one of: value000, value001,"));
        assert!(doc.params[0].ends_with(", …)"));
        assert!(doc.params[0].len() < 200);
        assert_eq!(doc.params[1], "tags (one of: a, 1, true)");
        let huge = ToolDoc::new(
            "t",
            "t",
            "",
            &json!({"type": "object", "properties": {
                "sql": {"type": "string", "description": "A query.", "enum": ["x".repeat(500), "y"]}
            }}),
        );
        assert_eq!(huge.params, ["sql: A query."]);
    }
}
