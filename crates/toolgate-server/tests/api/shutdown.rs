//! Graceful shutdown: in-flight calls finish and are on disk when `serve` returns; event
//! streams end; calls still running after the grace period end `cancelled`, audited.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde_json::json;
use toolgate_server::ServerConfig;

use crate::fixture::{DEV, OP, Setup, SseReader, TestServer, audit_path, eventually, tokens};

#[tokio::test]
async fn a_slow_call_in_flight_completes_and_is_audited_before_serve_returns() {
    let mut s = TestServer::start().await;
    let body = json!({"tool": "echo", "arguments": {"sleep_ms": 500}, "session": "slow"});
    let request = s.post("/v1/calls", Some(DEV), &body).send();
    let call = tokio::spawn(request);
    let echo = Arc::clone(&s.echo);
    eventually("the slow call to start", || async {
        (echo.calls.load(Ordering::SeqCst) == 1).then_some(())
    })
    .await;

    s.shutdown().await.unwrap();

    let resp = call.await.unwrap().unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let env: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(env["ok"], json!(true), "{env}");
    assert_eq!(env["data"], json!({"echo": {"sleep_ms": 500}}));

    // On disk, read straight from the file after serve returned.
    let text = std::fs::read_to_string(audit_path(s.dir.path())).unwrap();
    let records: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mine: Vec<_> = records
        .iter()
        .filter(|r| r["call_id"] == env["call_id"])
        .map(|r| (r["kind"].clone(), r["outcome"].clone()))
        .collect();
    assert_eq!(mine, [(json!("outcome"), json!("ok"))]);
}

#[tokio::test]
async fn an_open_event_stream_does_not_hold_shutdown_up() {
    let mut s = TestServer::start().await;
    let resp = s
        .get("/v1/approvals/stream", Some(OP))
        .send()
        .await
        .unwrap();
    let mut events = SseReader::new(resp);
    s.shutdown().await.unwrap();
    assert_eq!(events.next().await, None);
}

#[tokio::test]
async fn calls_still_running_after_the_grace_are_cancelled_and_audited() {
    let mut s = TestServer::with(Setup {
        server: ServerConfig {
            tokens: tokens(),
            shutdown_grace_secs: 0,
            ..ServerConfig::default()
        },
        ..Setup::default()
    })
    .await;
    let body = json!({"tool": "echo", "arguments": {"sleep_ms": 600000}, "session": "stuck"});
    let call = tokio::spawn(s.post("/v1/calls", Some(DEV), &body).send());
    let echo = Arc::clone(&s.echo);
    eventually("the stuck call to start", || async {
        (echo.calls.load(Ordering::SeqCst) == 1).then_some(())
    })
    .await;

    s.shutdown().await.unwrap();

    let records = s.audit_lines();
    let stuck: Vec<_> = records
        .iter()
        .filter(|r| r["session"] == json!("stuck"))
        .map(|r| r["outcome"].clone())
        .collect();
    assert_eq!(stuck, [json!("cancelled")]);
    // The client still hears how its call ended.
    let env: serde_json::Value = call.await.unwrap().unwrap().json().await.unwrap();
    assert_eq!(env["error"]["code"], json!("cancelled"), "{env}");
}
