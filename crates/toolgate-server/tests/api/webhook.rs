//! The webhook channel against a real receiver: one POST per new pending approval, retries
//! on failure, no redirects followed, unusable URLs refused at start, `[egress]` obeyed
//! (the receiver on 127.0.0.1 is reached only because the fixture allowlists it).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{Value, json};
use toolgate_net::EgressPolicy;
use toolgate_server::config::WebhookConfig;
use toolgate_server::{ServeError, ServerConfig};

use crate::fixture::{DEV, OP, Setup, TestServer, approval_id, eventually, tokens};

/// What the receiver got, and how many answers should fail first.
#[derive(Default)]
struct Received {
    hook: Vec<Value>,
    redirected_to: usize,
    fail_first: usize,
}

type Shared = Arc<Mutex<Received>>;

async fn hook(State(r): State<Shared>, Json(body): Json<Value>) -> Response {
    let mut r = r.lock().unwrap();
    r.hook.push(body);
    if r.hook.len() <= r.fail_first {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    }
    StatusCode::NO_CONTENT.into_response()
}

async fn moved() -> Redirect {
    Redirect::temporary("/elsewhere")
}

async fn elsewhere(State(r): State<Shared>) -> StatusCode {
    r.lock().unwrap().redirected_to += 1;
    StatusCode::OK
}

async fn receiver(fail_first: usize) -> (String, Shared) {
    let shared: Shared = Arc::new(Mutex::new(Received {
        fail_first,
        ..Received::default()
    }));
    let app = Router::new()
        .route("/hook", post(hook))
        .route("/moved", post(moved))
        .route("/elsewhere", post(elsewhere))
        .with_state(Arc::clone(&shared));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (base, shared)
}

/// The receivers listen on 127.0.0.1 over plain http: allowed explicitly, as an operator
/// running a local receiver would.
fn loopback_allowed() -> EgressPolicy {
    EgressPolicy::default()
        .allow_host("127.0.0.1")
        .unwrap()
        .allow_plain_http("127.0.0.1")
        .unwrap()
}

async fn server_posting_to(url: String) -> TestServer {
    server_with(url, loopback_allowed()).await
}

async fn server_with(url: String, egress: EgressPolicy) -> TestServer {
    TestServer::with(Setup {
        server: ServerConfig {
            tokens: tokens(),
            webhook: Some(WebhookConfig { url }),
            egress,
            ..ServerConfig::default()
        },
        ..Setup::default()
    })
    .await
}

#[tokio::test]
async fn each_new_pending_approval_is_posted_once() {
    let (base, got) = receiver(0).await;
    let s = server_posting_to(format!("{base}/hook")).await;
    let env = s
        .call(
            Some(DEV),
            json!({"tool": "writer", "arguments": {"note": "n"}}),
        )
        .await;
    let id = approval_id(&env);
    let posted = eventually("the webhook", || async {
        got.lock().unwrap().hook.first().cloned()
    })
    .await;
    let approval = s
        .get_json(&format!("/v1/approvals/{id}"), Some(OP), 200)
        .await;
    assert_eq!(
        posted,
        json!({
            "event": "approval.requested",
            "approval": approval,
            "approve_url": format!("{}/v1/approvals/{id}/decision", s.base),
            "console_url": format!("{}/#/approvals/{id}", s.base),
        })
    );
    // Deciding is a change, not a new request: nothing more is posted.
    s.post_json(
        &format!("/v1/approvals/{id}/decision"),
        Some(OP),
        &json!({"approve": true}),
        200,
    )
    .await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(got.lock().unwrap().hook.len(), 1);
}

#[tokio::test]
async fn failed_deliveries_are_retried_three_times_in_all() {
    let (base, got) = receiver(2).await;
    let s = server_posting_to(format!("{base}/hook")).await;
    let id = approval_id(&s.call(Some(DEV), json!({"tool": "writer"})).await);
    let third = eventually("the third try", || async {
        got.lock().unwrap().hook.get(2).cloned()
    })
    .await;
    assert_eq!(third["approval"]["id"], json!(id));
    let r = got.lock().unwrap();
    assert_eq!(r.hook[0], r.hook[2]);
}

#[tokio::test]
async fn redirects_are_not_followed() {
    let (base, got) = receiver(0).await;
    let s = server_posting_to(format!("{base}/moved")).await;
    s.call(Some(DEV), json!({"tool": "writer"})).await;
    // Three tries (a redirect is not a success), then it gives up: 250 ms + 1 s of pauses.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(got.lock().unwrap().redirected_to, 0);
}

#[tokio::test]
async fn non_http_urls_are_refused_at_start() {
    let mut s = server_posting_to("file:///etc/passwd".into()).await;
    let err = s.shutdown().await.unwrap_err();
    assert!(matches!(err, ServeError::Webhook(_)), "{err}");
    assert_eq!(
        err.to_string(),
        "[server.webhook] url `file:///etc/passwd` must use http or https, not `file`"
    );
}

#[tokio::test]
async fn a_loopback_receiver_is_refused_at_start_unless_allowlisted() {
    let (base, got) = receiver(0).await;
    let port = base.rsplit(':').next().unwrap().to_owned();
    let http_only = EgressPolicy::default()
        .allow_plain_http("127.0.0.1")
        .unwrap();
    let mut s = server_with(format!("{base}/hook"), http_only).await;
    let err = s.shutdown().await.unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "[server.webhook] url refused: 127.0.0.1 is loopback; to allow it add \"127.0.0.1:{port}\" to [egress] allow_hosts"
        )
    );
    assert_eq!(got.lock().unwrap().hook.len(), 0);
}

#[tokio::test]
async fn a_name_resolving_to_loopback_is_refused_at_delivery() {
    let (base, got) = receiver(0).await;
    // `localhost` passes the start-up check (a name) but resolves to loopback.
    let url = base.replace("127.0.0.1", "localhost");
    let http_only = EgressPolicy::default()
        .allow_plain_http("localhost")
        .unwrap();
    let s = server_with(format!("{url}/hook"), http_only).await;
    s.call(Some(DEV), json!({"tool": "writer"})).await;
    // Long enough for all three tries had they been made (250 ms + 1 s of pauses).
    tokio::time::sleep(Duration::from_millis(2000)).await;
    assert_eq!(got.lock().unwrap().hook.len(), 0);
}
