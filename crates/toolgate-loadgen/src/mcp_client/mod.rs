//! `toolgate-loadgen mcp-client`: the MCP *client* side of toolgate under load (issue 3's
//! benchmark). One stdio MCP server (server-everything by default) is called with `echo`,
//! one target after another in the same run, sequentially and C-way concurrently:
//!
//! - `rmcp-direct`: a bare rmcp client over the child's stdio — the floor;
//! - `gateway-buffered`: `Gateway::call` of `mcp__{server}__echo` in process, the MCP tool
//!   coming from an `McpHub` — the whole pipeline, audit queued (`Durability::Buffered`);
//! - `gateway-durable`: the same with toolgate's default durable audit (fsync per answer);
//! - `python-mcp`: the Python SDK's client (`peers/mcp_echo_client.py`) over its own child.
//!
//! The difference between `gateway-buffered` and `rmcp-direct` is what the gateway path adds.

mod targets;

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Args;
use serde::{Deserialize, Serialize};

use crate::stats::{Latency, summarize};

#[derive(Debug, Args)]
pub struct McpClientArgs {
    /// Measured calls per target and concurrency.
    #[arg(long, default_value_t = 5000)]
    calls: usize,
    /// Unmeasured calls before them.
    #[arg(long, default_value_t = 500)]
    warmup: usize,
    /// Concurrencies (calls in flight) to run one after the other.
    #[arg(long, value_delimiter = ',', default_value = "1,16")]
    concurrency: Vec<usize>,
    /// The Python interpreter with the `mcp` SDK (the repo's .venv); omit to skip python-mcp.
    #[arg(long)]
    python: Option<PathBuf>,
    /// The Python client script (crates/toolgate-loadgen/peers/mcp_echo_client.py).
    #[arg(long)]
    python_client: Option<PathBuf>,
    /// The stdio server: the command and its arguments (after `--`).
    #[arg(required = true, last = true)]
    server: Vec<String>,
}

/// One target at one concurrency.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ClientResult {
    pub target: String,
    pub concurrency: usize,
    pub calls: usize,
    pub seconds: f64,
    pub calls_per_sec: f64,
    pub p50_us: u64,
    pub p99_us: u64,
    pub errors: usize,
}

/// Something that can call `echo` once.
#[async_trait::async_trait]
pub trait EchoCaller: Send + Sync {
    /// One `echo` call; `Err` with the reason when it did not echo.
    async fn echo(&self, i: usize) -> Result<(), String>;
}

pub fn command(args: McpClientArgs) -> anyhow::Result<std::process::ExitCode> {
    if args.concurrency.contains(&0) {
        bail!("--concurrency values must be at least 1");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the runtime")?;
    let mut results = Vec::new();
    let mut stdout = std::io::stdout().lock();
    let mut failed = false;
    let mut record = |r: ClientResult, out: &mut std::io::StdoutLock<'_>| -> anyhow::Result<()> {
        writeln!(out, "{}", serde_json::to_string(&r)?)?;
        writeln!(
            std::io::stderr(),
            "{} C={}: {:.0} calls/s, p50 {} µs, p99 {} µs, {} errors",
            r.target,
            r.concurrency,
            r.calls_per_sec,
            r.p50_us,
            r.p99_us,
            r.errors
        )?;
        failed |= r.errors > 0;
        results.push(r);
        Ok(())
    };
    runtime.block_on(async {
        let targets: Vec<(&str, Arc<dyn EchoCaller>)> = vec![
            ("rmcp-direct", targets::rmcp_direct(&args.server).await?),
            (
                "gateway-buffered",
                targets::gateway(&args.server, toolgate_audit::Durability::Buffered).await?,
            ),
            (
                "gateway-durable",
                targets::gateway(&args.server, toolgate_audit::Durability::Durable).await?,
            ),
        ];
        for &c in &args.concurrency {
            for (name, target) in &targets {
                let r = measure(name, Arc::clone(target), c, args.warmup, args.calls).await;
                record(r, &mut stdout)?;
            }
        }
        anyhow::Ok(())
    })?;
    if let (Some(python), Some(script)) = (&args.python, &args.python_client) {
        for &c in &args.concurrency {
            let r = targets::python(python, script, &args.server, c, args.warmup, args.calls)?;
            record(r, &mut stdout)?;
        }
    }
    let _ = writeln!(stdout);
    write!(stdout, "{}", table(&results))?;
    Ok(if failed {
        std::process::ExitCode::FAILURE
    } else {
        std::process::ExitCode::SUCCESS
    })
}

/// `calls` measured calls with `concurrency` in flight, after `warmup` unmeasured ones.
async fn measure(
    name: &str,
    target: Arc<dyn EchoCaller>,
    concurrency: usize,
    warmup: usize,
    calls: usize,
) -> ClientResult {
    for i in 0..warmup {
        let _ = target.echo(i).await;
    }
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let workers: Vec<_> = (0..concurrency)
        .map(|_| {
            let (target, next) = (Arc::clone(&target), Arc::clone(&next));
            tokio::spawn(async move {
                let mut samples = Vec::new();
                let mut errors = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= calls {
                        break;
                    }
                    let t0 = Instant::now();
                    let outcome = target.echo(i).await;
                    samples.push(micros(t0.elapsed()));
                    if let Err(e) = outcome {
                        errors.push(e);
                    }
                }
                (samples, errors)
            })
        })
        .collect();
    let mut samples = Vec::with_capacity(calls);
    let mut errors = Vec::new();
    for w in workers {
        if let Ok((s, e)) = w.await {
            samples.extend(s);
            errors.extend(e);
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    if let Some(first) = errors.first() {
        let _ = writeln!(std::io::stderr(), "{name}: first failure: {first}");
    }
    let latency = summarize(samples).unwrap_or(Latency {
        p50_us: 0,
        p90_us: 0,
        p99_us: 0,
        max_us: 0,
        mean_us: 0,
    });
    ClientResult {
        target: name.to_owned(),
        concurrency,
        calls,
        seconds,
        calls_per_sec: calls as f64 / seconds,
        p50_us: latency.p50_us,
        p99_us: latency.p99_us,
        errors: errors.len(),
    }
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// A markdown table, and per concurrency what the gateway path adds over rmcp-direct.
fn table(results: &[ClientResult]) -> String {
    let mut out = String::from(
        "| target | C | calls/s | p50 µs | p99 µs | errors |\n|---|--:|--:|--:|--:|--:|\n",
    );
    for r in results {
        out.push_str(&format!(
            "| {} | {} | {:.0} | {} | {} | {} |\n",
            r.target, r.concurrency, r.calls_per_sec, r.p50_us, r.p99_us, r.errors
        ));
    }
    let find = |t: &str, c: usize| results.iter().find(|r| r.target == t && r.concurrency == c);
    let mut cs: Vec<usize> = results.iter().map(|r| r.concurrency).collect();
    cs.sort_unstable();
    cs.dedup();
    out.push('\n');
    for c in cs {
        if let (Some(direct), Some(gw)) = (find("rmcp-direct", c), find("gateway-buffered", c)) {
            out.push_str(&format!(
                "C={c}: the gateway path adds {} µs p50 over rmcp-direct",
                gw.p50_us as i64 - direct.p50_us as i64
            ));
            if let Some(py) = find("python-mcp", c) {
                out.push_str(&format!(
                    "; gateway-buffered / python-mcp throughput {:.1}×",
                    gw.calls_per_sec / py.calls_per_sec
                ));
            }
            out.push('\n');
        }
    }
    out
}
