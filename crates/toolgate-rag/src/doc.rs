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
        out.push(if desc.is_empty() {
            full.clone()
        } else {
            format!("{full}: {desc}")
        });
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
                "opts": {"type": "object", "properties": {"units": {"type": "string"}}}
            }}),
        )
        .with_source("mcp:wx")
        .with_tags(["weather"]);
        let doc = ToolDoc::from_spec(&spec);
        assert_eq!(doc.params, ["city: City name", "opts", "opts.units"]);
        assert_eq!(doc.server, "wx");
        assert_eq!(
            doc.embedding_text(),
            "get weather (wx): Current weather. Parameters: city: City name; opts; opts.units Tags: weather"
        );
        let retagged = ToolDoc::from_spec(&spec.clone().with_tags(["other"]));
        assert_ne!(doc.key, retagged.key);
        assert_eq!(doc.key, ToolDoc::from_spec(&spec).key);
    }
}
