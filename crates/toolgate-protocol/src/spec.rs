//! The tool model (R-REG-1): metadata the catalog stores and every exporter reads.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How much harm a call can do; drives the default policy (R-APR-1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Risk {
    /// Observes only.
    Read,
    /// Changes state that can be changed back.
    Write,
    /// Irreversible or far-reaching (shell, delete, publish).
    Dangerous,
}

impl Risk {
    /// The lowercase wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Risk::Read => "read",
            Risk::Write => "write",
            Risk::Dangerous => "dangerous",
        }
    }
}

impl std::fmt::Display for Risk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Risk {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "read" => Ok(Risk::Read),
            "write" => Ok(Risk::Write),
            "dangerous" => Ok(Risk::Dangerous),
            other => Err(format!(
                "unknown risk `{other}` (expected read, write or dangerous)"
            )),
        }
    }
}

/// MCP tool annotations. Hints only: operator labels override them (R-APR-1).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

impl Annotations {
    /// True when no hint is set (exporters then omit the object).
    pub fn is_empty(&self) -> bool {
        *self == Annotations::default()
    }
}

/// Everything the catalog knows about a tool except its implementation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// Unique catalog name, `[A-Za-z0-9_-]{1,64}` (the strictest provider limit).
    pub name: String,
    /// What the model reads to decide when to use the tool, and when not to.
    pub description: String,
    /// JSON Schema 2020-12 of the arguments object.
    pub input_schema: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    pub risk: Risk,
    #[serde(default, skip_serializing_if = "Annotations::is_empty")]
    pub annotations: Annotations,
    /// Where the tool comes from: `builtin`, `mcp:<server>`, ….
    pub source: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
}

/// Why a [`ToolSpec`] is not acceptable to the catalog.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    #[error("tool name `{0}` is invalid: use 1-64 characters from [A-Za-z0-9_-]")]
    InvalidName(String),
    #[error("tool `{0}`: input_schema must be a JSON object schema (\"type\": \"object\")")]
    SchemaNotObject(String),
}

impl ToolSpec {
    /// A read-risk builtin spec; adjust with the `with_*` builders.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
    ) -> Self {
        ToolSpec {
            name: name.into(),
            description: description.into(),
            input_schema,
            output_schema: None,
            risk: Risk::Read,
            annotations: Annotations::default(),
            source: "builtin".to_owned(),
            tags: Vec::new(),
        }
    }

    pub fn with_risk(mut self, risk: Risk) -> Self {
        self.risk = risk;
        self
    }

    pub fn with_annotations(mut self, annotations: Annotations) -> Self {
        self.annotations = annotations;
        self
    }

    pub fn with_source(mut self, source: impl Into<String>) -> Self {
        self.source = source.into();
        self
    }

    pub fn with_tags<I: IntoIterator<Item = S>, S: Into<String>>(mut self, tags: I) -> Self {
        self.tags = tags.into_iter().map(Into::into).collect();
        self
    }

    pub fn with_output_schema(mut self, schema: Value) -> Self {
        self.output_schema = Some(schema);
        self
    }

    /// Checks the invariants the catalog relies on.
    pub fn validate(&self) -> Result<(), SpecError> {
        let name_ok = !self.name.is_empty()
            && self.name.len() <= 64
            && self
                .name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if !name_ok {
            return Err(SpecError::InvalidName(self.name.clone()));
        }
        if self.input_schema.get("type").and_then(Value::as_str) != Some("object") {
            return Err(SpecError::SchemaNotObject(self.name.clone()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rejects_bad_names_and_non_object_schemas() {
        let ok = ToolSpec::new("a_b-c9", "d", json!({"type": "object"}));
        assert_eq!(ok.validate(), Ok(()));
        let long = ToolSpec::new("x".repeat(65), "d", json!({"type": "object"}));
        assert!(matches!(long.validate(), Err(SpecError::InvalidName(_))));
        let dotted = ToolSpec::new("a.b", "d", json!({"type": "object"}));
        assert!(matches!(dotted.validate(), Err(SpecError::InvalidName(_))));
        let scalar = ToolSpec::new("a", "d", json!({"type": "string"}));
        assert!(matches!(
            scalar.validate(),
            Err(SpecError::SchemaNotObject(_))
        ));
    }

    #[test]
    fn risk_round_trips() {
        for r in [Risk::Read, Risk::Write, Risk::Dangerous] {
            assert_eq!(r.as_str().parse::<Risk>(), Ok(r));
        }
        assert!("fatal".parse::<Risk>().is_err());
    }
}
