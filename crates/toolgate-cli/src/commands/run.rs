//! `toolgate run "TASK"`: one task through the agent loop. The answer streams to stdout; tool
//! calls, approvals and problems go to stderr. Exit status: 0 the model answered; 1 a fatal
//! error (no `[model]`, the model server failed); 2 the task did not finish (step limit,
//! refusal, output cut at max_tokens); 130 cancelled with Ctrl-C.
//!
//! Also the pieces `chat` shares: the session (model, gateway, history store) and the
//! terminal view of the loop's events.

use std::io::IsTerminal;
use std::sync::{Arc, Mutex};

use anyhow::Context;
use clap::Args;
use tokio_util::sync::CancellationToken;
use toolgate_agent::{
    Agent, AgentError, AgentEvent, AgentOptions, HistoryStore, Message, ModelClient, Observer,
    RunOutcome, SavedSession, StopReason, StreamEvent, ToolChoice,
};
use toolgate_gateway::Gateway;
use toolgate_gateway::approve::Approver;

use crate::app::{McpServers, open_gateway, start_mcp};
use crate::commands::chat::{ChatApprover, Lines};
use crate::commands::local_user;
use crate::settings::Settings;

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The task, in words; `-` reads it from stdin.
    pub task: String,
    #[command(flatten)]
    pub agent: AgentArgs,
}

/// Flags `run` and `chat` share.
#[derive(Debug, Args)]
pub struct AgentArgs {
    /// Conversation id: the audit session of every call; an existing id continues that
    /// conversation [default: a new id, printed on stderr].
    #[arg(long)]
    pub session: Option<String>,
    /// Model name [default: [model] model].
    #[arg(long)]
    pub model: Option<String>,
    /// Model calls per task before giving up [default: [model] max_steps].
    #[arg(long)]
    pub max_steps: Option<u32>,
    /// auto | none | required | a tool name; applies to the first model call of a task.
    #[arg(long, default_value = "auto")]
    pub tool_choice: String,
    /// Wait for the whole answer instead of streaming it.
    #[arg(long)]
    pub no_stream: bool,
    /// Never prompt for approval, even on a terminal: calls that need one wait (with
    /// [approvals] wait) or come back to the model as approval_required.
    #[arg(long)]
    pub no_prompt: bool,
}

/// Everything a conversation needs, opened from the settings.
pub struct Session {
    pub agent: Agent,
    pub gateway: Arc<Gateway>,
    /// The configured MCP servers, whose tools the model sees too.
    hub: Option<toolgate_mcp::McpHub>,
    pub store: HistoryStore,
    pub id: String,
    pub history: Vec<Message>,
}

impl Session {
    /// `approver`: the prompt to use when asking is allowed (`None`: the terminal prompt,
    /// when stdin is a terminal).
    pub async fn open(
        settings: &Settings,
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
        let gateway = Arc::new(open_gateway(settings, approver)?);
        let hub = start_mcp(settings, gateway.catalog(), McpServers::All).await?;
        let store = HistoryStore::new(settings.data_dir.join("sessions"));
        let id = match &args.session {
            Some(id) => id.clone(),
            None => new_session_id(prefix),
        };
        let history = store.load(&id)?.map(|s| s.messages).unwrap_or_default();
        let tool_choice: ToolChoice = args.tool_choice.parse().map_err(anyhow::Error::msg)?;
        if let ToolChoice::Tool(name) = &tool_choice
            && !gateway.catalog().has(name)
        {
            anyhow::bail!("--tool-choice {name}: no such tool (see `toolgate tools list`)");
        }
        let options = AgentOptions {
            session_id: id.clone(),
            role: settings.role.clone(),
            principal: format!("agent:{}", local_user()),
            system: model.system.clone(),
            max_steps: args.max_steps.unwrap_or(model.max_steps),
            stream: model.stream && !args.no_stream,
            tool_choice,
            parallel_tool_calls: model.parallel_tool_calls,
            max_tokens: Some(model.max_tokens),
            // On a terminal the prompt answers; otherwise [approvals] wait decides.
            wait_for_approval: interactive.then_some(true),
        };
        let mut agent = Agent::new(client, Arc::clone(&gateway), options);
        // Over [rag] threshold: search_tools joins the catalog and the model sees retrieved
        // tools (the selector decides per role and per step).
        if let Some(rag) = crate::rag::enable(settings, &gateway)? {
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
            gateway,
            hub,
            store,
            id,
            history,
        })
    }

    /// Flushes the audit log and stops the MCP servers.
    pub async fn close(self) -> anyhow::Result<()> {
        if let Some(hub) = self.hub {
            hub.shutdown().await;
        }
        self.gateway
            .audit()
            .flush()
            .await
            .context("flushing the audit log")
    }

    pub fn save(&self) -> anyhow::Result<()> {
        let client = self.agent.client();
        self.store.save(&SavedSession {
            session: self.id.clone(),
            provider: client.provider().to_owned(),
            model: client.model().to_owned(),
            messages: self.history.clone(),
        })?;
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
    }
}

#[allow(clippy::print_stderr)]
pub async fn run(settings: &Settings, args: RunArgs) -> anyhow::Result<i32> {
    let task = if args.task == "-" {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
            .context("reading the task from stdin")?;
        text
    } else {
        args.task
    };
    if task.trim().is_empty() {
        anyhow::bail!("the task is empty (give it as an argument, or `-` to read it from stdin)");
    }
    let mut session = Session::open(settings, &args.agent, "run", None).await?;
    if args.agent.session.is_none() {
        eprintln!("  session {}", session.id);
    }
    let result = session.turn(&task).await;
    if let Ok(out) = &result {
        eprintln!(
            "  {} model call{} · {} input / {} output tokens",
            out.steps,
            if out.steps == 1 { "" } else { "s" },
            out.usage.input_tokens,
            out.usage.output_tokens
        );
    }
    session.save()?;
    session.close().await?;
    Ok(report(&result))
}
