//! Markdown tables from the JSON lines of `toolgate-loadgen run`: one table per file (one
//! repetition of the whole matrix), the throughput ratios against the baseline label at each
//! concurrency, and the target check; with several files, a summary of medians.

use std::fmt::Write as _;

use crate::run::RunResult;

/// The target: this many times the baseline's calls/s …
pub const TARGET_RATIO: f64 = 10.0;
/// … with p99 under this many µs …
pub const TARGET_P99_US: u64 = 10_000;
/// … at this concurrency …
pub const TARGET_CONCURRENCY: usize = 16;
/// … for toolgate's own rows (labels with this prefix). Other rows, such as the baseline
/// server reached *through* toolgate, get their ratio without the target check.
pub const TARGET_LABEL_PREFIX: &str = "toolgate-";

/// One repetition: its name (the file) and its results.
#[derive(Debug, Clone)]
pub struct Repetition {
    pub name: String,
    pub results: Vec<RunResult>,
}

pub fn render(repetitions: &[Repetition], baseline: &str) -> String {
    let mut out = String::new();
    for repetition in repetitions {
        let _ = writeln!(out, "#### {}\n", repetition.name);
        out.push_str(&table(&repetition.results));
        out.push('\n');
        out.push_str(&ratios(&repetition.results, baseline));
        out.push('\n');
    }
    if repetitions.len() > 1 {
        let _ = writeln!(out, "#### median of {} runs\n", repetitions.len());
        let medians = medians(repetitions);
        out.push_str(&table(&medians));
        out.push('\n');
        out.push_str(&ratios(&medians, baseline));
    }
    out
}

fn table(results: &[RunResult]) -> String {
    let mut out = String::from(
        "| target | C | calls/s | p50 ms | p90 ms | p99 ms | max ms | server CPU µs/call | RSS MiB before → after (peak) | errors |\n\
         |---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n",
    );
    for r in results {
        let ms = |pick: fn(&crate::stats::Latency) -> u64| {
            r.latency.as_ref().map_or_else(
                || "–".to_owned(),
                |l| format!("{:.2}", pick(l) as f64 / 1000.0),
            )
        };
        let mib = |kib: u64| format!("{:.1}", kib as f64 / 1024.0);
        let memory = match (&r.memory_before, &r.memory_after) {
            (Some(before), Some(after)) => format!(
                "{} → {} ({})",
                mib(before.rss_kib),
                mib(after.rss_kib),
                mib(after.hwm_kib)
            ),
            _ => "–".to_owned(),
        };
        let cpu = r
            .server_cpu_us_per_call
            .map_or_else(|| "–".to_owned(), |us| format!("{us:.0}"));
        let _ = writeln!(
            out,
            "| {} | {} | {:.0} | {} | {} | {} | {} | {} | {} | {} |",
            r.label,
            r.concurrency,
            r.calls_per_sec,
            ms(|l| l.p50_us),
            ms(|l| l.p90_us),
            ms(|l| l.p99_us),
            ms(|l| l.max_us),
            cpu,
            memory,
            r.errors
        );
    }
    out
}

fn ratios(results: &[RunResult], baseline: &str) -> String {
    let mut out = String::new();
    let mut concurrencies: Vec<usize> = results.iter().map(|r| r.concurrency).collect();
    concurrencies.sort_unstable();
    concurrencies.dedup();
    for c in concurrencies {
        let Some(base) = results
            .iter()
            .find(|r| r.label == baseline && r.concurrency == c)
        else {
            continue;
        };
        for r in results
            .iter()
            .filter(|r| r.label != baseline && r.concurrency == c)
        {
            let ratio = r.calls_per_sec / base.calls_per_sec;
            let _ = write!(out, "- C={c}: {} / {baseline} = {ratio:.1}×", r.label);
            if c == TARGET_CONCURRENCY && r.label.starts_with(TARGET_LABEL_PREFIX) {
                let p99 = r.latency.map_or(u64::MAX, |l| l.p99_us);
                let met = ratio >= TARGET_RATIO && p99 < TARGET_P99_US && r.errors == 0;
                let _ = write!(
                    out,
                    " — target (≥{TARGET_RATIO}×, p99 < {} ms): {}",
                    TARGET_P99_US / 1000,
                    if met { "met" } else { "MISSED" }
                );
            }
            out.push('\n');
        }
    }
    out
}

/// Per label and concurrency, in the first repetition's order: the median calls/s and
/// median percentiles over the repetitions, the memory of the median-throughput run, and
/// the sum of errors.
fn medians(repetitions: &[Repetition]) -> Vec<RunResult> {
    let Some(first) = repetitions.first() else {
        return Vec::new();
    };
    first
        .results
        .iter()
        .map(|shape| {
            let mut runs: Vec<&RunResult> = repetitions
                .iter()
                .flat_map(|rep| &rep.results)
                .filter(|r| r.label == shape.label && r.concurrency == shape.concurrency)
                .collect();
            runs.sort_by(|a, b| a.calls_per_sec.total_cmp(&b.calls_per_sec));
            let middle = runs[runs.len() / 2];
            let latency = |pick: fn(&crate::stats::Latency) -> u64| {
                let mut values: Vec<u64> = runs
                    .iter()
                    .filter_map(|r| r.latency.map(|l| pick(&l)))
                    .collect();
                values.sort_unstable();
                values.get(values.len() / 2).copied()
            };
            let latency = match (
                latency(|l| l.p50_us),
                latency(|l| l.p90_us),
                latency(|l| l.p99_us),
                latency(|l| l.max_us),
                latency(|l| l.mean_us),
            ) {
                (Some(p50_us), Some(p90_us), Some(p99_us), Some(max_us), Some(mean_us)) => {
                    Some(crate::stats::Latency {
                        p50_us,
                        p90_us,
                        p99_us,
                        max_us,
                        mean_us,
                    })
                }
                _ => None,
            };
            RunResult {
                latency,
                errors: runs.iter().map(|r| r.errors).sum(),
                failures: Vec::new(),
                ..middle.clone()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::Memory;
    use crate::stats::Latency;

    fn result(label: &str, c: usize, calls_per_sec: f64, p99_us: u64) -> RunResult {
        RunResult {
            label: label.into(),
            protocol: "mcp".into(),
            tool: "echo".into(),
            concurrency: c,
            calls: (calls_per_sec * 10.0) as u64,
            errors: 0,
            seconds: 10.0,
            calls_per_sec,
            latency: Some(Latency {
                p50_us: p99_us / 2,
                p90_us: p99_us * 3 / 4,
                p99_us,
                max_us: p99_us * 2,
                mean_us: p99_us / 2,
            }),
            memory_before: Some(Memory {
                rss_kib: 10240,
                hwm_kib: 10240,
            }),
            memory_after: Some(Memory {
                rss_kib: 12288,
                hwm_kib: 13312,
            }),
            server_cpu_us_per_call: Some(1e6 / calls_per_sec),
            loadgen_cpu_us_per_call: None,
            failures: Vec::new(),
        }
    }

    #[test]
    fn one_repetition_renders_table_and_ratios() {
        let rep = Repetition {
            name: "run 1".into(),
            results: vec![
                result("toolgate-mcp", 16, 5000.0, 4_000),
                result("python-mcp", 16, 400.0, 60_000),
                result("toolgate-mcp", 1, 900.0, 2_500),
                result("python-mcp", 1, 300.0, 5_000),
            ],
        };
        assert_eq!(
            render(&[rep], "python-mcp"),
            "#### run 1\n\n\
             | target | C | calls/s | p50 ms | p90 ms | p99 ms | max ms | server CPU µs/call | RSS MiB before → after (peak) | errors |\n\
             |---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n\
             | toolgate-mcp | 16 | 5000 | 2.00 | 3.00 | 4.00 | 8.00 | 200 | 10.0 → 12.0 (13.0) | 0 |\n\
             | python-mcp | 16 | 400 | 30.00 | 45.00 | 60.00 | 120.00 | 2500 | 10.0 → 12.0 (13.0) | 0 |\n\
             | toolgate-mcp | 1 | 900 | 1.25 | 1.88 | 2.50 | 5.00 | 1111 | 10.0 → 12.0 (13.0) | 0 |\n\
             | python-mcp | 1 | 300 | 2.50 | 3.75 | 5.00 | 10.00 | 3333 | 10.0 → 12.0 (13.0) | 0 |\n\
             \n\
             - C=1: toolgate-mcp / python-mcp = 3.0×\n\
             - C=16: toolgate-mcp / python-mcp = 12.5× — target (≥10×, p99 < 10 ms): met\n\
             \n"
        );
    }

    #[test]
    fn a_row_through_toolgate_gets_its_ratio_without_the_target() {
        let rep = Repetition {
            name: "run 1".into(),
            results: vec![
                result("python-mcp", 16, 400.0, 60_000),
                result("federated-python-mcp", 16, 300.0, 70_000),
            ],
        };
        let text = render(&[rep], "python-mcp");
        assert!(
            text.contains("- C=16: federated-python-mcp / python-mcp = 0.8×\n"),
            "{text}"
        );
        assert!(!text.contains("target (≥"), "{text}");
    }

    #[test]
    fn medians_take_the_middle_run_and_sum_errors() {
        let mut slow = result("toolgate-v1", 16, 1000.0, 30_000);
        slow.errors = 2;
        let reps: Vec<Repetition> = [
            slow,
            result("toolgate-v1", 16, 3000.0, 5_000),
            result("toolgate-v1", 16, 2000.0, 9_000),
        ]
        .into_iter()
        .enumerate()
        .map(|(i, r)| Repetition {
            name: format!("run {i}"),
            results: vec![r],
        })
        .collect();
        let mut expected = result("toolgate-v1", 16, 2000.0, 9_000);
        expected.errors = 2;
        assert_eq!(medians(&reps), vec![expected]);
    }
}
