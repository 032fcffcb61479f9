//! One closed-loop run at concurrency C: C workers, each with its own connection (and MCP
//! session), each sending its next call as soon as the previous one answered.
//!
//! Sequence: read the server's memory → connect every worker → warm up (calls not recorded)
//! → measure for the fixed duration (only calls that start and end inside the window are
//! samples; the server's and the generator's CPU time are read at the window's edges) →
//! read the memory again → close the sessions. Every failed call counts, in the
//! warm-up too; a transport failure also stops its worker.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tokio::task::JoinSet;

use crate::error::LoadError;
use crate::process::{self, Memory};
use crate::protocol::{CallTemplate, Caller, Protocol};
use crate::stats::{Latency, summarize};

/// Longest a single call may take before it counts as failed.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);
/// How many failure messages a result keeps.
const KEPT_FAILURES: usize = 5;

#[derive(Debug, Clone)]
pub struct RunPlan {
    pub label: String,
    /// One per server; workers are spread over them round-robin (replicas behind no load
    /// balancer).
    pub templates: Vec<CallTemplate>,
    pub concurrency: usize,
    pub warmup: Duration,
    pub duration: Duration,
    /// The server process, for its memory; `None` skips it.
    pub server_pid: Option<u32>,
}

/// One measured call: when it started (µs into the window) and how long it took (µs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    pub start_us: u64,
    pub latency_us: u64,
}

/// One run's numbers (a JSON line of `toolgate-loadgen run`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    pub label: String,
    pub protocol: String,
    pub tool: String,
    pub concurrency: usize,
    /// Calls measured (inside the window).
    pub calls: u64,
    /// Failed calls, warm-up included.
    pub errors: u64,
    pub seconds: f64,
    pub calls_per_sec: f64,
    pub latency: Option<Latency>,
    pub memory_before: Option<Memory>,
    pub memory_after: Option<Memory>,
    /// The server's CPU time (all threads, user + system) in the window per measured call.
    pub server_cpu_us_per_call: Option<f64>,
    /// The same for this generator.
    pub loadgen_cpu_us_per_call: Option<f64>,
    /// The first few failure messages.
    pub failures: Vec<String>,
}

struct WorkerTally {
    samples: Vec<Sample>,
    errors: u64,
    failures: Vec<String>,
    caller: Option<Caller>,
}

/// Runs `plan`; returns its result and every measured call, in start order.
pub async fn run(plan: &RunPlan) -> Result<(RunResult, Vec<Sample>), LoadError> {
    let memory_before = plan.server_pid.and_then(|pid| process::memory(pid).ok());
    let mut connecting = JoinSet::new();
    for worker in 0..plan.concurrency {
        let template = plan.templates[worker % plan.templates.len()].clone();
        connecting.spawn(async move { Caller::connect(&template).await });
    }
    let mut callers = Vec::with_capacity(plan.concurrency);
    while let Some(joined) = connecting.join_next().await {
        callers.push(joined.map_err(|e| LoadError::CallFailed(format!("worker: {e}")))??);
    }

    let measure_start = Instant::now() + plan.warmup;
    let measure_end = measure_start + plan.duration;
    let mut workers = JoinSet::new();
    for caller in callers {
        workers.spawn(work(caller, measure_start, measure_end));
    }
    let cpu_window = tokio::spawn(cpu_in_window(plan.server_pid, measure_start, measure_end));
    let mut samples = Vec::new();
    let mut errors = 0;
    let mut failures = Vec::new();
    let mut callers = Vec::new();
    while let Some(joined) = workers.join_next().await {
        let tally = joined.map_err(|e| LoadError::CallFailed(format!("worker: {e}")))?;
        samples.extend(tally.samples);
        errors += tally.errors;
        failures.extend(tally.failures);
        callers.extend(tally.caller);
    }
    failures.truncate(KEPT_FAILURES);
    let (server_cpu, loadgen_cpu) = cpu_window.await.unwrap_or((None, None));
    let memory_after = plan.server_pid.and_then(|pid| process::memory(pid).ok());
    for caller in callers {
        if let Err(e) = caller.close().await {
            errors += 1;
            if failures.len() < KEPT_FAILURES {
                failures.push(format!("closing the session: {e}"));
            }
        }
    }

    let seconds = plan.duration.as_secs_f64();
    let calls = samples.len() as u64;
    samples.sort_unstable_by_key(|s| s.start_us);
    let latencies = samples.iter().map(|s| s.latency_us).collect();
    let per_call = |cpu: Option<Duration>| {
        cpu.filter(|_| calls > 0)
            .map(|cpu| cpu.as_secs_f64() * 1e6 / calls as f64)
    };
    let result = RunResult {
        label: plan.label.clone(),
        protocol: protocol_name(plan.templates[0].protocol).to_owned(),
        tool: plan.templates[0].tool.clone(),
        concurrency: plan.concurrency,
        calls,
        errors,
        seconds,
        calls_per_sec: calls as f64 / seconds,
        latency: summarize(latencies),
        memory_before,
        memory_after,
        server_cpu_us_per_call: per_call(server_cpu),
        loadgen_cpu_us_per_call: per_call(loadgen_cpu),
        failures,
    };
    Ok((result, samples))
}

pub fn protocol_name(protocol: Protocol) -> &'static str {
    match protocol {
        Protocol::Mcp => "mcp",
        Protocol::V1 => "v1",
    }
}

/// CPU time the server and this process used between `start` and `end`.
async fn cpu_in_window(
    server_pid: Option<u32>,
    start: Instant,
    end: Instant,
) -> (Option<Duration>, Option<Duration>) {
    let read = || {
        (
            server_pid.and_then(|pid| process::cpu_time(pid).ok()),
            process::cpu_time(std::process::id()).ok(),
        )
    };
    tokio::time::sleep_until(start.into()).await;
    let (server_before, own_before) = read();
    tokio::time::sleep_until(end.into()).await;
    let (server_after, own_after) = read();
    let used =
        |before: Option<Duration>, after: Option<Duration>| Some(after?.saturating_sub(before?));
    (
        used(server_before, server_after),
        used(own_before, own_after),
    )
}

async fn work(mut caller: Caller, measure_start: Instant, measure_end: Instant) -> WorkerTally {
    let mut tally = WorkerTally {
        samples: Vec::with_capacity(16 * 1024),
        errors: 0,
        failures: Vec::new(),
        caller: None,
    };
    loop {
        let started = Instant::now();
        if started >= measure_end {
            break;
        }
        let outcome = tokio::time::timeout(CALL_TIMEOUT, caller.call()).await;
        let ended = Instant::now();
        // A transport failure or an abandoned request leaves the connection unusable.
        let (failure, fatal) = match outcome {
            Ok(Ok(())) => {
                if started >= measure_start && ended <= measure_end {
                    let micros = |d: Duration| u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
                    tally.samples.push(Sample {
                        start_us: micros(started.duration_since(measure_start)),
                        latency_us: micros(ended.duration_since(started)),
                    });
                }
                continue;
            }
            Ok(Err(e)) => {
                let fatal = matches!(e, LoadError::Http(_) | LoadError::Connect { .. });
                (e, fatal)
            }
            Err(_) => (
                LoadError::CallFailed(format!("no answer within {CALL_TIMEOUT:?}")),
                true,
            ),
        };
        tally.errors += 1;
        if tally.failures.len() < KEPT_FAILURES {
            tally.failures.push(failure.to_string());
        }
        if fatal {
            return tally;
        }
    }
    tally.caller = Some(caller);
    tally
}
