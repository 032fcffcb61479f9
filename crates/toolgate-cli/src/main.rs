//! `toolgate`: the command line over the gateway. Wiring and printing only; every decision
//! is made in the library crates.
//!
//! Exit status: 0 success; 1 a fatal error (bad flags, unreadable config, unwritable data
//! dir); 2 a call failed (the envelope says why); 3 a call needs approval; 4 `audit verify`
//! found tampering. A closed stdout (`| head`, `| grep -q`) is not an error: output stops
//! quietly and the status is the command's own (see `output`).

#![allow(clippy::print_stderr)]
// Doc comments on the clap types are `--help` text, not rustdoc: `[default: …]` and
// `<workspace>` are meant literally.
#![allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]
#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)
)]

mod cli;
mod commands;
mod diff;
mod lines;
mod output;
mod prompt;
mod session;
mod user;

use clap::Parser;

use crate::cli::{Cli, Command};
use toolgate_app::Config;

/// mimalloc rather than glibc's malloc: every call allocates on the caller's thread what the
/// audit writer and the span exporter free on theirs, and glibc's arenas contend on exactly
/// that (the pipeline benchmark: p50 8.3 µs instead of 9.9 µs; the tracing cost per call
/// +2.5 µs instead of +3.1 µs; docs/benchmarks.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    toolgate_tools::sandbox::run_helper_if_invoked();
    // Descriptors the caller left open (`7</etc/shadow`) reach no child toolgate starts —
    // the browser, a model's shell, an MCP server — whatever path spawns it.
    toolgate_tools::sandbox::close_inherited_descriptors();
    // Bad flags are a fatal error (1), not clap's usage code 2, which here means "the call
    // failed"; `--help` and `--version` print to stdout and succeed.
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 1 } else { 0 };
            // Printing can only fail on a closed stream, where nothing is left to tell.
            let _ = e.print();
            std::process::exit(code);
        }
    };
    init_logs(cli.global.log_format);
    let code = match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("toolgate: error: {e:#}");
            1
        }
    };
    std::process::exit(output::finish(code));
}

/// Log lines on stderr, at `TOOLGATE_LOG`'s level (default `warn`). JSON lines carry no
/// colour; text lines only at a terminal.
fn init_logs(format: cli::LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("TOOLGATE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let logs = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(filter);
    match format {
        cli::LogFormat::Json => logs
            .json()
            .flatten_event(true)
            .with_current_span(false)
            .with_span_list(false)
            .with_ansi(false)
            .init(),
        cli::LogFormat::Text => logs.with_ansi(log_colours()).init(),
    }
}

/// Colour in log lines only for a person at a terminal: never into a pipe or a file, and
/// never when `NO_COLOR` is set to anything (<https://no-color.org>).
fn log_colours() -> bool {
    use std::io::IsTerminal;
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

fn run(cli: Cli) -> anyhow::Result<i32> {
    let settings = Config::resolve(&cli.global.overrides())?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        match cli.command {
            Command::Tools(cmd) => commands::tools::run(&settings, cmd).await,
            Command::Call(args) => commands::call::run(&settings, args).await,
            Command::Approvals(cmd) => commands::approvals::run(&settings, cmd).await,
            Command::Audit(cmd) => commands::audit::run(&settings, cmd).await,
            Command::Config(cmd) => commands::config::run(&settings, cmd),
            Command::Policy(cmd) => commands::policy::run(&settings, cmd),
            Command::Serve(args) => commands::serve::run(&settings, args).await,
            Command::Doctor(args) => commands::doctor::run(&settings, args).await,
            Command::Token(cmd) => commands::token::run(&settings, cmd).await,
            Command::Run(args) => commands::run::run(&settings, args).await,
            Command::Chat(args) => commands::chat::run(&settings, args).await,
            Command::Mcp(cmd) => commands::mcp::run(&settings, cmd).await,
            Command::Eval(cmd) => commands::eval::run(&settings, cmd).await,
            Command::Rag(cmd) => commands::rag_model::run(&settings, cmd).await,
            Command::Store(cmd) => commands::store::run(&settings, cmd).await,
        }
    })
}
