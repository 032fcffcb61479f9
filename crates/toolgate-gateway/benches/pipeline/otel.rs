//! Telemetry in the pipeline (issue 17): the SDK is installed once per process, so these
//! modes run after the others, which measured the pipeline with nothing installed.
//!
//! - `otel_metrics`: what `toolgate serve` does by default — metrics recorded (call
//!   counter, duration histogram) for `/metrics`, no tracer.
//! - `otel_traces`: tracing on, every trace sampled, spans exported in batches over
//!   OTLP/HTTP to a local collector ([`OtlpSink`], which keeps what it receives), plus
//!   metrics. After the phase the sink's spans are counted against the calls made.
//!
//! Only one of the two can run in a process: name it beside `buffered` to read the cost
//! side by side (`TOOLGATE_BENCH_ONLY=buffered,otel_traces`).

use std::sync::Arc;
use std::time::Duration;

use toolgate_audit::Durability;
use toolgate_gateway::policy::PolicyConfig;
use toolgate_telemetry::{Telemetry, TelemetryConfig};
use toolgate_testkit::OtlpSink;

use crate::stats::Row;
use crate::{Plan, READ_TOOL, Target, measure, open_bench_with};

pub async fn run(plan: &Plan, mode: &str, rows: &mut Vec<Row>) {
    let sink = (mode == "otel_traces").then(OtlpSink::start);
    let cfg = TelemetryConfig {
        enabled: sink.is_some(),
        endpoint: sink.as_ref().map(OtlpSink::url),
        sampling: Some(1.0),
        ..TelemetryConfig::default()
    };
    let telemetry = Telemetry::install(&cfg).expect("install telemetry");
    assert_eq!(telemetry.exporting(), sink.is_some());
    let mut bench = open_bench_with(Durability::Buffered, PolicyConfig::default());
    let target = Target::Gateway(Arc::clone(&bench.gateway), READ_TOOL);
    measure(plan, mode, &mut bench, &target, rows).await;
    if let Some(sink) = sink {
        let mode = mode.to_owned();
        tokio::task::spawn_blocking(move || {
            telemetry.flush();
            std::thread::sleep(Duration::from_millis(500));
            let spans = sink
                .spans()
                .iter()
                .filter(|s| s.name == format!("execute_tool {READ_TOOL}"))
                .count();
            println!(
                "check {mode:<14} spans received={spans} of {} calls ({:.1} %; a full export queue drops spans rather than wait)",
                bench.calls,
                spans as f64 * 100.0 / bench.calls as f64
            );
        })
        .await
        .expect("count the spans");
    }
}
