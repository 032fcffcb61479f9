//! What `run` and `chat` share: the session (model, runtime, history store), the terminal
//! view of the agent loop's events, and the exit status of a task.

use std::io::IsTerminal;
use std::sync::{Arc, Mutex};

use anyhow::Context;
use tokio_util::sync::CancellationToken;
use toolgate_agent::{
    Agent, AgentError, AgentEvent, AgentOptions, HistoryStore, Message, ModelClient, Observer,
    RunOutcome, SavedSession, StopReason, StreamEvent, ToolChoice,
};
use toolgate_app::{Config, Runtime, RuntimeOptions};
use toolgate_gateway::approve::Approver;

use crate::cli::AgentArgs;
use crate::lines::{ChatApprover, Lines};
use crate::user::local_user;

/// Everything a conversation needs, opened from the settings.
pub struct Session {
    pub agent: Agent,
    /// The gateway, the configured MCP servers (whose tools the model sees too) and Tool RAG.
    runtime: Runtime,
    pub store: HistoryStore,
    pub id: String,
    pub history: Vec<Message>,
}

impl Session {
    /// `approver`: the prompt to use when asking is allowed (`None`: the terminal prompt,
    /// when stdin is a terminal).
    pub async fn open(
        settings: &Config,
        args: &AgentArgs,
        prefix: &str,
        approver: Option<Arc<dyn Approver>>,
    ) -> anyhow::Result<Session> {
        let mut model = settings.file.model.clone();
        if let Some(m) = &args.model {
            model.model.clone_from(m);
        }
        let client: Arc<dyn ModelClient> =
            toolgate_agent::connect(&model, &settings.file.egress).context("[model]")?;
        let approver = if args.no_prompt {
            None
        } else {
            // The chat's prompt (its own stdin reader), also for `run` on a terminal: a
            // prompt abandoned by Ctrl-C must not leave a blocking read behind.
            approver.or_else(|| {
                std::io::stdin().is_terminal().then(|| {
                    Arc::new(ChatApprover {
                        lines: Lines::spawn(),
                        who: local_user(),
                    }) as Arc<dyn Approver>
                })
            })
        };
        let interactive = approver.is_some();
        let store = toolgate_app::stores::Stores::open(settings)
            .await?
            .history();
        let id = match &args.session {
            Some(id) => id.clone(),
            None => new_session_id(prefix),
        };
        let history = store
            .load(&id)
            .await?
            .map(|s| s.messages)
            .unwrap_or_default();
        let tool_choice: ToolChoice = args.tool_choice.parse().map_err(anyhow::Error::msg)?;
        let options = RuntimeOptions::command()
            .with_approver(approver)
            .with_rag(true);
        let runtime = Runtime::open(settings, options).await?;
        let gateway = Arc::clone(runtime.gateway());
        if let ToolChoice::Tool(name) = &tool_choice
            && !gateway.catalog().has(name)
        {
            runtime.shutdown().await?;
            anyhow::bail!("--tool-choice {name}: no such tool (see `toolgate tools list`)");
        }
        let options = AgentOptions {
            session_id: id.clone().into(),
            role: settings.role.clone().into(),
            principal: format!("agent:{}", local_user()).into(),
            system: model.system.clone(),
            max_steps: args.max_steps.unwrap_or(model.max_steps),
            stream: model.stream && !args.no_stream,
            tool_choice,
            parallel_tool_calls: model.parallel_tool_calls,
            max_tokens: Some(model.max_tokens),
            // On a terminal the prompt answers; otherwise [approvals] wait decides.
            wait_for_approval: interactive.then_some(true),
            call_keys: None,
        };
        let mut agent = Agent::new(client, Arc::clone(&gateway), options);
        // Over [rag] threshold: search_tools joins the catalog and the model sees retrieved
        // tools (the selector decides per role and per step).
        if let Some(rag) = runtime.rag() {
            if rag.applies_to(&settings.role) {
                note(&format!(
                    "  role `{}` sees {} tools (over [rag] threshold {}): the model is offered the top {} per request plus search_tools",
                    settings.role,
                    rag.search.visible_count(&settings.role),
                    rag.threshold,
                    rag.k
                ));
            }
            agent = agent.with_selector(rag.selector());
        }
        Ok(Session {
            agent,
            runtime,
            store,
            id,
            history,
        })
    }

    /// Stops the MCP servers and flushes the audit log.
    pub async fn close(self) -> anyhow::Result<()> {
        self.runtime.shutdown().await
    }

    pub async fn save(&self) -> anyhow::Result<()> {
        let client = self.agent.client();
        self.store
            .save(&SavedSession {
                session: self.id.clone(),
                provider: client.provider().to_owned(),
                model: client.model().to_owned(),
                messages: self.history.clone(),
            })
            .await?;
        Ok(())
    }

    /// Runs one user message to an answer; Ctrl-C cancels it (and its running calls).
    pub async fn turn(&mut self, text: &str) -> Result<RunOutcome, AgentError> {
        self.history.push(Message::user(text));
        let cancel = CancellationToken::new();
        let watcher = {
            let cancel = cancel.clone();
            tokio::spawn(async move {
                if tokio::signal::ctrl_c().await.is_ok() {
                    cancel.cancel();
                }
            })
        };
        let view = TerminalView::new(self.agent.options().stream);
        let result = self.agent.run(&mut self.history, &cancel, &view).await;
        watcher.abort();
        view.end_line();
        result
    }
}

#[allow(clippy::print_stderr)]
fn note(line: &str) {
    eprintln!("{line}");
}

fn new_session_id(prefix: &str) -> String {
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let mut salt = [0u8; 3];
    let _ = getrandom::fill(&mut salt);
    format!(
        "{prefix}_{millis:x}{:02x}{:02x}{:02x}",
        salt[0], salt[1], salt[2]
    )
}

/// Prints the loop's events: answer text on stdout (as it streams), tool calls, results and
/// approvals on stderr.
pub struct TerminalView {
    stream: bool,
    /// Whether stdout is mid-line (a newline is due before stderr output).
    open_line: Mutex<bool>,
}

#[allow(clippy::print_stderr)]
impl TerminalView {
    pub fn new(stream: bool) -> Self {
        TerminalView {
            stream,
            open_line: Mutex::new(false),
        }
    }

    fn out(&self, text: &str) {
        crate::output::write_stdout(text);
        if let Ok(mut open) = self.open_line.lock() {
            *open = !text.ends_with('\n');
        }
    }

    /// Ends a streamed answer with a newline.
    pub fn end_line(&self) {
        let open = self.open_line.lock().map(|o| *o).unwrap_or(false);
        if open {
            self.out("\n");
        }
    }

    fn err(&self, line: &str) {
        self.end_line();
        eprintln!("{line}");
    }
}

fn short(s: &str, max: usize) -> String {
    let one_line = s.replace('\n', " ");
    if one_line.chars().count() <= max {
        one_line
    } else {
        let cut: String = one_line.chars().take(max).collect();
        format!("{cut}…")
    }
}

impl Observer for TerminalView {
    fn event(&self, event: AgentEvent) {
        match event {
            AgentEvent::Stream(StreamEvent::TextDelta(t)) if self.stream => self.out(&t),
            AgentEvent::Stream(_) => {}
            AgentEvent::ModelTurn { turn, stop, .. } => {
                if !self.stream && !turn.text.is_empty() {
                    self.out(&turn.text);
                    self.end_line();
                }
                if let Some(r) = &turn.refusal {
                    self.err(&format!("  model refused: {r}"));
                } else if stop == StopReason::Refusal {
                    self.err("  model refused");
                }
            }
            AgentEvent::ToolStarted(call) => {
                self.err(&format!(
                    "  → {} {}",
                    call.name,
                    short(&call.arguments, 120)
                ));
            }
            AgentEvent::AwaitingApproval {
                call,
                approval_id,
                requires_confirmation,
            } => {
                let confirm = if requires_confirmation {
                    format!(" --confirm {}", call.name)
                } else {
                    String::new()
                };
                self.err(&format!(
                    "  ⏸ {} waits for approval {approval_id} (toolgate approvals approve {approval_id}{confirm})",
                    call.name
                ));
            }
            AgentEvent::ToolFinished { call, envelope } => {
                let line = match (&envelope.error, &envelope.truncated) {
                    (Some(e), _) => {
                        format!("  ✗ {}: {}: {}", call.name, e.code, short(&e.message, 160))
                    }
                    (None, Some(t)) => format!(
                        "  ✓ {} ({} of {} bytes shown{})",
                        call.name,
                        t.returned_bytes,
                        t.total_bytes,
                        t.result_id
                            .as_deref()
                            .map(|id| format!(", the rest as {id}"))
                            .unwrap_or_default()
                    ),
                    (None, None) => format!("  ✓ {}", call.name),
                };
                self.err(&line);
            }
        }
    }
}

/// The exit status for how a task ended, with a line on stderr when it is not plain success.
#[allow(clippy::print_stderr)]
pub fn report(result: &Result<RunOutcome, AgentError>) -> i32 {
    match result {
        Ok(out) => match &out.stop {
            StopReason::EndTurn | StopReason::StopSequence => 0,
            StopReason::MaxTokens => {
                eprintln!(
                    "toolgate: the answer was cut at the output token cap ([model] max_tokens)"
                );
                2
            }
            StopReason::Refusal => {
                eprintln!("toolgate: the model refused the task");
                2
            }
            StopReason::ContentFilter => {
                eprintln!("toolgate: the provider's content filter stopped the answer");
                2
            }
            StopReason::ToolUse | StopReason::Other(_) => {
                eprintln!("toolgate: the model stopped: {}", out.stop);
                2
            }
        },
        Err(AgentError::Cancelled) => {
            eprintln!("toolgate: cancelled");
            130
        }
        Err(e @ AgentError::StepLimit { .. }) => {
            eprintln!("toolgate: {e}");
            2
        }
        Err(AgentError::Model(e)) => {
            eprintln!("toolgate: error: {e}");
            1
        }
        Err(e @ AgentError::Checkpoint(_)) => {
            eprintln!("toolgate: error: {e}");
            1
        }
    }
}
