//! Execution, the innermost layer: a concurrency limit, a deadline, cancellation, and
//! panic isolation around the tool's `call`. The tool's context carries a token that fires
//! on timeout as well as on the caller's cancellation, so tools can stop their children.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use async_trait::async_trait;
use futures_util::FutureExt;
use tokio::sync::Semaphore;
use tokio::time::Instant;
use toolgate_core::{DynTool, ToolError};
use toolgate_protocol::{CallError, ErrorCode, ToolOutput};

use crate::call::{Call, Outcome};
use crate::layer::{Layer, Next};

/// How long a cancelled tool may keep running to clean up (kill its children) before it is
/// dropped.
const CLEANUP_GRACE: Duration = Duration::from_secs(2);

/// Deadlines are capped here (30 years), so a huge configured timeout cannot overflow.
const FAR_FUTURE: Duration = Duration::from_secs(30 * 365 * 86_400);

pub struct ExecuteLayer {
    permits: Arc<Semaphore>,
    timeout: Duration,
}

impl ExecuteLayer {
    pub fn new(max_concurrent: usize, timeout: Duration) -> Self {
        ExecuteLayer {
            permits: Arc::new(Semaphore::new(max_concurrent.max(1))),
            timeout,
        }
    }
}

#[async_trait]
impl Layer for ExecuteLayer {
    fn name(&self) -> &'static str {
        "execute"
    }

    async fn handle(&self, call: &mut Call, _next: Next<'_>) -> Outcome {
        let tool = call.entry()?.tool.clone();
        let args = call.args()?.clone();
        let caller = call.request.cancel.clone();
        let cancelled = || CallError::new(ErrorCode::Cancelled, "the caller cancelled the call");
        let _permit = tokio::select! {
            p = self.permits.clone().acquire_owned() => p.map_err(|_| {
                CallError::new(ErrorCode::Unavailable, "the gateway is shutting down")
            })?,
            () = caller.cancelled() => return Err(cancelled()),
        };
        if caller.is_cancelled() {
            return Err(cancelled());
        }
        let deadline = Instant::now() + self.timeout.min(FAR_FUTURE);
        let token = caller.child_token();
        let ctx = call.tool_context(token.clone());
        let run = AssertUnwindSafe(tool.call(args, ctx)).catch_unwind();
        tokio::pin!(run);
        // Most tools finish on their first poll; only the others need the deadline timer,
        // whose registration costs about as much as a quick tool. The deadline still counts
        // from before that first poll.
        let first = std::future::poll_fn(|cx| Poll::Ready(run.as_mut().poll(cx))).await;
        if let Poll::Ready(result) = first {
            return finished(&tool, result);
        }
        tokio::select! {
            result = &mut run => finished(&tool, result),
            () = caller.cancelled() => {
                token.cancel();
                let _ = tokio::time::timeout(CLEANUP_GRACE, run).await;
                Err(cancelled())
            }
            () = tokio::time::sleep_until(deadline) => {
                token.cancel();
                let _ = tokio::time::timeout(CLEANUP_GRACE, run).await;
                Err(CallError::new(ErrorCode::Timeout, format!(
                    "`{}` did not finish within {:?}", tool.spec().name, self.timeout)))
            }
        }
    }
}

/// The call's outcome from what the tool returned, or from its panic.
fn finished(tool: &DynTool, result: std::thread::Result<Result<ToolOutput, ToolError>>) -> Outcome {
    match result {
        Ok(r) => r.map_err(ToolError::into_call_error),
        Err(_) => Err(CallError::new(
            ErrorCode::ExecutionFailed,
            format!("tool `{}` panicked", tool.spec().name),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{call_for, run_layer_on, test_tool};
    use serde_json::json;
    use toolgate_core::ToolError;
    use toolgate_protocol::Risk;

    #[tokio::test]
    async fn timeout_fires_and_cancels_the_tool() {
        let (tool, seen) = test_tool("slow", Risk::Read);
        let mut call = call_for(tool, json!({"sleep_ms": 10_000}));
        let err = run_layer_on(&ExecuteLayer::new(4, Duration::from_millis(50)), &mut call)
            .await
            .unwrap_err();
        assert_eq!((err.code, err.retryable), (ErrorCode::Timeout, true));
        assert!(
            seen.cancelled.load(std::sync::atomic::Ordering::SeqCst),
            "tool saw its token fire"
        );
    }

    #[tokio::test]
    async fn caller_cancellation() {
        let (tool, _) = test_tool("slow", Risk::Read);
        let mut call = call_for(tool, json!({"sleep_ms": 10_000}));
        let cancel = call.request.cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(30)).await;
            cancel.cancel();
        });
        let err = run_layer_on(&ExecuteLayer::new(4, Duration::from_secs(60)), &mut call)
            .await
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::Cancelled);
    }

    #[tokio::test]
    async fn a_call_cancelled_before_it_starts_never_reaches_the_tool() {
        let (tool, seen) = test_tool("quick", Risk::Read);
        let mut call = call_for(tool, json!({}));
        call.request.cancel.cancel();
        let err = run_layer_on(&ExecuteLayer::new(4, Duration::from_secs(60)), &mut call)
            .await
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::Cancelled);
        assert_eq!(seen.calls.load(std::sync::atomic::Ordering::SeqCst), 0);
    }

    #[tokio::test]
    async fn panics_and_tool_errors_become_call_errors() {
        let layer = ExecuteLayer::new(4, Duration::from_secs(5));
        let (tool, _) = test_tool("p", Risk::Read);
        let mut call = call_for(tool.clone(), json!({"panic": true}));
        let err = run_layer_on(&layer, &mut call).await.unwrap_err();
        assert_eq!(
            (err.code, err.message.as_str()),
            (ErrorCode::ExecutionFailed, "tool `p` panicked")
        );
        let mut call = call_for(tool, json!({"fail": "disk full"}));
        let err = run_layer_on(&layer, &mut call).await.unwrap_err();
        assert_eq!(err, ToolError::failed("disk full").into_call_error());
    }
}
