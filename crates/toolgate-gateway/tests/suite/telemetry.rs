//! The telemetry layer through the real pipeline (each test is its own process under
//! nextest, so each installs its own SDK): every call counted by tool, outcome and role in
//! `/metrics`' text; with tracing on, an `execute_tool` span under the caller's trace whose
//! context the tool is handed, its attributes and stage events as a collector receives
//! them, and no secret in any attribute even with arguments recorded.

use std::time::Duration;

use serde_json::json;
use toolgate_core::TraceContext;
use toolgate_gateway::{Arguments, CallRequest};
use toolgate_telemetry::{Telemetry, TelemetryConfig};
use toolgate_testkit::OtlpSink;

use super::fixture::Harness;

const CALLER: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

#[tokio::test]
async fn every_call_is_counted_by_tool_outcome_and_role() {
    let t = Telemetry::install(&TelemetryConfig::default()).unwrap();
    assert!(!t.exporting());
    let h = Harness::new();
    for _ in 0..2 {
        let ok = h
            .gateway
            .call(CallRequest::new("echo", Arguments::Json(json!({}))))
            .await;
        assert!(ok.ok);
    }
    // Names a caller makes up are one series, however many and however long.
    for name in ["nope", "nada", &"x".repeat(100_000)] {
        let unknown = h
            .gateway
            .call(CallRequest::new(name, Arguments::Json(json!({}))))
            .await;
        assert!(!unknown.ok);
    }
    let text = t.prometheus();
    assert!(!text.contains("nope") && !text.contains("xxxx"), "{text}");
    for line in [
        r#"toolgate_calls_total{gen_ai_tool_name="echo",toolgate_outcome="ok",toolgate_role="default"} 2"#,
        r#"toolgate_calls_total{gen_ai_tool_name="_unknown",toolgate_outcome="unknown_tool",toolgate_role="default"} 3"#,
        r#"toolgate_call_duration_seconds_count{gen_ai_tool_name="echo",toolgate_outcome="ok"} 2"#,
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "missing {line:?} in\n{text}"
        );
    }
}

#[tokio::test]
async fn a_call_is_an_execute_tool_span_under_the_callers_trace() {
    let sink = OtlpSink::start();
    let cfg = TelemetryConfig {
        enabled: true,
        endpoint: Some(sink.url()),
        record_arguments: true,
        ..TelemetryConfig::default()
    };
    let t = Telemetry::install(&cfg).unwrap();
    assert!(t.exporting());
    let h = Harness::new();
    let mut request = CallRequest::new(
        "echo",
        Arguments::Json(json!({"show_trace": true, "token": "sk-live-4f3c2b1a0987654321fedcba"})),
    );
    request.trace = TraceContext::parse(CALLER, None);
    let out = h.gateway.call(request).await;
    assert!(out.ok, "{out:?}");
    let mut denied = CallRequest::new("danger", Arguments::Json(json!({})));
    denied.role = "narrow".into();
    denied.trace = TraceContext::parse(CALLER, None);
    let refused = h.gateway.call(denied).await;
    assert!(!refused.ok);
    t.flush();

    let span = sink
        .wait_for("execute_tool echo", Duration::from_secs(10))
        .expect("the span reached the collector");
    assert_eq!(span.kind, 1, "internal");
    assert_eq!(span.trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
    assert_eq!(span.parent_span_id, "00f067aa0ba902b7");
    let a = &span.attributes;
    assert_eq!(a["gen_ai.operation.name"], "execute_tool");
    assert_eq!(a["gen_ai.tool.name"], "echo");
    assert_eq!(a["gen_ai.tool.call.id"], out.call_id);
    assert_eq!(a["gen_ai.tool.type"], "function");
    assert_eq!(a["toolgate.role"], "default");
    assert_eq!(a["toolgate.risk"], "read");
    assert_eq!(a["toolgate.policy.decision"], "allow");
    assert!(!a.contains_key("error.type"));
    assert_eq!(span.resource["service.name"], "toolgate");
    // Recorded on request, and redacted like the audit.
    assert!(a["gen_ai.tool.call.arguments"].contains("show_trace"));
    for (k, v) in a {
        assert!(
            !v.contains("sk-live-4f3c2b1a0987654321fedcba"),
            "{k} leaks the token: {v}"
        );
    }
    for stage in [
        "audit",
        "lookup",
        "authorize",
        "validate",
        "policy",
        "execute",
    ] {
        assert!(
            span.events.iter().any(|e| e == stage),
            "{stage} in {:?}",
            span.events
        );
    }
    // The tool was handed this span's context, not the caller's.
    let data = out.data.as_ref().unwrap();
    let handed = data["traceparent"].as_str().unwrap();
    assert_eq!(
        handed,
        format!("00-{}-{}-01", span.trace_id, span.span_id),
        "the tool's parent is the execute_tool span"
    );

    let refused = sink
        .wait_for("execute_tool danger", Duration::from_secs(10))
        .unwrap();
    assert_eq!(refused.attributes["error.type"], "forbidden");
    assert_eq!(refused.status, 2, "error status");
    assert_eq!(refused.trace_id, span.trace_id);

    // The metrics went out over OTLP too (the flush above exported them).
    let metrics = sink.metrics();
    assert_eq!(metrics.get("toolgate.calls"), Some(&2.0), "{metrics:?}");
    assert_eq!(
        metrics.get("toolgate.call.duration"),
        Some(&2.0),
        "{metrics:?}"
    );
}
