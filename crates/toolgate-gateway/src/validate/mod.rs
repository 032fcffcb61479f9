//! Argument validation: parse (size-capped), then check against the tool's input schema
//! (JSON Schema 2020-12, compiled validators cached). Returns every violation with its JSON
//! path so a model can correct the call in one go.

mod cache;

use async_trait::async_trait;
use serde_json::{Value, json};
use toolgate_protocol::{CallError, ErrorCode};

pub use cache::ValidatorCache;

use crate::call::{Arguments, Call, Outcome};
use crate::layer::{Layer, Next};

/// Violations listed in one error; the count says how many there were.
const MAX_LISTED: usize = 20;

pub struct ValidateLayer {
    cache: ValidatorCache,
    max_argument_bytes: usize,
}

impl ValidateLayer {
    pub fn new(max_argument_bytes: usize) -> Self {
        ValidateLayer {
            cache: ValidatorCache::default(),
            max_argument_bytes,
        }
    }

    fn parse(&self, arguments: &Arguments) -> Result<Value, CallError> {
        match arguments {
            Arguments::Json(v) => Ok(v.clone()),
            Arguments::Text(text) => {
                if text.len() > self.max_argument_bytes {
                    return Err(CallError::new(
                        ErrorCode::InvalidArguments,
                        format!(
                            "arguments are {} bytes; the limit is {} bytes",
                            text.len(),
                            self.max_argument_bytes
                        ),
                    )
                    .with_hint(
                        "pass large content by reference (a file in the workspace) instead",
                    ));
                }
                let text = if text.trim().is_empty() { "{}" } else { text };
                serde_json::from_str(text).map_err(|e| {
                    CallError::new(
                        ErrorCode::InvalidArguments,
                        format!("arguments are not valid JSON: {e}"),
                    )
                    .with_hint("send one JSON object, e.g. {\"path\": \"src/main.rs\"}")
                })
            }
        }
    }
}

#[async_trait]
impl Layer for ValidateLayer {
    fn name(&self) -> &'static str {
        "validate"
    }

    async fn handle(&self, call: &mut Call, next: Next<'_>) -> Outcome {
        let args = self.parse(&call.request.arguments)?;
        let entry = call.entry()?;
        let validator = self.cache.get(&entry.tool).map_err(|e| {
            CallError::new(
                ErrorCode::Unavailable,
                format!(
                    "tool `{}` has an input schema that does not compile: {}",
                    entry.spec().name,
                    e.0
                ),
            )
            .with_retryable(false)
        })?;
        // Valid arguments, the common case, cost one pass that collects nothing.
        if validator.is_valid(&args) {
            call.args = Some(args);
            return next.run(call).await;
        }
        // `null` for an optional property the schema does not let be null means "not given":
        // dropped, when that is all that was wrong (a required one stays an error).
        if let Some((cleaned, dropped)) = without_optional_nulls(&entry.spec().input_schema, &args)
            && validator.is_valid(&cleaned)
        {
            call.dropped_nulls = dropped;
            call.args = Some(cleaned);
            return next.run(call).await;
        }
        let violations: Vec<Value> = validator
            .iter_errors(&args)
            .map(|e| {
                let path = e.instance_path().as_str().to_owned();
                json!({
                    "path": if path.is_empty() { "/".to_owned() } else { path },
                    "message": e.to_string(),
                    "schema_path": e.schema_path().as_str(),
                })
            })
            .collect();
        if !violations.is_empty() {
            let listed: Vec<String> = violations
                .iter()
                .take(MAX_LISTED)
                .map(|v| {
                    format!(
                        "{}: {}",
                        v["path"].as_str().unwrap_or("/"),
                        v["message"].as_str().unwrap_or("")
                    )
                })
                .collect();
            let more = violations.len().saturating_sub(MAX_LISTED);
            let tail = if more > 0 {
                format!("; and {more} more")
            } else {
                String::new()
            };
            return Err(CallError::new(
                ErrorCode::InvalidArguments,
                format!(
                    "arguments do not match the input schema of `{}`: {}{tail}",
                    entry.spec().name,
                    listed.join("; ")
                ),
            )
            .with_hint("fix every listed field and call again; `toolgate tools show NAME` prints the schema")
            .with_details(json!({ "violations": violations.into_iter().take(MAX_LISTED).collect::<Vec<_>>(), "count": listed.len() + more })));
        }
        call.args = Some(args);
        next.run(call).await
    }
}

/// The arguments without their top-level `null` values for properties the schema does not
/// require, and those properties' names; `None` when there is none.
fn without_optional_nulls(schema: &Value, args: &Value) -> Option<(Value, Vec<String>)> {
    let object = args.as_object()?;
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let dropped: Vec<String> = object
        .iter()
        .filter(|(k, v)| v.is_null() && !required.contains(&k.as_str()))
        .map(|(k, _)| k.clone())
        .collect();
    if dropped.is_empty() {
        return None;
    }
    let mut cleaned = object.clone();
    for name in &dropped {
        cleaned.remove(name);
    }
    Some((Value::Object(cleaned), dropped))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{call_with_entry, run_layer_on, schema_tool};
    use serde_json::json;

    fn tool() -> toolgate_core::DynTool {
        schema_tool(json!({
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "days": {"type": "integer", "minimum": 1},
                "opts": {"type": "object", "properties": {"unit": {"enum": ["c", "f"]}}}
            },
            "required": ["city"],
            "additionalProperties": false
        }))
    }

    /// Issue 34: a model's `null` for an optional argument means "not given".
    #[tokio::test]
    async fn a_null_optional_argument_is_dropped_and_a_null_required_one_refused() {
        let layer = ValidateLayer::new(1 << 20);
        let mut call = call_with_entry(
            tool(),
            Arguments::Json(json!({"city": "Oslo", "days": null, "opts": null})),
        );
        run_layer_on(&layer, &mut call).await.unwrap();
        assert_eq!(call.args, Some(json!({"city": "Oslo"})));
        assert_eq!(call.dropped_nulls, ["days", "opts"]);

        let mut call = call_with_entry(tool(), Arguments::Json(json!({"city": null})));
        let err = run_layer_on(&layer, &mut call).await.unwrap_err();
        assert!(err.message.contains("/city"), "{}", err.message);
        // A null that is wrong next to another error is not hidden by dropping it.
        let mut call = call_with_entry(
            tool(),
            Arguments::Json(json!({"city": "Oslo", "days": null, "x": 1})),
        );
        assert!(run_layer_on(&layer, &mut call).await.is_err());

        // A property that may be null keeps its null.
        let nullable = schema_tool(json!({
            "type": "object",
            "properties": {"verbose": {"type": ["boolean", "null"]}}
        }));
        let mut call = call_with_entry(nullable, Arguments::Json(json!({"verbose": null})));
        run_layer_on(&layer, &mut call).await.unwrap();
        assert_eq!(call.args, Some(json!({"verbose": null})));
        assert!(call.dropped_nulls.is_empty());
    }

    #[tokio::test]
    async fn lists_every_violation_with_its_path() {
        let layer = ValidateLayer::new(1 << 20);
        let mut call = call_with_entry(
            tool(),
            Arguments::Json(json!({"days": 0, "opts": {"unit": "k"}, "x": 1})),
        );
        let err = run_layer_on(&layer, &mut call).await.unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidArguments);
        let details = err.details.unwrap();
        let mut paths: Vec<&str> = details["violations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["path"].as_str().unwrap())
            .collect();
        paths.sort();
        assert_eq!(paths, ["/", "/", "/days", "/opts/unit"]);
        assert_eq!(details["count"], 4);
        assert!(
            err.message.contains("\"city\" is a required property"),
            "{}",
            err.message
        );
    }

    #[tokio::test]
    async fn malformed_and_oversized_text_is_rejected_clearly() {
        let layer = ValidateLayer::new(64);
        let mut bad = call_with_entry(tool(), Arguments::Text("{\"city\": ".into()));
        let err = run_layer_on(&layer, &mut bad).await.unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidArguments);
        assert!(
            err.message
                .starts_with("arguments are not valid JSON: EOF while parsing"),
            "{}",
            err.message
        );

        let mut big = call_with_entry(
            tool(),
            Arguments::Text(format!("{{\"city\":\"{}\"}}", "x".repeat(100))),
        );
        let err = run_layer_on(&layer, &mut big).await.unwrap_err();
        assert_eq!(
            err.message,
            "arguments are 111 bytes; the limit is 64 bytes"
        );
    }

    #[tokio::test]
    async fn deep_nesting_is_an_error_not_a_crash() {
        let layer = ValidateLayer::new(1 << 20);
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let mut call = call_with_entry(
            tool(),
            Arguments::Text(format!("{{\"city\":\"a\",\"opts\":{deep}}}")),
        );
        let err = run_layer_on(&layer, &mut call).await.unwrap_err();
        assert!(
            err.message.contains("recursion limit exceeded"),
            "{}",
            err.message
        );
    }

    #[tokio::test]
    async fn valid_arguments_are_parsed_once_and_passed_on() {
        let layer = ValidateLayer::new(1 << 20);
        let t = tool();
        let mut call = call_with_entry(t.clone(), Arguments::Text("{\"city\":\"Beijing\"}".into()));
        run_layer_on(&layer, &mut call).await.unwrap();
        assert_eq!(call.args, Some(json!({"city": "Beijing"})));
        let mut again = call_with_entry(t, Arguments::Json(json!({"city": "Oslo"})));
        run_layer_on(&layer, &mut again).await.unwrap();
        assert_eq!(layer.cache.len(), 1);
    }
}
