//! Elicitation (a server asking the user for input mid-call) routed to a human through
//! toolgate's approval channel. The client offers form elicitation only when the hub has an
//! [`Elicitor`]; without one the capability is not declared and servers do not ask.
//!
//! An operator's decision maps onto the protocol's three answers: approved → `accept` with
//! the form's defaults filled in (SEP-1034: a client applies the schema's `default`s),
//! denied → `decline`, expired or cancelled → `cancel`. URL-mode elicitation is declined: a
//! gateway must not send its operator to a URL a tool server chose.

use std::fmt::Debug;

use async_trait::async_trait;
use serde_json::{Map, Value};

/// What a server asked.
#[derive(Debug, Clone, PartialEq)]
pub struct ElicitationRequest {
    /// The configured server's name.
    pub server: String,
    pub message: String,
    /// The requested schema (an object of primitive properties).
    pub schema: Value,
}

/// The human's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitationAnswer {
    Accept(Map<String, Value>),
    Decline,
    Cancel,
}

/// A channel to a human (the approval store, a terminal prompt, a test).
#[async_trait]
pub trait Elicitor: Send + Sync + Debug {
    async fn elicit(&self, request: ElicitationRequest) -> ElicitationAnswer;
}

/// The form a human who accepts without typing submits: every property's `default`.
pub fn defaults_of(schema: &Value) -> Map<String, Value> {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|props| {
            props
                .iter()
                .filter_map(|(name, prop)| Some((name.clone(), prop.get("default")?.clone())))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_are_taken_from_each_property_that_has_one() {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "vip": {"type": "boolean", "default": false},
            "note": {"type": "string"}
        }});
        let form = defaults_of(&schema);
        assert_eq!(
            Value::Object(form),
            json!({"name": "John Doe", "age": 30, "vip": false})
        );
        assert!(defaults_of(&json!({"type": "object"})).is_empty());
    }
}
