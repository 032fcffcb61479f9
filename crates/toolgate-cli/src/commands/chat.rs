//! `toolgate chat`: a conversation on the terminal. Each line is a task for the agent loop;
//! answers stream to stdout, tool calls and approval prompts appear inline on stderr. The
//! history is saved after every turn, so `--session ID` resumes it. Ctrl-C cancels the
//! running turn; at the prompt it (or Ctrl-D, `/exit`) ends the conversation.
//!
//! One thread reads stdin for the whole chat and hands out lines: the next task and the
//! answers to approval prompts come from the same source, so a prompt abandoned by a
//! cancelled turn leaves no reader behind to swallow the next line.

use std::sync::Arc;

use anyhow::Context;
use toolgate_app::Config;

use crate::cli::ChatArgs;
use crate::lines::{ChatApprover, Lines, ask_prompt};
use crate::session::{Session, report};
use crate::user::local_user;

#[allow(clippy::print_stderr)]
pub async fn run(settings: &Config, args: ChatArgs) -> anyhow::Result<i32> {
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
        let Some(line) = lines.next_or_interrupt().await else {
            break;
        };
        match line.as_str() {
            "" => continue,
            "/exit" | "/quit" => break,
            _ => {}
        }
        let result = session.turn(&line).await;
        last = report(&result);
        session.save().await.context("saving the conversation")?;
    }
    eprintln!();
    let id = session.id.clone();
    session.close().await?;
    eprintln!("  conversation saved: toolgate chat --session {id}");
    Ok(if last == 130 { 0 } else { last })
}
