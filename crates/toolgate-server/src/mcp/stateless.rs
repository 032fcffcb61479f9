//! `tools/call` of a stateless (2026-07-28) client, which no server request can reach: the
//! call runs through the gateway like any other, and what its tool asks of the client
//! mid-call comes back as an `InputRequiredResult` ([`super::rounds`]); the client's retry
//! with `inputResponses` and `requestState` resumes the same call.

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{CallToolRequestParams, CallToolResponse, ClientCapabilities};
use serde_json::Value;
use tokio_util::task::TaskTracker;
use toolgate_core::CallerLink;
use toolgate_gateway::{Arguments, CallRequest, Gateway};
use toolgate_protocol::Envelope;

use super::result::call_result;
use super::rounds::{Owner, Rounds, Step, start};
use super::tools::conceal_hidden;
use crate::auth::Caller;

/// Runs (or resumes) the call `params` names for `caller`, whose request declared
/// `capabilities`.
pub async fn run_stateless_call(
    gateway: &Arc<Gateway>,
    rounds: &Rounds<Envelope>,
    calls: &TaskTracker,
    caller: &Caller,
    session: String,
    params: CallToolRequestParams,
    capabilities: ClientCapabilities,
) -> Result<CallToolResponse, ErrorData> {
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
        // inputResponses without a requestState answer nothing: a new call (SEP-2322 says
        // to ignore what is not recognised).
        None => {
            let mut request = CallRequest::new(
                tool.clone(),
                Arguments::Json(Value::Object(params.arguments.unwrap_or_default())),
            )
            .with_principal(caller.principal.clone())
            .with_role(caller.role.clone())
            .with_session(session);
            // A stateless client cannot be kept waiting for a human.
            request.wait_for_approval = Some(false);
            let gateway = Arc::clone(gateway);
            let running = start(capabilities, |channel, cancel| {
                request.cancel = cancel;
                request.caller = CallerLink::new(Arc::new(channel));
                calls.track_future(async move { gateway.call(request).await })
            });
            rounds.first(owner, running).await?
        }
    };
    Ok(match step {
        Step::Done(envelope) => CallToolResponse::Complete(call_result(conceal_hidden(
            gateway,
            &caller.role,
            &tool,
            envelope,
        ))),
        Step::Input(input) => CallToolResponse::InputRequired(input),
    })
}
