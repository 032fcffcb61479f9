//! `/mcp` answers a plain `tools/call` in a session with one `application/json` object
//! (`toolgate_server::mcp::fast`), and with exactly the JSON-RPC message rmcp's SSE path
//! sends for the same request; calls that want progress, unknown sessions and anything
//! unusual stay rmcp's. Cancellation (`notifications/cancelled`, a dropped connection) and
//! graceful shutdown reach the JSON calls too.

use std::sync::atomic::Ordering;

use serde_json::{Value, json};

use crate::fixture::{DEV, NARROW, OP, TestServer, eventually};

const ACCEPT: &str = "application/json, text/event-stream";
const VERSION: &str = "2025-11-25";

/// How a request is sent.
#[derive(Clone, Copy, Debug)]
enum Route {
    /// Plain: answered as JSON.
    Json,
    /// The same request with a `q` weight in `Accept`, which the JSON path leaves to rmcp.
    Rmcp,
    /// With `_meta.progressToken`: rmcp's SSE stream.
    Progress,
}

/// An initialized MCP session of one token.
struct Session<'a> {
    s: &'a TestServer,
    token: &'a str,
    id: String,
}

impl<'a> Session<'a> {
    async fn open(s: &'a TestServer, token: &'a str) -> Session<'a> {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": VERSION, "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"}}});
        let resp = s
            .client
            .post(s.url("/mcp"))
            .bearer_auth(token)
            .header("accept", ACCEPT)
            .json(&init)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status().as_u16(), 200);
        let id = resp.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned();
        let session = Session { s, token, id };
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let resp = session.post(&initialized, ACCEPT).send().await.unwrap();
        assert_eq!(resp.status().as_u16(), 202);
        session
    }

    fn post(&self, body: &Value, accept: &str) -> crate::checked::Request {
        self.s
            .client
            .post(self.s.url("/mcp"))
            .bearer_auth(self.token)
            .header("accept", accept)
            .header("mcp-session-id", &self.id)
            .header("mcp-protocol-version", VERSION)
            .json(body)
    }

    /// Sends `tools/call` the `route` way; returns the content type and the JSON-RPC
    /// response message as sent (the body, or the data of the SSE event carrying it).
    async fn call(&self, id: i64, tool: &str, arguments: Value, route: Route) -> (String, String) {
        let mut params = json!({"name": tool, "arguments": arguments});
        if let Route::Progress = route {
            params["_meta"] = json!({"progressToken": format!("p{id}")});
        }
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
        let accept = match route {
            Route::Rmcp => "application/json;q=0.9, text/event-stream",
            Route::Json | Route::Progress => ACCEPT,
        };
        let resp = self.post(&body, accept).send().await.unwrap();
        assert_eq!(resp.status().as_u16(), 200);
        let content_type = resp.headers()["content-type"].to_str().unwrap().to_owned();
        let text = resp.text().await.unwrap();
        let message = if content_type == "application/json" {
            text
        } else {
            sse_message(&text, id)
        };
        (content_type, message)
    }
}

/// The `data` of the event holding the response to `id`.
fn sse_message(stream: &str, id: i64) -> String {
    stream
        .split("\n\n")
        .filter_map(|event| {
            let data: Vec<&str> = event
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(|d| d.strip_prefix(' ').unwrap_or(d))
                .collect();
            let data = data.join("\n");
            let value: Value = serde_json::from_str(&data).ok()?;
            (value["id"] == json!(id)).then_some(data)
        })
        .next()
        .unwrap_or_else(|| panic!("no response to {id} in {stream:?}"))
}

#[tokio::test]
async fn a_plain_call_in_a_session_is_answered_as_json() {
    let s = TestServer::start().await;
    let session = Session::open(&s, DEV).await;
    let (content_type, message) = session
        .call(1, "echo", json!({"note": "hi"}), Route::Json)
        .await;
    assert_eq!(content_type, "application/json");
    assert_eq!(
        serde_json::from_str::<Value>(&message).unwrap(),
        json!({"jsonrpc": "2.0", "id": 1, "result": {
            "content": [{"type": "text", "text": "{\"echo\":{\"note\":\"hi\"}}"}],
            "structuredContent": {"echo": {"note": "hi"}},
            "isError": false}})
    );
    // Audited under the MCP session, as the caller.
    let records = s
        .get_json(&format!("/v1/audit?session={}", session.id), Some(OP), 200)
        .await;
    let got: Vec<_> = records
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["tool"].clone(),
                r["principal"].clone(),
                r["outcome"].clone(),
            )
        })
        .collect();
    assert_eq!(got, [(json!("echo"), json!("bob"), json!("ok"))]);
}

#[tokio::test]
async fn a_call_with_a_progress_token_keeps_the_event_stream() {
    let s = TestServer::start().await;
    let session = Session::open(&s, DEV).await;
    let (content_type, message) = session.call(1, "echo", json!({}), Route::Progress).await;
    assert_eq!(content_type, "text/event-stream");
    assert_eq!(
        serde_json::from_str::<Value>(&message).unwrap()["result"]["structuredContent"],
        json!({"echo": {}})
    );
}

/// Successes, tool failures, invalid arguments, unknown and hidden tools: the JSON answer is
/// byte for byte the message rmcp sends, with or without a progress token.
#[tokio::test]
async fn json_answers_are_the_messages_rmcp_sends() {
    let s = TestServer::start().await;
    let cases = [
        (DEV, "echo", json!({"note": "same"})),
        (DEV, "echo", json!({"fail": "it broke"})),
        (DEV, "echo", json!({"sleep_ms": "soon"})),
        (DEV, "no_such_tool", json!({})),
        (DEV, "ech", json!({})),
        // `narrow` sees only `echo`: `writer` must look like a tool that does not exist.
        (NARROW, "writer", json!({"note": "x"})),
        (NARROW, "nope", json!({})),
    ];
    let mut id = 0;
    for (token, tool, arguments) in cases {
        let session = Session::open(&s, token).await;
        let mut answers = Vec::new();
        for route in [Route::Json, Route::Rmcp, Route::Progress] {
            id += 1;
            let (content_type, message) = session.call(id, tool, arguments.clone(), route).await;
            let expected_type = match route {
                Route::Json => "application/json",
                Route::Rmcp | Route::Progress => "text/event-stream",
            };
            assert_eq!(content_type, expected_type, "{tool} {route:?}");
            // Compare with the id each request had.
            answers.push(message.replacen(&format!("\"id\":{id}"), "\"id\":_", 1));
        }
        assert_eq!(answers[0], answers[1], "{tool} {arguments}: JSON vs rmcp");
        assert_eq!(
            answers[0], answers[2],
            "{tool} {arguments}: JSON vs progress"
        );
    }
    let hidden: Value = serde_json::from_str(
        &Session::open(&s, NARROW)
            .await
            .call(100, "writer", json!({}), Route::Json)
            .await
            .1,
    )
    .unwrap();
    assert_eq!(hidden["result"]["isError"], json!(true));
    let error: Value =
        serde_json::from_str(hidden["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        error,
        json!({"code": "unknown_tool", "message": "no tool named `writer`", "retryable": false,
            "hint": "tools/list shows the tools you can call"})
    );
}

#[tokio::test]
async fn an_unknown_session_gets_rmcps_404() {
    let s = TestServer::start().await;
    let mut session = Session::open(&s, DEV).await;
    session.id = "no-such-session".into();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "echo", "arguments": {}}});
    let resp = session.post(&body, ACCEPT).send().await.unwrap();
    assert_eq!(resp.status().as_u16(), 404);
    assert_eq!(resp.text().await.unwrap(), "Not Found: Session not found");
    assert_eq!(s.echo.calls.load(Ordering::SeqCst), 0);
}

/// The outcome the audit records for the one call of `session`, once there is one.
async fn audited_outcome(s: &TestServer, session: &str) -> Value {
    eventually("the call's outcome in the audit", || async {
        let records = s
            .get_json(&format!("/v1/audit?session={session}"), Some(OP), 200)
            .await;
        records
            .as_array()
            .unwrap()
            .first()
            .map(|r| r["outcome"].clone())
    })
    .await
}

#[tokio::test]
async fn notifications_cancelled_cancels_a_json_call() {
    let s = TestServer::start().await;
    let session = Session::open(&s, DEV).await;
    let body = json!({"jsonrpc": "2.0", "id": "slow-1", "method": "tools/call",
        "params": {"name": "echo", "arguments": {"sleep_ms": 600000}}});
    let call = tokio::spawn(session.post(&body, ACCEPT).send());
    eventually("the slow call to start", || async {
        (s.echo.calls.load(Ordering::SeqCst) == 1).then_some(())
    })
    .await;
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": "slow-1", "reason": "user gave up"}});
    let resp = session.post(&cancel, ACCEPT).send().await.unwrap();
    assert_eq!(
        resp.status().as_u16(),
        202,
        "rmcp still sees the notification"
    );

    // As rmcp does for a cancelled request: no JSON-RPC response.
    let resp = call.await.unwrap().unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    assert_eq!(resp.text().await.unwrap(), "");
    assert_eq!(audited_outcome(&s, &session.id).await, json!("cancelled"));
}

#[tokio::test]
async fn a_dropped_connection_cancels_a_json_call() {
    use tokio::io::AsyncWriteExt;

    let s = TestServer::start().await;
    let session = Session::open(&s, DEV).await;
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"sleep_ms":600000}}}"#;
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {DEV}\r\nAccept: {ACCEPT}\r\nContent-Type: application/json\r\nMcp-Session-Id: {}\r\nMcp-Protocol-Version: {VERSION}\r\nContent-Length: {}\r\n\r\n{body}",
        session.id,
        body.len()
    );
    let mut conn = tokio::net::TcpStream::connect(s.addr).await.unwrap();
    conn.write_all(request.as_bytes()).await.unwrap();
    eventually("the tool to start", || async {
        (s.echo.calls.load(Ordering::SeqCst) == 1).then_some(())
    })
    .await;
    drop(conn);
    assert_eq!(audited_outcome(&s, &session.id).await, json!("cancelled"));
}

#[tokio::test]
async fn shutdown_lets_a_json_call_in_flight_finish() {
    let mut s = TestServer::start().await;
    let session = Session::open(&s, DEV).await;
    let id = session.id.clone();
    let body = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"sleep_ms": 500}}});
    let call = tokio::spawn(session.post(&body, ACCEPT).send());
    let echo = std::sync::Arc::clone(&s.echo);
    eventually("the slow call to start", || async {
        (echo.calls.load(Ordering::SeqCst) == 1).then_some(())
    })
    .await;

    s.shutdown().await.unwrap();

    let resp = call.await.unwrap().unwrap();
    assert_eq!(resp.headers()["content-type"], "application/json");
    let message: Value = resp.json().await.unwrap();
    assert_eq!(
        message["result"]["structuredContent"],
        json!({"echo": {"sleep_ms": 500}})
    );
    let outcomes: Vec<Value> = s
        .audit_lines()
        .into_iter()
        .filter(|r| r["session"] == json!(id))
        .map(|r| r["outcome"].clone())
        .collect();
    assert_eq!(outcomes, [json!("ok")]);
}

#[tokio::test]
async fn deleting_the_session_cancels_its_json_calls() {
    let s = TestServer::start().await;
    let session = Session::open(&s, DEV).await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"sleep_ms": 600000}}});
    let call = tokio::spawn(session.post(&body, ACCEPT).send());
    eventually("the slow call to start", || async {
        (s.echo.calls.load(Ordering::SeqCst) == 1).then_some(())
    })
    .await;
    let resp = s
        .client
        .delete(s.url("/mcp"))
        .bearer_auth(DEV)
        .header("mcp-session-id", &session.id)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 204);
    let resp = call.await.unwrap().unwrap();
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    assert_eq!(resp.text().await.unwrap(), "");
    assert_eq!(audited_outcome(&s, &session.id).await, json!("cancelled"));
}

/// A body over rmcp's limit can no longer be handed on once read: it gets rmcp's answer.
#[tokio::test]
async fn an_oversized_body_gets_rmcps_413() {
    let s = TestServer::start().await;
    let session = Session::open(&s, DEV).await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"note": "x".repeat(5 << 20)}}});
    let mut answers = Vec::new();
    for accept in [ACCEPT, "application/json;q=0.9, text/event-stream"] {
        let resp = session.post(&body, accept).send().await.unwrap();
        answers.push((resp.status().as_u16(), resp.text().await.unwrap()));
    }
    assert_eq!(
        answers[0],
        (
            413,
            "Payload Too Large: request body exceeds 4194304 bytes".to_owned()
        )
    );
    assert_eq!(answers[0], answers[1]);
}

/// Over a `[[quotas]]` limit on MCP: a tool error (`isError`) carrying `rate_limited` and when
/// to retry — not a JSON-RPC error, so the model sees it like any failed call.
#[tokio::test]
async fn over_a_quota_a_call_is_a_tool_error_with_the_code() {
    let mut gateway = crate::fixture::gateway_config();
    gateway.quotas = vec![toolgate_gateway::quota::QuotaConfig {
        tool: "echo".into(),
        ..toolgate_gateway::quota::QuotaConfig::per_principal("one-an-hour", 1, "1h")
    }];
    let s = TestServer::with(crate::fixture::Setup {
        gateway,
        ..crate::fixture::Setup::default()
    })
    .await;
    let session = Session::open(&s, OP).await;
    let (_, first) = session.call(1, "echo", json!({}), Route::Json).await;
    assert_eq!(
        serde_json::from_str::<Value>(&first).unwrap()["result"]["isError"],
        json!(false)
    );
    let (_, second) = session.call(2, "echo", json!({}), Route::Json).await;
    let result = serde_json::from_str::<Value>(&second).unwrap()["result"].clone();
    assert_eq!(result["isError"], json!(true), "{result}");
    let error: Value =
        serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(error["code"], "rate_limited", "{result}");
    assert_eq!(error["retryable"], json!(true));
    assert!(error["details"]["retry_after_ms"].as_u64().unwrap() > 1_000_000);
}
