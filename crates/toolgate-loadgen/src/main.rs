//! `toolgate-loadgen`: a closed-loop load generator for `toolgate serve` and, for
//! comparison, any MCP Streamable HTTP server — separate from the server so its cost is
//! its own, and written in Rust so the client is not the bottleneck.
//!
//! ```sh
//! toolgate-loadgen run --url http://127.0.0.1:8765/mcp --protocol mcp --tool read_file \
//!     --arguments '{"path":"hello.txt"}' --concurrency 1,16,64 --pid "$SERVER_PID" \
//!     --label toolgate-mcp >> results.jsonl
//! toolgate-loadgen report --baseline python-mcp results.jsonl
//! ```
//! `scripts/bench-serve.sh` runs the whole matrix (toolgate over MCP and /v1, the Python
//! SDK's server) and prints the tables. `toolgate-loadgen mcp-client -- COMMAND ARGS…`
//! measures the other direction, toolgate as an MCP client ([`mcp_client`];
//! `scripts/bench-mcp-client.sh`).
//!
//! # Layout
//! - [`endpoint`]: the URL; [`connection`]: one keep-alive HTTP/1.1 connection per worker.
//! - [`protocol`]: MCP sessions and `tools/call`, `POST /v1/calls`, checking every answer.
//! - [`answer`]: the JSON-RPC answer inside a JSON or SSE body.
//! - [`run`]: one closed-loop run at one concurrency; [`stats`]: percentiles;
//!   [`process`]: the server's RSS and CPU time from /proc.
//! - [`report`]: the markdown tables and ratios.
//!
//! Any failed call fails the run: the exit status is 1 and the first failures are printed.
#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)
)]

mod answer;
mod connection;
mod endpoint;
mod error;
mod mcp_client;
mod process;
mod protocol;
mod report;
mod run;
mod stats;

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Args, Parser, Subcommand};

use crate::endpoint::Endpoint;
use crate::protocol::{CallTemplate, Protocol};
use crate::report::Repetition;
use crate::run::{RunPlan, RunResult, Sample};

#[derive(Debug, Parser)]
#[command(
    version,
    about = "Closed-loop load generator for toolgate serve and MCP servers"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Load one server at each concurrency; one JSON line per concurrency on stdout.
    Run(RunArgs),
    /// Markdown tables and ratios from the JSON lines files of `run` (one file per repetition).
    Report(ReportArgs),
    /// toolgate as an MCP *client*: `echo` of a stdio server through a bare rmcp client, the
    /// gateway (buffered and durable audit) and the Python SDK's client, side by side.
    McpClient(mcp_client::McpClientArgs),
}

#[derive(Debug, Args)]
struct RunArgs {
    /// The MCP endpoint (http://HOST:PORT/mcp) or, for --protocol v1, the server's base URL;
    /// repeat it to spread the workers over several servers (replicas), round-robin.
    #[arg(long, required = true)]
    url: Vec<String>,
    #[arg(long, value_enum)]
    protocol: Protocol,
    /// The tool every call calls.
    #[arg(long)]
    tool: String,
    /// Its arguments, a JSON object.
    #[arg(long, default_value = "{}")]
    arguments: String,
    /// Concurrencies to run one after the other (closed-loop workers, one connection each).
    #[arg(long, value_delimiter = ',', default_value = "1,16,64")]
    concurrency: Vec<usize>,
    /// Measured time per concurrency.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    duration: Duration,
    /// Unmeasured calls before it.
    #[arg(long, default_value = "2s", value_parser = humantime::parse_duration)]
    warmup: Duration,
    /// The server's process id, to report its RSS (VmRSS, VmHWM).
    #[arg(long)]
    pid: Option<u32>,
    /// The name of this target in the report.
    #[arg(long)]
    label: String,
    /// Write every measured call (`start_us latency_us`, start order) to
    /// `DIR/<label>-c<concurrency>.tsv`, to see when the slow calls happened.
    #[arg(long, value_name = "DIR")]
    trace: Option<PathBuf>,
    /// Runtime threads of the generator (1: one thread, leaving the other cores to the server).
    #[arg(long, default_value_t = 1)]
    threads: usize,
}

#[derive(Debug, Args)]
struct ReportArgs {
    /// The label the others are compared with.
    #[arg(long)]
    baseline: String,
    /// JSON lines files written by `run`, one per repetition of the matrix.
    #[arg(required = true)]
    files: Vec<PathBuf>,
}

fn main() -> ExitCode {
    let outcome = match Cli::parse().command {
        Command::Run(args) => run_command(args),
        Command::Report(args) => report_command(args),
        Command::McpClient(args) => mcp_client::command(args),
    };
    match outcome {
        Ok(code) => code,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "toolgate-loadgen: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run_command(args: RunArgs) -> anyhow::Result<ExitCode> {
    let arguments: serde_json::Value =
        serde_json::from_str(&args.arguments).context("--arguments is not JSON")?;
    if !arguments.is_object() {
        bail!("--arguments must be a JSON object");
    }
    if args.concurrency.contains(&0) {
        bail!("--concurrency values must be at least 1");
    }
    let templates = args
        .url
        .iter()
        .map(|url| {
            Ok(CallTemplate {
                protocol: args.protocol,
                endpoint: Endpoint::parse(url)?,
                tool: args.tool.clone(),
                arguments: arguments.clone(),
            })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let runtime = if args.threads <= 1 {
        tokio::runtime::Builder::new_current_thread()
    } else {
        let mut builder = tokio::runtime::Builder::new_multi_thread();
        builder.worker_threads(args.threads);
        builder
    }
    .enable_all()
    .build()
    .context("starting the runtime")?;

    let mut stdout = std::io::stdout().lock();
    let mut stderr = std::io::stderr().lock();
    let mut failed = false;
    for &concurrency in &args.concurrency {
        let plan = RunPlan {
            label: args.label.clone(),
            templates: templates.clone(),
            concurrency,
            warmup: args.warmup,
            duration: args.duration,
            server_pid: args.pid,
        };
        let (result, samples) = runtime
            .block_on(run::run(&plan))
            .with_context(|| format!("{} at concurrency {concurrency}", args.label))?;
        if let Some(dir) = &args.trace {
            let path = dir.join(format!("{}-c{concurrency}.tsv", args.label));
            write_trace(&path, &samples)
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
        writeln!(stdout, "{}", serde_json::to_string(&result)?)?;
        stdout.flush()?;
        writeln!(stderr, "{}", progress_line(&result))?;
        if result.errors > 0 {
            failed = true;
            writeln!(
                stderr,
                "FAILED: {} of the calls failed; first failures:",
                result.errors
            )?;
            for failure in &result.failures {
                writeln!(stderr, "  {failure}")?;
            }
        }
    }
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn write_trace(path: &std::path::Path, samples: &[Sample]) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
    for s in samples {
        writeln!(out, "{}\t{}", s.start_us, s.latency_us)?;
    }
    out.flush()
}

fn progress_line(r: &RunResult) -> String {
    let p =
        |us: Option<u64>| us.map_or("–".to_owned(), |us| format!("{:.2}", us as f64 / 1000.0));
    let cpu = |us: Option<f64>| us.map_or("–".to_owned(), |us| format!("{us:.0}"));
    format!(
        "{} C={}: {:.0} calls/s, p50 {} ms, p99 {} ms, CPU µs/call server {} generator {}, {} errors",
        r.label,
        r.concurrency,
        r.calls_per_sec,
        p(r.latency.map(|l| l.p50_us)),
        p(r.latency.map(|l| l.p99_us)),
        cpu(r.server_cpu_us_per_call),
        cpu(r.loadgen_cpu_us_per_call),
        r.errors
    )
}

fn report_command(args: ReportArgs) -> anyhow::Result<ExitCode> {
    let mut repetitions = Vec::new();
    for file in &args.files {
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("cannot read {}", file.display()))?;
        let results = text
            .lines()
            .filter(|line| !line.trim().is_empty())
            .enumerate()
            .map(|(i, line)| {
                serde_json::from_str::<RunResult>(line)
                    .with_context(|| format!("{} line {}: not a run result", file.display(), i + 1))
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        let name = file.file_stem().map_or_else(
            || file.display().to_string(),
            |s| s.to_string_lossy().into_owned(),
        );
        repetitions.push(Repetition { name, results });
    }
    let mut stdout = std::io::stdout().lock();
    write!(stdout, "{}", report::render(&repetitions, &args.baseline))?;
    Ok(ExitCode::SUCCESS)
}
