//! `toolgate chat`: a conversation on the terminal. Each line is a task for the agent loop;
//! answers stream to stdout, tool calls and approval prompts appear inline on stderr. The
//! history is saved after every turn, so `--session ID` resumes it. Ctrl-C cancels the
//! running turn; at the prompt it (or Ctrl-D, `/exit`) ends the conversation.
//!
//! One thread reads stdin for the whole chat and hands out lines: the next task and the
//! answers to approval prompts come from the same source, so a prompt abandoned by a
//! cancelled turn leaves no reader behind to swallow the next line.

use std::io::{BufRead, Write};
use std::sync::Arc;

use anyhow::Context;
use async_trait::async_trait;
use clap::Args;
use tokio::sync::{Mutex, mpsc};
use toolgate_gateway::approve::{Approver, ApproverAnswer};
use toolgate_store::approvals::ApprovalRequest;

use crate::commands::local_user;
use crate::commands::run::{AgentArgs, Session, report};
use crate::prompt::{Dialogue, Step};
use crate::settings::Settings;

#[derive(Debug, Args)]
pub struct ChatArgs {
    #[command(flatten)]
    pub agent: AgentArgs,
}

/// The lines of stdin, read by one thread for the whole command.
pub struct Lines {
    rx: Mutex<mpsc::Receiver<String>>,
}

impl Lines {
    /// A plain thread, not a blocking task: a read still pending at exit must not hold up
    /// the runtime's shutdown.
    pub fn spawn() -> Arc<Lines> {
        let (tx, rx) = mpsc::channel(16);
        std::thread::spawn(move || {
            for line in std::io::stdin().lock().lines() {
                let Ok(line) = line else { break };
                if tx.blocking_send(line.trim().to_owned()).is_err() {
                    break;
                }
            }
        });
        Arc::new(Lines { rx: Mutex::new(rx) })
    }
}

/// Approval prompts inline in the conversation, answered from the chat's own input; parallel
/// calls ask one after another.
pub struct ChatApprover {
    pub lines: Arc<Lines>,
    pub who: String,
}

#[allow(clippy::print_stderr)]
fn ask_prompt(text: &str) {
    eprint!("{text}");
    let _ = std::io::stderr().flush();
}

#[async_trait]
impl Approver for ChatApprover {
    #[allow(clippy::print_stderr)]
    async fn ask(&self, r: &ApprovalRequest) -> Option<ApproverAnswer> {
        let mut lines = self.lines.rx.lock().await;
        eprintln!(
            "  approval needed: {} ({} risk)  [{}]",
            r.tool, r.risk, r.id
        );
        let args =
            serde_json::to_string_pretty(&toolgate_store::approvals::visible_value(&r.arguments))
                .unwrap_or_default();
        // Whitespace runs and invisible characters are shown as ⟨…⟩ markers (issue 12, item 2).
        for line in args.lines() {
            eprintln!("  │ {line}");
        }
        let mut dialogue = Dialogue::new(r, self.who.clone(), "denied in the chat");
        let mut prompt = dialogue.prompt();
        loop {
            ask_prompt(&prompt);
            match dialogue.answer(&lines.recv().await?) {
                Step::Ask(next) => prompt = next,
                Step::Done(answer) => return Some(answer),
            }
        }
    }
}

/// The next line, or `None` at the end of input or on Ctrl-C.
async fn next_line(lines: &Lines) -> Option<String> {
    let mut rx = lines.rx.lock().await;
    tokio::select! {
        line = rx.recv() => line,
        _ = tokio::signal::ctrl_c() => None,
    }
}

#[allow(clippy::print_stderr)]
pub async fn run(settings: &Settings, args: ChatArgs) -> anyhow::Result<i32> {
    let lines = Lines::spawn();
    let approver = Arc::new(ChatApprover {
        lines: Arc::clone(&lines),
        who: local_user(),
    });
    let mut session = Session::open(settings, &args.agent, "chat", Some(approver)).await?;
    let client = session.agent.client();
    eprintln!(
        "toolgate chat · session {} · {} via {} · role {}",
        session.id,
        client.model(),
        client.provider(),
        settings.role
    );
    if !session.history.is_empty() {
        eprintln!("  resumed: {} earlier messages", session.history.len());
    }
    eprintln!("  Ctrl-C cancels a turn; Ctrl-D or /exit ends the chat.");
    let mut last = 0;
    loop {
        ask_prompt("you> ");
        let Some(line) = next_line(&lines).await else {
            break;
        };
        match line.as_str() {
            "" => continue,
            "/exit" | "/quit" => break,
            _ => {}
        }
        let result = session.turn(&line).await;
        last = report(&result);
        session.save().context("saving the conversation")?;
    }
    eprintln!();
    let id = session.id.clone();
    session.close().await?;
    eprintln!("  conversation saved: toolgate chat --session {id}");
    Ok(if last == 130 { 0 } else { last })
}
