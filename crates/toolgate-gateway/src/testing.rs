//! Test fixtures for the layers: a scriptable tool and a probe that stands for "the rest of
//! the pipeline", so each layer is tested in isolation against a mock inner service.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use toolgate_core::{DynTool, Tool, ToolContext, ToolError};
use toolgate_protocol::{Risk, ToolOutput, ToolSpec};
use toolgate_registry::{Availability, Entry};

use crate::call::{Arguments, Call, CallRequest, Outcome};
use crate::layer::{Layer, Next};

#[derive(Default)]
pub struct Seen {
    pub calls: AtomicUsize,
    pub cancelled: AtomicBool,
}

/// Behaviour by argument: `sleep_ms` (watching cancellation), `panic`, `fail`, `deny` (in
/// `check`), `big` (a string of that many bytes); otherwise `{"echo": args}`.
pub struct TestTool {
    spec: ToolSpec,
    seen: Arc<Seen>,
}

#[async_trait]
impl Tool for TestTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn check(&self, args: &Value, _ctx: &ToolContext) -> Result<(), ToolError> {
        match args.get("deny").and_then(Value::as_str) {
            Some(why) => Err(ToolError::PolicyDenied(why.to_owned())),
            None => Ok(()),
        }
    }

    async fn call(&self, args: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        self.seen.calls.fetch_add(1, Ordering::SeqCst);
        if let Some(ms) = args.get("sleep_ms").and_then(Value::as_u64) {
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(ms)) => {}
                () = ctx.cancel.cancelled() => {
                    self.seen.cancelled.store(true, Ordering::SeqCst);
                    return Err(ToolError::Cancelled);
                }
            }
        }
        if args.get("panic").is_some() {
            panic!("scripted panic");
        }
        if let Some(msg) = args.get("fail").and_then(Value::as_str) {
            return Err(ToolError::failed(msg));
        }
        if let Some(n) = args.get("big").and_then(Value::as_u64) {
            return Ok(ToolOutput::text(
                "é".repeat(usize::try_from(n).unwrap_or(0) / 2),
            ));
        }
        Ok(ToolOutput::json(json!({"echo": args})))
    }
}

pub fn test_tool(name: &str, risk: Risk) -> (DynTool, Arc<Seen>) {
    let seen = Arc::new(Seen::default());
    let spec =
        ToolSpec::new(name, "A scriptable test tool.", json!({"type": "object"})).with_risk(risk);
    (
        Arc::new(TestTool {
            spec,
            seen: Arc::clone(&seen),
        }),
        seen,
    )
}

pub fn echo_tool(name: &str, risk: Risk) -> DynTool {
    test_tool(name, risk).0
}

pub fn schema_tool(schema: Value) -> DynTool {
    let spec = ToolSpec::new("schema_tool", "Has a real schema.", schema);
    Arc::new(TestTool {
        spec,
        seen: Arc::default(),
    })
}

/// Stands for the inner layers: reports that the call got through.
struct Reached;

#[async_trait]
impl Layer for Reached {
    fn name(&self) -> &'static str {
        "reached"
    }
    async fn handle(&self, call: &mut Call, _next: Next<'_>) -> Outcome {
        Ok(ToolOutput::json(json!({"reached": call.request.tool})))
    }
}

/// Runs `layer` on a fresh call of `tool` with `args`, the probe as its inner layer.
pub async fn run_layer(layer: &dyn Layer, tool: &str, args: Value) -> Outcome {
    let mut call = Call::new(CallRequest::new(tool, Arguments::Json(args)));
    run_layer_on(layer, &mut call).await
}

pub async fn run_layer_on(layer: &dyn Layer, call: &mut Call) -> Outcome {
    let inner: [Arc<dyn Layer>; 1] = [Arc::new(Reached)];
    layer.handle(call, Next::new(&inner)).await
}

/// A call as lookup and validation would leave it.
pub fn call_for(tool: DynTool, args: Value) -> Call {
    let mut call = call_with_entry(tool, Arguments::Json(args.clone()));
    call.args = Some(args);
    call
}

/// A call as lookup would leave it.
pub fn call_with_entry(tool: DynTool, arguments: Arguments) -> Call {
    let mut call = Call::new(CallRequest::new(tool.spec().name.clone(), arguments));
    call.entry = Some(Entry {
        tool,
        availability: Availability::Available,
    });
    call
}
