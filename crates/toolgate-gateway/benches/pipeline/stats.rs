//! Latency percentiles and throughput of one measured phase, and the printed table.

use std::time::Duration;

/// Per-call latencies (ns, sorted), the wall time of the phase and the CPU time all threads
/// of the process spent in it.
pub struct Stats {
    sorted_ns: Vec<u64>,
    wall: Duration,
    cpu_ns: u64,
}

impl Stats {
    pub fn new(mut latencies_ns: Vec<u64>, wall: Duration, cpu_ns: u64) -> Self {
        latencies_ns.sort_unstable();
        Stats {
            sorted_ns: latencies_ns,
            wall,
            cpu_ns,
        }
    }

    /// CPU time of the whole process (every thread) per call, in µs.
    pub fn cpu_per_call_us(&self) -> f64 {
        self.cpu_ns as f64 / 1e3 / self.sorted_ns.len().max(1) as f64
    }

    /// The `p`-th percentile (nearest rank) in µs.
    pub fn percentile_us(&self, p: f64) -> f64 {
        let Some(last) = self.sorted_ns.len().checked_sub(1) else {
            return 0.0;
        };
        let rank = ((p / 100.0) * last as f64).round() as usize;
        self.sorted_ns[rank.min(last)] as f64 / 1e3
    }

    pub fn max_us(&self) -> f64 {
        self.sorted_ns.last().copied().unwrap_or(0) as f64 / 1e3
    }

    pub fn calls_per_sec(&self) -> f64 {
        self.sorted_ns.len() as f64 / self.wall.as_secs_f64().max(1e-9)
    }

    pub fn calls(&self) -> usize {
        self.sorted_ns.len()
    }
}

/// One line of the table.
pub struct Row {
    pub label: String,
    pub callers: usize,
    pub stats: Stats,
}

impl Row {
    pub fn new(label: &str, callers: usize, stats: Stats) -> Self {
        Row {
            label: label.to_owned(),
            callers,
            stats,
        }
    }
}

fn find<'a>(rows: &'a [Row], label: &str, callers: usize) -> Option<&'a Row> {
    rows.iter()
        .find(|r| r.label == label && r.callers == callers)
}

pub fn print_table(rows: &[Row]) {
    println!();
    println!(
        "| {:<14} | {:>7} | {:>7} | {:>8} | {:>8} | {:>8} | {:>8} | {:>9} | {:>12} |",
        "scenario",
        "callers",
        "calls",
        "p50 µs",
        "p90 µs",
        "p99 µs",
        "max µs",
        "calls/s",
        "CPU µs/call"
    );
    println!(
        "|{:-<16}|{:->9}|{:->9}|{:->10}|{:->10}|{:->10}|{:->10}|{:->11}|{:->14}|",
        ":", ":", ":", ":", ":", ":", ":", ":", ":"
    );
    for r in rows {
        let s = &r.stats;
        println!(
            "| {:<14} | {:>7} | {:>7} | {:>8.1} | {:>8.1} | {:>8.1} | {:>8.0} | {:>9.0} | {:>12.1} |",
            r.label,
            r.callers,
            s.calls(),
            s.percentile_us(50.0),
            s.percentile_us(90.0),
            s.percentile_us(99.0),
            s.max_us(),
            s.calls_per_sec(),
            s.cpu_per_call_us(),
        );
    }
    println!();
    for mode in ["buffered", "durable"] {
        for callers in [1, 32] {
            if let (Some(g), Some(d)) = (find(rows, mode, callers), find(rows, "direct", callers)) {
                println!(
                    "pipeline overhead, {mode}, {callers} caller(s): p50 {:.1} µs − direct p50 {:.1} µs = {:.1} µs",
                    g.stats.percentile_us(50.0),
                    d.stats.percentile_us(50.0),
                    g.stats.percentile_us(50.0) - d.stats.percentile_us(50.0),
                );
            }
        }
    }
    println!();
    if let (Some(b), Some(d)) = (find(rows, "buffered", 1), find(rows, "direct", 1)) {
        let overhead = b.stats.percentile_us(50.0) - d.stats.percentile_us(50.0);
        println!(
            "target: p50 pipeline overhead, buffered, < 20 µs: {:.1} µs → {}",
            overhead,
            verdict(overhead < 20.0)
        );
    }
    if let Some(r) = find(rows, "durable", 32) {
        let rate = r.stats.calls_per_sec();
        println!(
            "target: durable, 32 callers, ≥ 20000 calls/s: {rate:.0} calls/s → {}",
            verdict(rate >= 20_000.0)
        );
    }
}

fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "MISSED" }
}
