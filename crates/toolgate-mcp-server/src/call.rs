//! `tools/call` as one `Gateway::call`, the same whatever carried it (rmcp's sessions,
//! stateless requests and stdio through [`run_tool_call`]; the JSON answers of
//! the server's fast path, `toolgate_server::mcp::fast`, through [`run_call`] directly). In order:
//! 1. the request becomes a [`CallRequest`]: principal and role from the caller, session from
//!    the transport, arguments as JSON, cancellation from the request's token (fired by
//!    `notifications/cancelled`, by the end of the session or stdio stream, and by a
//!    dropped HTTP request where the transport ties the call to one);
//! 2. a client that sent a `progressToken` can be kept waiting, so the call waits for a
//!    pending approval and a `notifications/progress` naming the approval id goes out at once
//!    and every [`PROGRESS_EVERY`] while it waits; a client without one gets the retryable
//!    `approval_required` at once;
//! 3. the calling client is the call's [`CallerLink`]: a federated server's sampling,
//!    elicitation, roots and log messages reach it through the tool's context;
//! 4. failures for tools the role cannot see are concealed as unknown tools, and the envelope
//!    becomes a `CallToolResult`.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ProgressNotificationParam, ProgressToken,
};
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer};
use serde_json::Value;
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};
use tokio_util::sync::CancellationToken;
use toolgate_core::{CallerLink, TraceContext};
use toolgate_gateway::{Arguments, CallEvent, CallRequest, Gateway};
use toolgate_protocol::Envelope;

use super::caller::PeerChannel;
use super::result::call_result;
use super::tools::conceal_hidden;
use toolgate_gateway::Caller;

/// How often a call waiting for approval tells its client it is still waiting.
pub const PROGRESS_EVERY: Duration = Duration::from_secs(5);

/// Runs one `tools/call` received by rmcp (a session, a stateless request or stdio): the
/// request's own token cancels it, and the client behind `context` gets progress and is
/// the call's [`CallerLink`].
pub async fn run_tool_call(
    gateway: &Gateway,
    shutdown: &CancellationToken,
    call: ToolCall<'_>,
    context: &RequestContext<RoleServer>,
) -> CallToolResult {
    let origin = CallOrigin {
        cancel: context.ct.child_token(),
        client: Some(CallingClient {
            peer: &context.peer,
            progress: context.meta.get_progress_token(),
        }),
    };
    run_call(gateway, shutdown, call, origin, |request| {
        gateway.call(request)
    })
    .await
}

/// Who calls which tool, with what.
#[derive(Debug)]
pub struct ToolCall<'a> {
    pub caller: &'a Caller,
    /// The session the call is audited under.
    pub session: toolgate_protocol::SessionId,
    pub params: CallToolRequestParams,
    /// The caller's trace context, passed on to a federated server.
    pub trace: Option<TraceContext>,
}

/// Where a call came from: what cancels it, and the client to talk back to when the
/// transport offers one.
pub struct CallOrigin<'a> {
    /// The call's cancellation token.
    pub cancel: CancellationToken,
    /// `None` when nothing can reach the client while the call runs (the JSON answers of
    /// `toolgate_server::mcp::fast`): no progress, no caller link, approvals never waited for.
    pub client: Option<CallingClient<'a>>,
}

/// The client behind a call, reachable while it runs.
pub struct CallingClient<'a> {
    pub peer: &'a Peer<RoleServer>,
    /// The request's `_meta.progressToken`.
    pub progress: Option<ProgressToken>,
}

/// The one implementation of `tools/call`, whatever carried it: builds the
/// [`CallRequest`], hands it to `run` (the gateway, directly or on a tracked task), waits
/// with progress when the client can be told, and maps the envelope to the MCP result with
/// hidden tools concealed.
pub async fn run_call<F>(
    gateway: &Gateway,
    shutdown: &CancellationToken,
    call: ToolCall<'_>,
    origin: CallOrigin<'_>,
    run: impl FnOnce(CallRequest) -> F,
) -> CallToolResult
where
    F: Future<Output = Envelope>,
{
    let ToolCall {
        caller,
        session,
        params,
        trace,
    } = call;
    let CallOrigin { cancel, client } = origin;
    let progress = client.as_ref().and_then(|c| c.progress.clone());
    let tool = params.name.to_string();
    let arguments = Value::Object(params.arguments.unwrap_or_default());
    // The call's events are read only while waiting with progress.
    let waiting = progress.is_some() && client.is_some();
    let (events, received) = unbounded_channel();
    let request = CallRequest {
        // The gateway assigns one (without a `getrandom` per call).
        call_id: String::new(),
        session_id: session,
        principal: caller.principal.clone(),
        role: caller.role.clone(),
        tool: tool.clone(),
        target: toolgate_gateway::Target::Tool,
        arguments: Arguments::Json(arguments),
        idempotency_key: None,
        cancel: cancel.clone(),
        wait_for_approval: Some(progress.is_some()),
        on_give_up: toolgate_gateway::approve::OnGiveUp::Abandon,
        events: waiting.then_some(events),
        caller: client.as_ref().map_or_else(CallerLink::none, |c| {
            CallerLink::new(Arc::new(PeerChannel::new(c.peer.clone())))
        }),
        trace,
        identity: caller.identity.clone(),
    };
    let envelope = match (progress, &client) {
        (Some(token), Some(client)) => {
            let waits = Waits {
                events: received,
                peer: client.peer,
                token,
                every: PROGRESS_EVERY,
                shutdown,
                cancel: &cancel,
            };
            report_waits(run(request), waits).await
        }
        _ => run(request).await,
    };
    call_result(conceal_hidden(gateway, &caller.role, &tool, envelope))
}

/// What [`report_waits`] listens to and reports through.
pub struct Waits<'a> {
    /// The call's events.
    pub events: UnboundedReceiver<CallEvent>,
    pub peer: &'a Peer<RoleServer>,
    pub token: ProgressToken,
    pub every: Duration,
    /// When it fires while the call waits for a human, the call is cancelled.
    pub shutdown: &'a CancellationToken,
    /// The call's own token.
    pub cancel: &'a CancellationToken,
}

/// Drives `call` to its end; while it waits for a human, sends progress notifications
/// naming the approval, first at once and then every `every`; once the tool runs, passes on
/// the progress it reports (an MCP server's own notifications). Values sent only grow, as
/// the protocol requires: the tool's are offset by the waiting notifications before them.
pub async fn report_waits(call: impl Future<Output = Envelope>, waits: Waits<'_>) -> Envelope {
    let Waits {
        mut events,
        peer,
        token,
        every,
        shutdown,
        cancel,
    } = waits;
    tokio::pin!(call);
    let mut waiting: Option<String> = None;
    // The last value sent, if any was.
    let mut last: Option<f64> = None;
    let mut offset: Option<f64> = None;
    let mut ticker = tokio::time::interval(every);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let param = tokio::select! {
            envelope = &mut call => {
                // What the tool reported just before it returned is still to be sent.
                while let Ok(event) = events.try_recv() {
                    if let Some(param) = tool_progress(event, &token, &mut last, &mut offset)
                        && let Err(e) = peer.notify_progress(param).await
                    {
                        tracing::debug!(error = %e, "could not send a progress notification");
                    }
                }
                return envelope;
            }
            Some(event) = events.recv() => match event {
                CallEvent::AwaitingApproval { approval_id, tool, requires_confirmation, .. } => {
                    waiting = Some(waiting_message(&approval_id, &tool, requires_confirmation));
                    ticker.reset_immediately();
                    continue;
                }
                progress @ CallEvent::Progress { .. } => {
                    // The tool runs: nothing waits for a human any more.
                    waiting = None;
                    match tool_progress(progress, &token, &mut last, &mut offset) {
                        Some(param) => param,
                        None => continue,
                    }
                }
            },
            () = shutdown.cancelled(), if waiting.is_some() && !cancel.is_cancelled() => {
                cancel.cancel();
                continue;
            }
            _ = ticker.tick(), if waiting.is_some() => {
                let value = last.map_or(1.0, |l| l + 1.0);
                last = Some(value);
                ProgressNotificationParam::new(token.clone(), value)
                    .with_message(waiting.clone().unwrap_or_default())
            }
        };
        if let Err(e) = peer.notify_progress(param).await {
            tracing::debug!(error = %e, "could not send a progress notification");
        }
    }
}

/// The notification for the tool's own progress `event`, if it is one that grows: after
/// waiting notifications, the tool's values start above them (`offset`, set once).
fn tool_progress(
    event: CallEvent,
    token: &ProgressToken,
    last: &mut Option<f64>,
    offset: &mut Option<f64>,
) -> Option<ProgressNotificationParam> {
    let CallEvent::Progress {
        progress,
        total,
        message,
    } = event
    else {
        return None;
    };
    let base = *offset.get_or_insert_with(|| last.map_or(0.0, |l| l + 1.0));
    let value = base + progress;
    if last.is_some_and(|l| value <= l) {
        return None;
    }
    *last = Some(value);
    let mut param = ProgressNotificationParam::new(token.clone(), value);
    if let Some(total) = total {
        param = param.with_total(base + total);
    }
    Some(match message {
        Some(message) => param.with_message(message),
        None => param,
    })
}

/// What a waiting client is told: which approval, and how an operator decides it.
pub fn waiting_message(approval_id: &str, tool: &str, requires_confirmation: bool) -> String {
    let confirm = if requires_confirmation {
        format!(" --confirm {tool}")
    } else {
        String::new()
    };
    format!(
        "waiting for approval {approval_id} of `{tool}`: an operator approves with `toolgate approvals approve {approval_id}{confirm}` or in the console"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waiting_message_names_the_approval_and_the_confirmation() {
        assert_eq!(
            waiting_message("apr_1", "shell", true),
            "waiting for approval apr_1 of `shell`: an operator approves with `toolgate approvals approve apr_1 --confirm shell` or in the console"
        );
        assert_eq!(
            waiting_message("apr_2", "write_file", false),
            "waiting for approval apr_2 of `write_file`: an operator approves with `toolgate approvals approve apr_2` or in the console"
        );
    }
}
