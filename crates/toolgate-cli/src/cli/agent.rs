//! `toolgate run` and `toolgate chat` flags.

use clap::Args;

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

#[derive(Debug, Args)]
pub struct ChatArgs {
    #[command(flatten)]
    pub agent: AgentArgs,
}
