//! Tools for tests: [`Scripted`] (what it does is chosen by its arguments) and [`SpecOnly`]
//! (a definition to list, export and search; a call echoes its arguments).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use toolgate_core::{Tool, ToolContext, ToolError};
use toolgate_protocol::{Risk, ToolOutput, ToolSpec};

/// Behaviour by argument: `sleep_ms` (waits, cancellable), `fail` (fails with that message),
/// `big` (that many bytes of text), `say` (returned as the result, to test redaction of
/// results), `show_trace` (returns the trace context the tool was handed as
/// `{"traceparent": …}`); otherwise echoes `{"echo": arguments}`. Counts its calls.
pub struct Scripted {
    spec: ToolSpec,
    pub calls: AtomicUsize,
}

impl Scripted {
    /// Calls so far.
    pub fn count(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

#[async_trait]
impl Tool for Scripted {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, args: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        if let Some(ms) = args.get("sleep_ms").and_then(Value::as_u64) {
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(ms)) => {}
                () = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
            }
        }
        if let Some(m) = args.get("fail").and_then(Value::as_str) {
            return Err(ToolError::failed(m));
        }
        if let Some(n) = args.get("big").and_then(Value::as_u64) {
            let n = usize::try_from(n).unwrap_or(usize::MAX);
            return Ok(ToolOutput::text("x".repeat(n)));
        }
        if args.get("show_trace").is_some() {
            let parent = ctx.trace.as_ref().map(|t| t.traceparent().to_owned());
            return Ok(ToolOutput::json(json!({"traceparent": parent})));
        }
        if let Some(s) = args.get("say") {
            return Ok(ToolOutput::json(s.clone()));
        }
        Ok(ToolOutput::json(json!({"echo": args})))
    }
}

/// The arguments every [`Scripted`] tool accepts (and nothing else).
pub fn scripted_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "sleep_ms": {"type": "integer", "minimum": 0},
            "fail": {"type": "string"},
            "big": {"type": "integer"},
            "say": {},
            "path": {"type": "string"},
            "token": {"type": "string"},
            "note": {"type": "string"},
            "show_trace": {"type": "boolean"},
            "idempotency_key": {"type": "string"}
        },
        "additionalProperties": false
    })
}

/// A [`Scripted`] tool named `name`, of `risk`, tagged `test`.
pub fn scripted(name: &str, risk: Risk) -> Arc<Scripted> {
    Arc::new(Scripted {
        spec: ToolSpec::new(
            name,
            format!("Scripted test tool {name}."),
            scripted_schema(),
        )
        .with_risk(risk)
        .with_tags(["test"]),
        calls: AtomicUsize::new(0),
    })
}

/// A tool that is only its definition: listed, exported, searched; a call answers with its
/// arguments.
pub struct SpecOnly(pub ToolSpec);

#[async_trait]
impl Tool for SpecOnly {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    async fn call(&self, args: Value, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::json(args))
    }
}
