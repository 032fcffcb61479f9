//! `GET /metrics`: Prometheus text for operators — the calls made through `/v1/calls` are
//! counted by tool, outcome and role, durations are histograms, and a non-operator or a
//! tokenless caller is refused.

use serde_json::json;

use crate::fixture::{DEV, OP, TestServer};

#[tokio::test]
async fn operators_read_the_calls_made_as_prometheus_text() {
    let s = TestServer::start().await;
    for _ in 0..3 {
        let r = s
            .post(
                "/v1/calls",
                Some(DEV),
                &json!({"tool": "echo", "arguments": {}}),
            )
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
    }
    let r = s
        .post(
            "/v1/calls",
            Some(DEV),
            &json!({"tool": "missing", "arguments": {}}),
        )
        .send()
        .await
        .unwrap();
    let envelope: serde_json::Value = r.json().await.unwrap();
    assert_eq!(envelope["error"]["code"], "unknown_tool");

    let r = s.get("/metrics", Some(OP)).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(
        r.headers()["content-type"],
        "text/plain; version=0.0.4; charset=utf-8"
    );
    let text = r.text().await.unwrap();
    for line in [
        "# TYPE toolgate_calls_total counter",
        r#"toolgate_calls_total{gen_ai_tool_name="echo",toolgate_outcome="ok",toolgate_role="default"} 3"#,
        r#"toolgate_calls_total{gen_ai_tool_name="_unknown",toolgate_outcome="unknown_tool",toolgate_role="default"} 1"#,
        "# TYPE toolgate_call_duration_seconds histogram",
        r#"toolgate_call_duration_seconds_count{gen_ai_tool_name="echo",toolgate_outcome="ok"} 3"#,
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "missing {line:?} in\n{text}"
        );
    }

    assert_eq!(
        s.get("/metrics", Some(DEV)).send().await.unwrap().status(),
        403
    );
    assert_eq!(s.get("/metrics", None).send().await.unwrap().status(), 401);
}
