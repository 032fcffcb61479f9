//! `POST /v1/calls`: envelopes for every outcome, the HTTP errors of the request itself, and
//! cancellation when the client goes away.

use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tower::ServiceExt;

use crate::fixture::{DEV, NARROW, OP, TestServer, answer, code, eventually};

fn without_call_id(mut v: Value) -> Value {
    assert!(v["call_id"].as_str().unwrap().starts_with("call_"), "{v}");
    v.as_object_mut().unwrap().remove("call_id");
    v
}

#[tokio::test]
async fn a_call_answers_its_envelope() {
    let s = TestServer::start().await;
    let env = s
        .call(
            Some(DEV),
            json!({"tool": "echo", "arguments": {"note": "hi"}}),
        )
        .await;
    assert_eq!(
        without_call_id(env),
        json!({"ok": true, "data": {"echo": {"note": "hi"}}})
    );
    // Arguments as text, as a model wrote them.
    let env = s
        .call(
            Some(DEV),
            json!({"tool": "echo", "arguments": "{\"note\": \"text\"}"}),
        )
        .await;
    assert_eq!(
        without_call_id(env)["data"],
        json!({"echo": {"note": "text"}})
    );
    // No arguments: {}.
    let env = s.call(Some(DEV), json!({"tool": "echo"})).await;
    assert_eq!(without_call_id(env)["data"], json!({"echo": {}}));
}

#[tokio::test]
async fn failed_calls_are_200_with_the_code_in_the_envelope() {
    let s = TestServer::start().await;
    let cases = [
        (Some(DEV), json!({"tool": "nope"}), "unknown_tool"),
        (Some(NARROW), json!({"tool": "writer"}), "forbidden"),
        (
            Some(DEV),
            json!({"tool": "echo", "arguments": {"bogus": 1}}),
            "invalid_arguments",
        ),
        (
            Some(DEV),
            json!({"tool": "echo", "arguments": "{not json"}),
            "invalid_arguments",
        ),
        (
            Some(DEV),
            json!({"tool": "writer", "arguments": {"note": "x"}}),
            "approval_required",
        ),
        (
            Some(DEV),
            json!({"tool": "echo", "arguments": {"fail": "boom"}}),
            "execution_failed",
        ),
    ];
    for (token, body, expected) in cases {
        let env = s.call(token, body.clone()).await;
        assert_eq!(env["ok"], json!(false), "{body}");
        assert_eq!(code(&env), expected, "{body}: {env}");
    }
    let env = s
        .call(
            Some(DEV),
            json!({"tool": "echo", "arguments": {"fail": "boom"}}),
        )
        .await;
    assert_eq!(
        without_call_id(env),
        json!({"ok": false, "error": {"code": "execution_failed", "message": "boom", "retryable": false}})
    );
}

#[tokio::test]
async fn malformed_bodies_are_400_with_the_error_body() {
    let s = TestServer::start().await;
    let send = |body: &'static str, content_type: Option<&'static str>| {
        let mut rb = s
            .client
            .post(s.url("/v1/calls"))
            .bearer_auth(DEV)
            .body(body);
        if let Some(ct) = content_type {
            rb = rb.header("content-type", ct);
        }
        rb.send()
    };
    let body = answer(
        send("{\"tool\": ", Some("application/json")).await.unwrap(),
        400,
    )
    .await;
    assert_eq!(
        body,
        json!({"error": {"code": "invalid_arguments",
            "message": "the request body is not valid: EOF while parsing a value at line 1 column 9",
            "retryable": false,
            "hint": "the body is {\"tool\": NAME, \"arguments\": {…}, \"session\"?, \"idempotency_key\"?, \"wait_for_approval\"?, \"keep_approval\"?}"}})
    );
    let body = answer(
        send("{\"arguments\": {}}", Some("application/json"))
            .await
            .unwrap(),
        400,
    )
    .await;
    assert_eq!(
        body["error"]["message"],
        json!("the request body is not valid: missing field `tool` at line 1 column 17")
    );
    let body = answer(
        send(
            "{\"tool\": \"echo\", \"principal\": \"root\"}",
            Some("application/json"),
        )
        .await
        .unwrap(),
        400,
    )
    .await;
    assert_eq!(body["error"]["code"], json!("invalid_arguments"));
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown field `principal`"),
        "{body}"
    );

    let body = answer(send("{\"tool\": \"echo\"}", None).await.unwrap(), 415).await;
    assert_eq!(
        body,
        json!({"error": {"code": "invalid_arguments", "message": "the request body must be JSON",
            "retryable": false, "hint": "send `Content-Type: application/json`"}})
    );
}

#[tokio::test]
async fn oversized_bodies_are_413() {
    let s = TestServer::start().await;
    let limit = s.state.call_body_limit();
    assert_eq!(limit, 4096 + 64 * 1024);
    let huge = "x".repeat(limit + 1);
    let env = s
        .post(
            "/v1/calls",
            Some(DEV),
            &json!({"tool": "echo", "arguments": {"note": huge}}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(
        answer(env, 413).await,
        json!({"error": {"code": "invalid_arguments",
            "message": format!("the request body is larger than {limit} bytes"),
            "retryable": false,
            "hint": "the arguments of one call are limited by [limits] max_argument_bytes"}})
    );
    // Within the body limit but over the gateway's argument limit: the gateway says so.
    let env = s
        .call(
            Some(DEV),
            json!({"tool": "echo", "arguments": "x".repeat(5000)}),
        )
        .await;
    assert_eq!(code(&env), "invalid_arguments");
}

#[tokio::test]
async fn malformed_queries_are_400_with_the_error_body() {
    let s = TestServer::start().await;
    let body = s.get_json("/v1/approvals?limit=many", Some(OP), 400).await;
    assert_eq!(body["error"]["code"], json!("invalid_arguments"));
    assert_eq!(
        body["error"]["message"],
        json!(
            "the query string is not valid: Failed to deserialize query string: limit: invalid digit found in string"
        )
    );
    let body = s.get_json("/v1/audit?colour=red", Some(OP), 400).await;
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown field `colour`"),
        "{body}"
    );
}

#[tokio::test]
async fn calls_are_refused_once_shutdown_began() {
    let s = TestServer::start().await;
    s.state.shutdown.cancel();
    let app = toolgate_server::router(s.state.clone());
    let req = axum::http::Request::post("/v1/calls")
        .header("host", "127.0.0.1")
        .header("authorization", format!("Bearer {DEV}"))
        .header("content-type", "application/json")
        .body(axum::body::Body::from(r#"{"tool": "echo"}"#))
        .unwrap();
    let resp = app.oneshot(req).await.unwrap();
    assert_eq!(resp.status().as_u16(), 503);
    let content_type = resp.headers()["content-type"].to_str().unwrap().to_owned();
    let bytes = axum::body::to_bytes(resp.into_body(), 1 << 20)
        .await
        .unwrap();
    crate::contract::assert_answer("POST", "/v1/calls", 503, Some(&content_type), Some(&bytes));
    assert_eq!(
        serde_json::from_slice::<Value>(&bytes).unwrap(),
        json!({"error": {"code": "unavailable", "message": "the server is shutting down",
            "retryable": true, "hint": "retry against the restarted server"}})
    );
}

#[tokio::test]
async fn a_client_that_disconnects_cancels_its_call_and_the_cancellation_is_audited() {
    let s = TestServer::start().await;
    let body = r#"{"tool": "echo", "arguments": {"sleep_ms": 60000}, "session": "gone"}"#;
    let request = format!(
        "POST /v1/calls HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {DEV}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut conn = tokio::net::TcpStream::connect(s.addr).await.unwrap();
    conn.write_all(request.as_bytes()).await.unwrap();
    eventually("the tool to start", || async {
        (s.echo.calls.load(std::sync::atomic::Ordering::SeqCst) == 1).then_some(())
    })
    .await;
    drop(conn);
    let record = eventually("the cancellation in the audit", || async {
        let records = s.get_json("/v1/audit?session=gone", Some(OP), 200).await;
        records.as_array().unwrap().first().cloned()
    })
    .await;
    assert_eq!(record["outcome"], json!("cancelled"));
    assert_eq!(record["tool"], json!("echo"));
}

/// Over a quota, `POST /v1/calls` answers 429 with `Retry-After` (whole seconds) and the
/// envelope; another principal is not affected; the refusal is audited.
#[tokio::test]
async fn over_a_quota_the_answer_is_429_with_retry_after() {
    let mut gateway = crate::fixture::gateway_config();
    gateway.quotas = vec![toolgate_gateway::quota::QuotaConfig::per_principal(
        "burst-2", 2, "10s",
    )];
    let s = TestServer::with(crate::fixture::Setup {
        gateway,
        ..crate::fixture::Setup::default()
    })
    .await;
    let body = json!({"tool": "echo", "arguments": {}});
    for _ in 0..2 {
        assert_eq!(s.call(Some(OP), body.clone()).await["ok"], json!(true));
    }
    let resp = s.post("/v1/calls", Some(OP), &body).send().await.unwrap();
    assert_eq!(resp.status().as_u16(), 429);
    let retry: u64 = resp.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=5).contains(&retry), "Retry-After: {retry}");
    let envelope: Value = resp.json().await.unwrap();
    assert_eq!(code(&envelope), "rate_limited");
    assert_eq!(envelope["error"]["details"]["quota"], "burst-2");
    assert_eq!(
        s.call(Some(DEV), body).await["ok"],
        json!(true),
        "another principal"
    );
    let audited = s
        .audit_lines()
        .iter()
        .any(|r| r["outcome"] == "rate_limited" && r["tool"] == "echo");
    assert!(audited, "the refusal is in the audit");
}
