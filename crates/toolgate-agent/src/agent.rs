//! The loop (R-AGT-2): call the model → run every tool call of the turn concurrently through
//! the gateway → feed the results back under the calls' ids, in the calls' order → repeat
//! until a turn has no calls or the step limit is reached.
//!
//! Invariants:
//! - every call goes through [`Gateway::call`] with the conversation's session id, so it is
//!   validated, authorised, approved and audited like any other; a malformed call (arguments
//!   that are not JSON, a schema violation, an unknown or hallucinated tool) comes back as the
//!   gateway's error envelope, which the model reads and can correct;
//! - the history stays well-formed for every API: an assistant turn with calls is always
//!   followed by one result per call, even when the turn is cancelled (the gateway answers
//!   `cancelled`);
//! - results reach the model as the gateway governed them (R-EXE-4): an oversized result is
//!   its head plus a `result_id`, and `read_result` is offered from the first such result on;
//!   errors are never cut;
//! - a forced `tool_choice` applies to the first step only, so the model can still finish;
//! - the tools offered are asked of the [`ToolSelector`] before every model call (all visible
//!   tools by default); it shapes only what the model sees, never what it may call;
//! - with a [`Checkpoint`], a model turn is kept before any of its calls runs, and a run
//!   whose history ends with a kept turn's calls unanswered (a process that died while they
//!   ran) runs those calls before asking the model again; with
//!   [`AgentOptions::call_keys`], each call carries an idempotency key made of the prefix,
//!   the turn's place in the history and the call's id, so a write repeated by such a resume
//!   replays its recorded outcome instead of acting twice.

use std::sync::Arc;

use futures_util::future::join_all;
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use toolgate_gateway::govern::READ_RESULT;
use toolgate_gateway::{Arguments, CallEvent, CallRequest, Gateway};
use toolgate_protocol::{ContentBlock, Envelope, Principal, Role, SessionId, ToolSpec};

use toolgate_core::TraceContext;
use toolgate_telemetry::spans;

use crate::client::{ModelClient, ModelError};
use crate::select::{AllVisible, StepView, ToolSelector};
use crate::telemetry::{self, ModelOp};
use crate::types::{
    AssistantTurn, Message, ModelRequest, ModelResponse, StopReason, StreamEvent, ToolCall,
    ToolChoice, ToolResult, Usage,
};

/// How a conversation runs.
#[derive(Debug, Clone)]
pub struct AgentOptions {
    /// The gateway session of every call (audit, session-scoped approvals).
    pub session_id: SessionId,
    pub role: Role,
    pub principal: Principal,
    pub system: Option<String>,
    /// Model calls per [`Agent::run`] before it stops with [`AgentError::StepLimit`].
    pub max_steps: u32,
    pub stream: bool,
    /// Applies to the first step of a run; later steps use `auto`.
    pub tool_choice: ToolChoice,
    pub parallel_tool_calls: Option<bool>,
    pub max_tokens: Option<u32>,
    /// Wait for pending approvals (`Some(true)`) or hand `approval_required` to the model;
    /// `None` follows `[approvals] wait`.
    pub wait_for_approval: Option<bool>,
    /// Gives every call an idempotency key `<prefix>:<turn>:<call id>` (`<turn>`: how many
    /// assistant turns the history held when the call was made) and keeps its approval
    /// request pending if the run stops waiting, so the same call made again — by a run
    /// resumed after a crash — finds the decision and acts at most once. `None`: no key.
    pub call_keys: Option<String>,
}

impl Default for AgentOptions {
    fn default() -> Self {
        AgentOptions {
            session_id: "agent".into(),
            role: "default".into(),
            principal: "agent".into(),
            system: None,
            max_steps: 20,
            stream: true,
            tool_choice: ToolChoice::Auto,
            parallel_tool_calls: None,
            max_tokens: None,
            wait_for_approval: None,
            call_keys: None,
        }
    }
}

/// What the loop reports while it runs (for a terminal, a log, a UI).
#[derive(Debug, Clone)]
pub enum AgentEvent {
    /// A streaming delta from the model.
    Stream(StreamEvent),
    /// The model finished a turn.
    ModelTurn {
        step: u32,
        turn: AssistantTurn,
        stop: StopReason,
    },
    /// A tool call is about to run.
    ToolStarted(ToolCall),
    /// A call waits for a human; it can be decided from any front end.
    AwaitingApproval {
        call: ToolCall,
        approval_id: String,
        requires_confirmation: bool,
    },
    /// A tool call ended; `envelope` is what the model will read.
    ToolFinished { call: ToolCall, envelope: Envelope },
}

/// Receives [`AgentEvent`]s.
pub trait Observer: Send + Sync {
    fn event(&self, event: AgentEvent);
}

/// An observer that ignores everything.
#[derive(Debug, Default)]
pub struct Silent;

impl Observer for Silent {
    fn event(&self, _event: AgentEvent) {}
}

/// Keeps a run's progress as it goes (a conversation's journal): each model turn before its
/// calls run, then the calls' results. A run stops when a step cannot be kept: a call is
/// never made that a crash could make twice.
#[async_trait::async_trait]
pub trait Checkpoint: Send + Sync {
    async fn model_turn(&self, turn: &AssistantTurn, stop: &StopReason) -> Result<(), String>;
    async fn tool_results(&self, results: &[ToolResult]) -> Result<(), String>;
}

/// How a run ended well enough to have an answer.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutcome {
    /// The last turn's text.
    pub text: String,
    /// Why the model stopped: `EndTurn` is success; `MaxTokens`, `Refusal` and
    /// `ContentFilter` are answers the caller may want to treat as failures.
    pub stop: StopReason,
    /// Model calls made.
    pub steps: u32,
    pub usage: Usage,
}

#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error(
        "stopped after {steps} model calls without a final answer (the step limit; raise [model] max_steps or --max-steps)"
    )]
    StepLimit { steps: u32 },
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error("cancelled")]
    Cancelled,
    /// The run's progress could not be kept ([`Checkpoint`]).
    #[error("the conversation could not be saved: {0}")]
    Checkpoint(String),
}

/// A model, a gateway and the options of one conversation.
pub struct Agent {
    client: Arc<dyn ModelClient>,
    gateway: Arc<Gateway>,
    options: AgentOptions,
    selector: Arc<dyn ToolSelector>,
    checkpoint: Option<Arc<dyn Checkpoint>>,
}

impl Agent {
    pub fn new(client: Arc<dyn ModelClient>, gateway: Arc<Gateway>, options: AgentOptions) -> Self {
        Agent {
            client,
            gateway,
            options,
            selector: Arc::new(AllVisible),
            checkpoint: None,
        }
    }

    /// Keeps each step of a run before going on ([`Checkpoint`]).
    #[must_use]
    pub fn with_checkpoint(mut self, checkpoint: Arc<dyn Checkpoint>) -> Self {
        self.checkpoint = Some(checkpoint);
        self
    }

    /// Chooses the tools offered at each step (default: [`AllVisible`]).
    #[must_use]
    pub fn with_selector(mut self, selector: Arc<dyn ToolSelector>) -> Self {
        self.selector = selector;
        self
    }

    pub fn options(&self) -> &AgentOptions {
        &self.options
    }

    pub fn options_mut(&mut self) -> &mut AgentOptions {
        &mut self.options
    }

    pub fn client(&self) -> &Arc<dyn ModelClient> {
        &self.client
    }

    /// The definitions offered for the next step of `history`: the selector's choice, plus
    /// the tool a forced `tool_choice` names on step 1, with `read_result` only once something
    /// was offloaded (each only if the role may see it).
    pub async fn tools(&self, history: &[Message], step: u32, offloaded: bool) -> Vec<ToolSpec> {
        let view = StepView {
            gateway: &self.gateway,
            role: &self.options.role,
            history,
            step,
        };
        let mut tools = self.selector.select(&view).await;
        // A tool the first step is forced to call must be offered, whatever was selected.
        if step == 1
            && let ToolChoice::Tool(name) = &self.options.tool_choice
            && !tools.iter().any(|t| &t.name == name)
            && let Some(entry) = self.gateway.catalog().get(name)
            && entry.is_available()
            && self.gateway.visible_to(&self.options.role, &entry)
        {
            tools.push(entry.spec().clone());
        }
        if !offloaded {
            tools.retain(|t| t.name != READ_RESULT);
        } else if !tools.iter().any(|t| t.name == READ_RESULT)
            && let Some(entry) = self.gateway.catalog().get(READ_RESULT)
            && entry.is_available()
            && self.gateway.visible_to(&self.options.role, &entry)
        {
            tools.push(entry.spec().clone());
        }
        tools
    }

    /// Runs the conversation in `history` (ending with the user's message) until the model
    /// answers without calling tools. Every turn and every result is appended to `history`.
    pub async fn run(
        &self,
        history: &mut Vec<Message>,
        cancel: &CancellationToken,
        observer: &dyn Observer,
    ) -> Result<RunOutcome, AgentError> {
        let mut usage = Usage::default();
        let mut offloaded = history.iter().any(has_offloaded_result);
        let run_span = telemetry::run_span(self.client.provider(), self.client.model());
        let trace = spans::pass_on(run_span.as_ref(), None);
        // A turn kept before its calls ran, the run then interrupted: run its calls first.
        if let Some(Message::Assistant(turn)) = history.last()
            && !turn.tool_calls.is_empty()
        {
            let calls = turn.tool_calls.clone();
            let turn_no = assistant_turns(history);
            let results = self
                .execute_under(&calls, turn_no, cancel, observer, trace.as_ref())
                .await;
            offloaded |= results.iter().any(result_was_offloaded);
            self.keep_results(&results).await?;
            history.push(Message::ToolResults { results });
            if cancel.is_cancelled() {
                return Err(AgentError::Cancelled);
            }
        }
        for step in 1..=self.options.max_steps {
            let op = ModelOp::start(self.client.provider(), self.client.model(), trace.as_ref());
            let request = ModelRequest {
                system: self.options.system.clone(),
                messages: history.clone(),
                tools: self.tools(history, step, offloaded).await,
                tool_choice: if step == 1 {
                    self.options.tool_choice.clone()
                } else {
                    ToolChoice::Auto
                },
                parallel_tool_calls: self.options.parallel_tool_calls,
                max_tokens: self.options.max_tokens,
                temperature: None,
                trace: op.trace(trace.clone()),
            };
            let response = tokio::select! {
                () = cancel.cancelled() => return Err(AgentError::Cancelled),
                r = self.ask(&request, observer) => r,
            };
            op.end(&response);
            let response = response?;
            usage.add(response.usage);
            let ModelResponse { turn, stop, .. } = response;
            if let Some(checkpoint) = &self.checkpoint {
                checkpoint
                    .model_turn(&turn, &stop)
                    .await
                    .map_err(AgentError::Checkpoint)?;
            }
            history.push(Message::Assistant(turn.clone()));
            observer.event(AgentEvent::ModelTurn {
                step,
                turn: turn.clone(),
                stop: stop.clone(),
            });
            if turn.tool_calls.is_empty() {
                return Ok(RunOutcome {
                    text: turn.text,
                    stop,
                    steps: step,
                    usage,
                });
            }
            let turn_no = assistant_turns(history);
            let results = self
                .execute_under(&turn.tool_calls, turn_no, cancel, observer, trace.as_ref())
                .await;
            offloaded |= results.iter().any(result_was_offloaded);
            self.keep_results(&results).await?;
            history.push(Message::ToolResults { results });
            if cancel.is_cancelled() {
                return Err(AgentError::Cancelled);
            }
        }
        Err(AgentError::StepLimit {
            steps: self.options.max_steps,
        })
    }

    async fn keep_results(&self, results: &[ToolResult]) -> Result<(), AgentError> {
        match &self.checkpoint {
            Some(checkpoint) => checkpoint
                .tool_results(results)
                .await
                .map_err(AgentError::Checkpoint),
            None => Ok(()),
        }
    }

    async fn ask(
        &self,
        request: &ModelRequest,
        observer: &dyn Observer,
    ) -> Result<ModelResponse, ModelError> {
        if self.options.stream {
            let mut sink = |e: StreamEvent| observer.event(AgentEvent::Stream(e));
            self.client.stream(request, &mut sink).await
        } else {
            self.client.complete(request).await
        }
    }

    /// Runs all calls concurrently; the results come back in the calls' order.
    pub async fn execute(
        &self,
        calls: &[ToolCall],
        cancel: &CancellationToken,
        observer: &dyn Observer,
    ) -> Vec<ToolResult> {
        self.execute_under(calls, 0, cancel, observer, None).await
    }

    /// [`Agent::execute`] with the calls under the trace context `trace`.
    async fn execute_under(
        &self,
        calls: &[ToolCall],
        turn_no: usize,
        cancel: &CancellationToken,
        observer: &dyn Observer,
        trace: Option<&TraceContext>,
    ) -> Vec<ToolResult> {
        join_all(
            calls
                .iter()
                .map(|c| self.execute_one(c, turn_no, cancel, observer, trace)),
        )
        .await
    }

    async fn execute_one(
        &self,
        call: &ToolCall,
        turn_no: usize,
        cancel: &CancellationToken,
        observer: &dyn Observer,
        trace: Option<&TraceContext>,
    ) -> ToolResult {
        observer.event(AgentEvent::ToolStarted(call.clone()));
        // Models write "" for a call without arguments.
        let text = if call.arguments.trim().is_empty() {
            "{}".to_owned()
        } else {
            call.arguments.clone()
        };
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let mut request = CallRequest::new(call.name.clone(), Arguments::Text(text))
            .with_role(self.options.role.clone())
            .with_session(self.options.session_id.clone())
            .with_principal(self.options.principal.clone());
        request.cancel = cancel.child_token();
        request.trace = trace.cloned();
        request.wait_for_approval = self.options.wait_for_approval;
        if let Some(prefix) = &self.options.call_keys {
            request.idempotency_key = Some(format!("{prefix}:{turn_no}:{}", call.id));
            request.on_give_up = toolgate_gateway::approve::OnGiveUp::Keep;
        }
        request.events = Some(tx);
        let running = self.gateway.call(request);
        tokio::pin!(running);
        let envelope = loop {
            tokio::select! {
                envelope = &mut running => break envelope,
                Some(CallEvent::AwaitingApproval { approval_id, requires_confirmation, .. }) = rx.recv() => {
                    observer.event(AgentEvent::AwaitingApproval {
                        call: call.clone(),
                        approval_id,
                        requires_confirmation,
                    });
                }
            }
        };
        let result = ToolResult {
            call_id: call.id.clone(),
            name: call.name.clone(),
            content: serde_json::to_string(&for_the_model(&envelope)).unwrap_or_else(|e| {
                format!(r#"{{"ok":false,"error":{{"code":"execution_failed","message":"{e}"}}}}"#)
            }),
            is_error: !envelope.ok,
        };
        observer.event(AgentEvent::ToolFinished {
            call: call.clone(),
            envelope,
        });
        result
    }
}

/// The envelope as the model reads it: binary content blocks (images, audio from MCP tools)
/// are described, not inlined as base64 text that would flood the context.
fn for_the_model(envelope: &Envelope) -> std::borrow::Cow<'_, Envelope> {
    let binary =
        |b: &ContentBlock| matches!(b, ContentBlock::Image { .. } | ContentBlock::Audio { .. });
    if !envelope.content.iter().any(binary) {
        return std::borrow::Cow::Borrowed(envelope);
    }
    let mut shown = envelope.clone();
    for block in &mut shown.content {
        let (kind, data, mime) = match block {
            ContentBlock::Image { data, mime_type } => ("image", data, mime_type),
            ContentBlock::Audio { data, mime_type } => ("audio", data, mime_type),
            _ => continue,
        };
        *block = ContentBlock::Text {
            text: format!(
                "[{kind} {mime}, {} bytes of base64, not shown to the model]",
                data.len()
            ),
        };
    }
    std::borrow::Cow::Owned(shown)
}

/// How many assistant turns `history` holds: a turn's place, the same when a resumed run
/// rebuilds the history.
fn assistant_turns(history: &[Message]) -> usize {
    history
        .iter()
        .filter(|m| matches!(m, Message::Assistant(_)))
        .count()
}

fn result_was_offloaded(r: &ToolResult) -> bool {
    // Cheap test first; the envelope is parsed only when the key is there.
    r.content.contains("\"result_id\"")
        && serde_json::from_str::<Value>(&r.content)
            .ok()
            .and_then(|v| v.get("truncated")?.get("result_id").cloned())
            .is_some()
}

fn has_offloaded_result(m: &Message) -> bool {
    match m {
        Message::ToolResults { results } => results.iter().any(result_was_offloaded),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_content_is_described_not_inlined() {
        let mut env = Envelope::success(
            "call_1",
            toolgate_protocol::ToolOutput::text("a chart"),
            None,
        );
        env.content = vec![
            ContentBlock::Image {
                data: "iVBORw0KGgo=".into(),
                mime_type: "image/png".into(),
            },
            ContentBlock::Text {
                text: "caption".into(),
            },
        ];
        let shown = for_the_model(&env);
        assert_eq!(
            shown.content,
            vec![
                ContentBlock::Text {
                    text: "[image image/png, 12 bytes of base64, not shown to the model]".into()
                },
                ContentBlock::Text {
                    text: "caption".into()
                },
            ]
        );
        let plain = Envelope::success("c", toolgate_protocol::ToolOutput::text("x"), None);
        assert!(matches!(
            for_the_model(&plain),
            std::borrow::Cow::Borrowed(_)
        ));
    }
}
