//! `tools/call` of a stateless (2026-07-28) client, which no server request can reach: the
//! call runs through the gateway like any other, and what its tool asks of the client
//! mid-call comes back as an `InputRequiredResult` ([`super::rounds`]); the client's retry
//! with `inputResponses` and `requestState` resumes the same call.
//!
//! `prompts/get` of such a client gets the same rounds: a federated server's prompt that
//! needs the client's input (SEP-2322 names `prompts/get` among the requests that may) is
//! resolved as a call's questions are.
//!
//! A request with a `progressToken` (every rmcp client sends one) also hears the call's
//! progress on its response stream, and may wait there for a pending approval, with the
//! same notifications naming the approval as a session call ([`report_waits`]).

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, ProgressToken,
};
use rmcp::{Peer, RoleServer};
use serde_json::Value;
use tokio::sync::mpsc::unbounded_channel;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use toolgate_core::{CallerLink, TraceContext};
use toolgate_gateway::{Arguments, CallRequest, Gateway};
use toolgate_protocol::Envelope;

use super::call::{PROGRESS_EVERY, Waits, report_waits};
use super::extras::{McpExtras, Requester};
use super::result::call_result;
use super::rounds::{Owner, Rounds, Step, start};
use super::tools::conceal_hidden;
use toolgate_gateway::Caller;

/// Where a stateless call's progress goes: the request's response stream.
pub struct ProgressStream {
    pub peer: Peer<RoleServer>,
    pub token: ProgressToken,
    /// When it fires while the call waits for a human, the call is cancelled.
    pub shutdown: CancellationToken,
}

/// One stateless `tools/call`: who sends it, what it declared, and where its progress goes.
pub struct StatelessCall<'a> {
    pub caller: &'a Caller,
    pub session: toolgate_protocol::SessionId,
    pub params: CallToolRequestParams,
    /// The caller's trace context, passed on to a federated server.
    pub trace: Option<TraceContext>,
    pub capabilities: ClientCapabilities,
    pub progress: Option<ProgressStream>,
}

/// Runs (or resumes) the call `call.params` names.
pub async fn run_stateless_call(
    gateway: &Arc<Gateway>,
    rounds: &Rounds<Envelope>,
    calls: &TaskTracker,
    call: StatelessCall<'_>,
) -> Result<CallToolResponse, ErrorData> {
    let StatelessCall {
        caller,
        session,
        params,
        trace,
        capabilities,
        progress,
    } = call;
    let tool = params.name.to_string();
    let owner = Owner {
        principal: caller.principal.clone(),
        name: tool.clone(),
    };
    let step = match params.request_state {
        Some(state) => {
            let responses = params.input_responses.unwrap_or_default();
            rounds.resume(&state, &owner, responses).await?
        }
        // inputResponses without a requestState: a new call, whose named questions they
        // may answer (the ephemeral form of SEP-2322); the rest is ignored, as SEP-2322
        // says to do with what is not recognised.
        None => {
            let preset = params.input_responses.unwrap_or_default();
            let mut request = CallRequest::new(
                tool.clone(),
                Arguments::Json(Value::Object(params.arguments.unwrap_or_default())),
            )
            .with_principal(caller.principal.clone())
            .with_role(caller.role.clone())
            .with_session(session);
            request.trace = trace;
            request.identity = caller.identity.clone();
            // Only a request with a stream to wait on can be kept waiting for a human.
            request.wait_for_approval = Some(progress.is_some());
            let gateway = Arc::clone(gateway);
            let running = start(capabilities, preset, |channel, cancel| {
                request.cancel = cancel.clone();
                request.caller = CallerLink::new(Arc::new(channel));
                calls.track_future(async move {
                    let Some(stream) = progress else {
                        return gateway.call(request).await;
                    };
                    let (events, received) = unbounded_channel();
                    request.events = Some(events);
                    let waits = Waits {
                        events: received,
                        peer: &stream.peer,
                        token: stream.token.clone(),
                        every: PROGRESS_EVERY,
                        shutdown: &stream.shutdown,
                        cancel: &cancel,
                    };
                    report_waits(gateway.call(request), waits).await
                })
            });
            rounds.first(owner, running).await?
        }
    };
    Ok(match step {
        Step::Done(envelope) => {
            if let Some(missing) = missing_capability(&envelope) {
                return Err(missing);
            }
            CallToolResponse::Complete(call_result(conceal_hidden(
                gateway,
                &caller.role,
                &tool,
                envelope,
            )))
        }
        Step::Input(input) => CallToolResponse::InputRequired(input),
    })
}

/// The `-32021` a call failed with because its client lacks a capability (a federated
/// server's own refusal, or its tool's question the client could not be asked): a
/// protocol error of the request, answered as the JSON-RPC error it is (HTTP 400), not as a
/// tool result.
fn missing_capability(envelope: &Envelope) -> Option<ErrorData> {
    let error = envelope.error.as_ref()?;
    let details = error.details.as_ref()?;
    let code = rmcp::model::ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY;
    (details["jsonrpc_code"] == code.0)
        .then(|| ErrorData::new(code, error.message.clone(), details.get("data").cloned()))
}

/// Stateless `prompts/get` requests waiting for their client's next round.
pub type PromptRounds = Rounds<Result<GetPromptResult, ErrorData>>;

/// Runs (or resumes) the `prompts/get` of a stateless client `who`, whose request declared
/// `capabilities`, through `extras` with the rounds as `who.client`.
pub async fn run_stateless_prompt(
    rounds: &PromptRounds,
    extras: Arc<dyn McpExtras>,
    mut who: Requester,
    mut request: GetPromptRequestParams,
    capabilities: ClientCapabilities,
) -> Result<GetPromptResponse, ErrorData> {
    let owner = Owner {
        principal: who.caller.principal.clone(),
        name: request.name.clone(),
    };
    let step = match request.request_state.take() {
        Some(state) => {
            let responses = request.input_responses.take().unwrap_or_default();
            rounds.resume(&state, &owner, responses).await?
        }
        None => {
            let preset = request.input_responses.take().unwrap_or_default();
            let running = start(capabilities, preset, |channel, cancel| async move {
                who.client = CallerLink::new(Arc::new(channel));
                tokio::select! {
                    result = extras.get_prompt(&who, request) => result,
                    () = cancel.cancelled() => Err(ErrorData::internal_error(
                        "the client did not come back for the prompt's next round",
                        None,
                    )),
                }
            });
            rounds.first(owner, running).await?
        }
    };
    match step {
        Step::Done(result) => result.map(GetPromptResponse::Complete),
        Step::Input(input) => Ok(GetPromptResponse::InputRequired(input)),
    }
}
