//! `toolgate chat`: a conversation on the terminal. Each line is a task for the agent loop;
//! answers stream to stdout, tool calls and approval prompts appear inline on stderr. The
//! history is saved after every turn, so `--session ID` resumes it. Ctrl-C cancels the
//! running turn; at the prompt it (or Ctrl-D, `/exit`) ends the conversation.

use std::io::{BufRead, Write};

use anyhow::Context;
use clap::Args;

use crate::commands::run::{AgentArgs, Session, report};
use crate::settings::Settings;

#[derive(Debug, Args)]
pub struct ChatArgs {
    #[command(flatten)]
    pub agent: AgentArgs,
}

enum Input {
    Line(String),
    End,
}

/// Reads one line on a blocking thread, so that Ctrl-C at the prompt can end the chat.
async fn read_line() -> Input {
    let read = tokio::task::spawn_blocking(|| {
        let mut line = String::new();
        match std::io::stdin().lock().read_line(&mut line) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(line),
        }
    });
    tokio::select! {
        r = read => match r {
            Ok(Some(line)) => Input::Line(line.trim().to_owned()),
            _ => Input::End,
        },
        _ = tokio::signal::ctrl_c() => Input::End,
    }
}

#[allow(clippy::print_stderr)]
pub async fn run(settings: &Settings, args: ChatArgs) -> anyhow::Result<i32> {
    let mut session = Session::open(settings, &args.agent, "chat").await?;
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
        eprint!("you> ");
        let _ = std::io::stderr().flush();
        let line = match read_line().await {
            Input::End => break,
            Input::Line(l) => l,
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
