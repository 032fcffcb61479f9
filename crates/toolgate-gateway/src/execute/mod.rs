//! Execution, the innermost layer: a concurrency limit, a deadline, cancellation, and
//! panic isolation around the tool's `call`. The tool's context carries a token that fires
//! on timeout as well as on the caller's cancellation, so tools can stop their children.
//! A call waiting for its client's answer holds no slot of the limit (`slot`).

mod slot;

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use async_trait::async_trait;
use futures_util::FutureExt;
use tokio::sync::Semaphore;
use tokio::time::Instant;
use toolgate_core::{CallerLink, DynTool, ToolError};
use toolgate_protocol::{CallError, ErrorCode, ToolOutput};

use crate::call::{Call, Outcome};
use crate::layer::{Layer, Next};
use slot::{Slot, SlotFreeChannel};

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
        let permit = tokio::select! {
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
        let mut ctx = call.tool_context(token.clone());
        // Only a call that can ask its client needs a slot it can give back.
        let _permit_or_slot = match ctx.caller.channel().cloned() {
            Some(inner) => {
                let slot = Slot::new(Arc::clone(&self.permits), permit);
                ctx.caller = CallerLink::new(Arc::new(SlotFreeChannel {
                    inner,
                    slot: Arc::clone(&slot),
                }));
                Held {
                    _permit: None,
                    slot: Some(slot),
                }
            }
            None => Held {
                _permit: Some(permit),
                slot: None,
            },
        };
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

/// What a running call holds of the concurrency limit; given back when the call ends.
struct Held {
    _permit: Option<tokio::sync::OwnedSemaphorePermit>,
    slot: Option<Arc<Slot>>,
}

impl Drop for Held {
    fn drop(&mut self) {
        if let Some(slot) = &self.slot {
            slot.finish();
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
    use serde_json::{Value, json};
    use toolgate_core::{
        CallerChannel, CallerError, CallerLink, CallerQuestion, CallerRequest, Tool, ToolContext,
    };
    use toolgate_protocol::{Risk, ToolSpec};

    /// A client that answers nothing until told to: a stateless client between rounds.
    struct SilentClient(tokio::sync::Notify);

    #[async_trait]
    impl CallerChannel for SilentClient {
        fn answers(&self, _request: CallerRequest) -> bool {
            true
        }
        async fn log(&self, _params: Value) {}
        async fn ask(&self, _question: CallerQuestion) -> Result<Value, CallerError> {
            self.0.notified().await;
            Ok(json!({"action": "accept"}))
        }
    }

    /// Asks its client one question, then answers what the client said.
    struct Asking(ToolSpec);

    #[async_trait]
    impl Tool for Asking {
        fn spec(&self) -> &ToolSpec {
            &self.0
        }
        async fn call(&self, _args: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
            let client = ctx.caller.answering(CallerRequest::Elicitation).cloned();
            let client = client.ok_or_else(|| ToolError::failed("no client"))?;
            let question = CallerQuestion::new(CallerRequest::Elicitation, json!({}));
            let answer = client
                .ask(question)
                .await
                .map_err(|e| ToolError::failed(e.message))?;
            Ok(ToolOutput::json(answer))
        }
    }

    /// Issue 30, 30.22: calls parked on their clients (2026-07-28 input rounds) filled the
    /// limit and stalled every other caller's call (> 40 s). With a limit of 1 and 4 calls
    /// waiting for their clients, another call runs at once; the parked ones finish after.
    #[tokio::test]
    async fn calls_waiting_for_their_client_hold_no_slot() {
        let layer = Arc::new(ExecuteLayer::new(1, Duration::from_secs(60)));
        let client = Arc::new(SilentClient(tokio::sync::Notify::new()));
        let asking: DynTool = Arc::new(Asking(ToolSpec::new(
            "asking",
            "Asks its client.",
            json!({"type": "object"}),
        )));
        let mut parked = Vec::new();
        for _ in 0..4 {
            let (layer, tool) = (Arc::clone(&layer), Arc::clone(&asking));
            let channel: Arc<dyn CallerChannel> = client.clone();
            parked.push(tokio::spawn(async move {
                let mut call = call_for(tool, json!({}));
                call.request.caller = CallerLink::new(channel);
                run_layer_on(layer.as_ref(), &mut call).await
            }));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        let (quick, seen) = test_tool("quick", Risk::Read);
        let mut call = call_for(quick, json!({}));
        let other = tokio::time::timeout(
            Duration::from_secs(10),
            run_layer_on(layer.as_ref(), &mut call),
        )
        .await;
        assert!(other.is_ok(), "parked calls held the only slot");
        assert_eq!(seen.calls.load(std::sync::atomic::Ordering::SeqCst), 1);
        // The parked calls end as their client answers (each waits its turn for the slot).
        for _ in 0..50 {
            client.0.notify_waiters();
            if parked.iter().all(tokio::task::JoinHandle::is_finished) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        for p in parked {
            assert_eq!(
                p.await.unwrap().unwrap(),
                ToolOutput::json(json!({"action": "accept"}))
            );
        }
    }

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
