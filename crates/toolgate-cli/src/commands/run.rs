//! `toolgate run "TASK"`: one task through the agent loop. The answer streams to stdout; tool
//! calls, approvals and problems go to stderr. Exit status: 0 the model answered; 1 a fatal
//! error (no `[model]`, the model server failed); 2 the task did not finish (step limit,
//! refusal, output cut at max_tokens); 130 cancelled with Ctrl-C.

use anyhow::Context;
use toolgate_app::Config;

use crate::cli::RunArgs;
use crate::session::{Session, report};

#[allow(clippy::print_stderr)]
pub async fn run(settings: &Config, args: RunArgs) -> anyhow::Result<i32> {
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
    session.save().await?;
    session.close().await?;
    Ok(report(&result))
}
