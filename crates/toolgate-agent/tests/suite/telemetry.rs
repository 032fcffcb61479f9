//! The agent loop traced (issue 17; each test is its own process under nextest, so it
//! installs its own SDK): a run is one trace — `invoke_agent toolgate` at the root, a
//! `chat fake-model` CLIENT span per model request with the token usage and the finish
//! reason, whose context the model server receives in `traceparent`, and the tool call
//! of the turn an `execute_tool` span under the run. Received by an OTLP collector that
//! decodes the wire format.

use std::time::Duration;

use tokio_util::sync::CancellationToken;
use toolgate_agent::fake::{FakeTurn, Reply};
use toolgate_agent::{Message, Provider, Silent};
use toolgate_telemetry::{Telemetry, TelemetryConfig};
use toolgate_testkit::OtlpSink;

use super::fixture::{Harness, agent, client, server};

#[tokio::test]
async fn a_run_is_one_trace_of_model_requests_and_tool_calls() {
    let sink = OtlpSink::start();
    let telemetry = Telemetry::install(&TelemetryConfig {
        enabled: true,
        endpoint: Some(sink.url()),
        ..TelemetryConfig::default()
    })
    .unwrap();
    let h = Harness::new();
    let fake = server(vec![
        Reply::Turn(FakeTurn::calls(&[("call_a", "echo", r#"{"text":"hi"}"#)])),
        Reply::Turn(FakeTurn::text("done")),
    ])
    .await;
    let a = agent(&h, client(Provider::OpenAiChat, &fake), false);
    let mut history = vec![Message::user("say hi")];
    a.run(&mut history, &CancellationToken::new(), &Silent)
        .await
        .unwrap();
    let sent = fake.requests();
    assert_eq!(sent.len(), 2);
    tokio::task::spawn_blocking(move || telemetry.flush())
        .await
        .unwrap();

    let run = sink
        .wait_for("invoke_agent toolgate", Duration::from_secs(10))
        .expect("the run's span");
    assert_eq!(run.parent_span_id, "", "a run with no caller is a root");
    assert_eq!(run.attributes["gen_ai.operation.name"], "invoke_agent");
    let spans = sink.spans();
    let chats: Vec<_> = spans
        .iter()
        .filter(|s| s.name == "chat fake-model")
        .collect();
    assert_eq!(chats.len(), 2, "{spans:#?}");
    for (chat, request) in chats.iter().zip(&sent) {
        assert_eq!(chat.kind, 3, "client");
        assert_eq!(chat.trace_id, run.trace_id);
        assert_eq!(chat.parent_span_id, run.span_id);
        let a = &chat.attributes;
        assert_eq!(a["gen_ai.operation.name"], "chat");
        assert_eq!(a["gen_ai.provider.name"], "openai");
        assert_eq!(a["gen_ai.request.model"], "fake-model");
        assert_eq!(a["gen_ai.usage.input_tokens"], "10");
        assert_eq!(a["gen_ai.usage.output_tokens"], "5");
        // The model server was told which span asked.
        assert_eq!(
            request.headers["traceparent"],
            format!("00-{}-{}-01", chat.trace_id, chat.span_id)
        );
        assert!(
            !a.values().any(|v| v.contains("sk-test")),
            "no key on a span"
        );
    }
    let call = spans
        .iter()
        .find(|s| s.name == "execute_tool echo")
        .expect("the tool call's span");
    assert_eq!(call.trace_id, run.trace_id);
    assert_eq!(call.parent_span_id, run.span_id);
    assert_eq!(call.attributes["toolgate.principal"], "agent:test");
}
