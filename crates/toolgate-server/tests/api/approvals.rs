//! Approvals over HTTP: the whole flow (call → approval_required → event → decision →
//! retried call), events for requests made by another process, and every refusal of a
//! decision.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use toolgate_store::approvals::{ApprovalStore, NewApproval};

use crate::fixture::{DEV, OP, SseReader, TestServer, approval_id, code, db_path, eventually};

fn new_approval(tool: &str, ttl: Duration) -> NewApproval {
    let args = json!({"note": "from another process"});
    toolgate_testkit::approvals::new_approval("someone-else", "cli", tool, &args, ttl)
}

#[tokio::test]
async fn the_approval_flow_over_http() {
    let s = TestServer::start().await;
    let stream = s
        .get("/v1/approvals/stream", Some(OP))
        .send()
        .await
        .unwrap();
    let mut events = SseReader::new(stream);

    let call = json!({"tool": "writer", "arguments": {"note": "deploy"}, "session": "s1"});
    let env = s.call(Some(DEV), call.clone()).await;
    assert_eq!(code(&env), "approval_required");
    assert_eq!(env["error"]["retryable"], json!(true));
    let id = approval_id(&env);

    let (name, pending) = events.next().await.unwrap();
    assert_eq!(name, "approval");
    assert_eq!(pending["id"], json!(id));
    assert_eq!(pending["status"], json!("pending"));
    assert_eq!(
        pending,
        s.get_json(&format!("/v1/approvals/{id}"), Some(OP), 200)
            .await
    );
    assert_eq!(
        (
            pending["tool"].clone(),
            pending["principal"].clone(),
            pending["session"].clone(),
            pending["role"].clone(),
            pending["risk"].clone(),
            pending["arguments"].clone(),
            pending["requires_confirmation"].clone(),
            pending["consumed"].clone(),
            pending["decided_by"].clone(),
            pending["scope"].clone()
        ),
        (
            json!("writer"),
            json!("bob"),
            json!("s1"),
            json!("default"),
            json!("write"),
            json!({"note": "deploy"}),
            json!(false),
            json!(false),
            Value::Null,
            Value::Null
        )
    );
    let listed = s.get_json("/v1/approvals", Some(OP), 200).await;
    assert_eq!(listed, json!([pending]));
    assert_eq!(s.writer.calls.load(std::sync::atomic::Ordering::SeqCst), 0);

    let decided = s
        .post_json(
            &format!("/v1/approvals/{id}/decision"),
            Some(OP),
            &json!({"approve": true, "reason": "looks fine"}),
            200,
        )
        .await;
    assert_eq!(decided["status"], json!("approved"));
    assert_eq!(decided["decided_by"], json!("alice"));
    assert_eq!(decided["scope"], json!("once"));
    assert_eq!(decided["reason"], json!("looks fine"));
    assert!(decided["decided_at"].is_string());

    let (_, changed) = events.next().await.unwrap();
    assert_eq!(
        (changed["id"].clone(), changed["status"].clone()),
        (json!(id), json!("approved"))
    );

    let env = s.call(Some(DEV), call).await;
    assert_eq!(code(&env), "ok", "{env}");
    assert_eq!(s.writer.calls.load(std::sync::atomic::Ordering::SeqCst), 1);
    let call_id = env["call_id"].as_str().unwrap();
    let records = s
        .get_json(
            &format!("/v1/audit?call_id={call_id}&outcome=ok"),
            Some(OP),
            200,
        )
        .await;
    assert_eq!(records[0]["approver"], json!("alice"));
    assert_eq!(records[0]["approval_id"], json!(id));

    // Consuming the approval is a change too.
    let (_, used) = events.next().await.unwrap();
    assert_eq!(
        (used["id"].clone(), used["consumed"].clone()),
        (json!(id), json!(true))
    );
    assert_eq!(s.get_json("/v1/approvals", Some(OP), 200).await, json!([]));
    let all = s.get_json("/v1/approvals?status=all", Some(OP), 200).await;
    assert_eq!(all.as_array().unwrap().len(), 1);
}

/// The backlog of pending requests comes first, then `synced` says it is complete, also
/// when nothing is pending (so a client, or schemathesis, gets an answer at once).
#[tokio::test]
async fn the_stream_marks_the_end_of_the_pending_backlog() {
    let s = TestServer::start().await;
    let open = |s: &TestServer| s.get("/v1/approvals/stream", Some(OP)).send();
    let mut empty = SseReader::new(open(&s).await.unwrap());
    assert_eq!(
        empty.next_any().await,
        Some(("synced".to_owned(), json!({"pending": 0})))
    );

    let env = s
        .call(
            Some(DEV),
            json!({"tool": "writer", "arguments": {"note": "a"}}),
        )
        .await;
    let id = approval_id(&env);
    let mut one = SseReader::new(open(&s).await.unwrap());
    let (name, first) = one.next_any().await.unwrap();
    assert_eq!((name.as_str(), &first["id"]), ("approval", &json!(id)));
    assert_eq!(
        one.next_any().await,
        Some(("synced".to_owned(), json!({"pending": 1})))
    );
}

#[tokio::test]
async fn the_stream_sees_requests_created_by_another_process() {
    let s = TestServer::start().await;
    let other = ApprovalStore::open(&db_path(s.dir.path())).unwrap();
    let before = other
        .create(new_approval("writer", Duration::from_secs(600)))
        .await
        .unwrap();

    let stream = s
        .get("/v1/approvals/stream", Some(OP))
        .send()
        .await
        .unwrap();
    let mut events = SseReader::new(stream);
    let (_, first) = events.next().await.unwrap();
    assert_eq!(first["id"], json!(before.id), "pending on connect");

    let after = other
        .create(new_approval("danger", Duration::from_secs(600)))
        .await
        .unwrap();
    let (name, seen) = events.next().await.unwrap();
    assert_eq!(name, "approval");
    assert_eq!(
        seen,
        s.get_json(&format!("/v1/approvals/{}", after.id), Some(OP), 200)
            .await
    );
    assert_eq!(seen["arguments"], json!({"note": "from another process"}));
}

#[tokio::test]
async fn a_call_waiting_for_approval_completes_once_approved_over_http() {
    let s = Arc::new(TestServer::start().await);
    let waiting = {
        let s = Arc::clone(&s);
        tokio::spawn(async move {
            s.call(
                Some(DEV),
                json!({"tool": "writer", "arguments": {"note": "w"}, "wait_for_approval": true}),
            )
            .await
        })
    };
    let id = eventually("the pending request", || async {
        let list = s.get_json("/v1/approvals", Some(OP), 200).await;
        list[0]["id"].as_str().map(str::to_owned)
    })
    .await;
    s.post_json(
        &format!("/v1/approvals/{id}/decision"),
        Some(OP),
        &json!({"approve": true}),
        200,
    )
    .await;
    let env = waiting.await.unwrap();
    assert_eq!(code(&env), "ok", "{env}");
}

#[tokio::test]
async fn refused_decisions_say_why() {
    let s = TestServer::start().await;
    let decide = |id: String, body: Value, status: u16| {
        let s = &s;
        async move {
            s.post_json(
                &format!("/v1/approvals/{id}/decision"),
                Some(OP),
                &body,
                status,
            )
            .await
        }
    };

    let unknown = decide("apr_000000000000".into(), json!({"approve": true}), 404).await;
    assert_eq!(
        unknown,
        json!({"error": {"code": "invalid_arguments", "message": "no approval request apr_000000000000",
            "retryable": false, "hint": "GET /v1/approvals?status=all lists recent requests"}})
    );
    let missing = s
        .get_json("/v1/approvals/apr_000000000000", Some(OP), 404)
        .await;
    assert_eq!(missing, unknown);

    // Dangerous: approving needs the tool name typed back.
    let env = s
        .call(Some(DEV), json!({"tool": "danger", "arguments": {}}))
        .await;
    let id = approval_id(&env);
    let body = decide(id.clone(), json!({"approve": true}), 400).await;
    assert_eq!(body["error"]["code"], json!("invalid_arguments"));
    assert_eq!(
        body["error"]["message"],
        json!(format!(
            "{id}: this is a dangerous tool: type its name `danger` to confirm"
        ))
    );
    let bad_scope = decide(
        id.clone(),
        json!({"approve": true, "scope": "forever"}),
        400,
    )
    .await;
    assert_eq!(
        bad_scope["error"]["message"],
        json!("unknown decision scope `forever` (expected once, session or always)")
    );
    let bad_pattern = decide(
        id.clone(),
        json!({"approve": true, "confirm": "danger", "scope": "always", "pattern": "*"}),
        400,
    )
    .await;
    assert_eq!(bad_pattern["error"]["code"], json!("invalid_arguments"));
    let ok = decide(
        id.clone(),
        json!({"approve": true, "confirm": "danger"}),
        200,
    )
    .await;
    assert_eq!(ok["status"], json!("approved"));

    // Deciding twice.
    let twice = decide(id.clone(), json!({"approve": false}), 409).await;
    assert_eq!(twice["error"]["code"], json!("invalid_arguments"));
    assert!(
        twice["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with(&format!("{id} was already approved by alice at ")),
        "{twice}"
    );

    // Expired before the decision.
    let other = ApprovalStore::open(&db_path(s.dir.path())).unwrap();
    let expired = other
        .create(new_approval("writer", Duration::ZERO))
        .await
        .unwrap();
    let gone = decide(expired.id.clone(), json!({"approve": true}), 410).await;
    assert_eq!(gone["error"]["code"], json!("approval_expired"));
    assert_eq!(gone["error"]["retryable"], json!(false));
    assert_eq!(
        gone["error"]["hint"],
        json!("the caller must retry the call to create a new request")
    );

    // Malformed decision bodies.
    let body = decide(id.clone(), json!({"approve": "yes"}), 400).await;
    assert_eq!(body["error"]["code"], json!("invalid_arguments"));
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("the request body is not valid: "),
        "{body}"
    );

    let bad_status = s
        .get_json("/v1/approvals?status=maybe", Some(OP), 400)
        .await;
    assert_eq!(
        bad_status["error"]["message"],
        json!(
            "unknown approval status `maybe` (expected pending, approved, denied, expired or abandoned)"
        )
    );
}

#[tokio::test]
async fn a_denied_call_ends_approval_denied() {
    let s = TestServer::start().await;
    let call = json!({"tool": "writer", "arguments": {"note": "no"}});
    let id = approval_id(&s.call(Some(DEV), call.clone()).await);
    let denied = s
        .post_json(
            &format!("/v1/approvals/{id}/decision"),
            Some(OP),
            &json!({"approve": false, "reason": "not today"}),
            200,
        )
        .await;
    assert_eq!(denied["status"], json!("denied"));
    let env = s.call(Some(DEV), call).await;
    assert_eq!(code(&env), "approval_denied");
}

/// The attack of issue 12, item 2: a command padded past 2,000 characters with spaces, the
/// dangerous part at the end. The operator's view must hold all of it, and the view with
/// whitespace made visible must show where the padding is.
pub fn sneaky_command() -> String {
    format!("echo hi{}; echo SNEAKY > f", " ".repeat(2100))
}

#[tokio::test]
async fn an_approver_sees_the_payload_hidden_past_2000_characters() {
    let s = TestServer::start().await;
    let sneaky = sneaky_command();
    let env = s
        .call(
            Some(DEV),
            json!({"tool": "writer", "arguments": {"note": sneaky, "path": "a\r\u{1b}[2Kb\u{202e}c\u{200b}d"}}),
        )
        .await;
    let id = approval_id(&env);
    let shown = s
        .get_json(&format!("/v1/approvals/{id}"), Some(OP), 200)
        .await;
    // The whole (redacted) arguments, exactly as the call carries them.
    assert_eq!(shown["arguments"]["note"], json!(sneaky));
    assert!(shown.to_string().contains("SNEAKY"));
    // The view: whitespace runs and invisible characters become visible markers.
    assert_eq!(
        shown["arguments_view"],
        json!({"note": "echo hi⟨2100 spaces⟩; echo SNEAKY > f",
               "path": "a⟨CR⟩⟨ESC⟩[2Kb⟨U+202E⟩c⟨U+200B⟩d"})
    );
    assert_eq!(shown["arguments_hidden"], json!(true));
    // The listing and the event stream carry the same object.
    let listed = s.get_json("/v1/approvals", Some(OP), 200).await;
    assert_eq!(listed[0], shown);
    // Secrets are still masked: the store keeps the redacted arguments, not the raw ones.
    let env = s
        .call(
            Some(DEV),
            json!({"tool": "writer", "arguments": {"note": format!("{}curl -H 'Authorization: Bearer ghp_abcdefghijklmnopqrstuvwxyz0123456789' x", " ".repeat(2100))}}),
        )
        .await;
    let id = approval_id(&env);
    let shown = s
        .get_json(&format!("/v1/approvals/{id}"), Some(OP), 200)
        .await;
    let note = shown["arguments"]["note"].as_str().unwrap();
    assert!(note.contains("curl -H"), "{note}");
    assert!(!note.contains("ghp_abcdef"), "{note}");
    // The audit keeps its digest rule for the same call.
    let records = s.get_json("/v1/audit?tool=writer", Some(OP), 200).await;
    let digested = records
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["arguments"]["note"].get("sha256").is_some());
    assert!(digested, "{records}");
}

/// Sends a waiting call on a raw connection and returns it with its pending request's id.
async fn wait_on_a_raw_connection(s: &TestServer, keep: bool) -> (tokio::net::TcpStream, String) {
    use tokio::io::AsyncWriteExt;
    let body = json!({"tool": "writer", "arguments": {"note": "w"}, "wait_for_approval": true,
        "keep_approval": keep})
    .to_string();
    let request = format!(
        "POST /v1/calls HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {DEV}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut conn = tokio::net::TcpStream::connect(s.addr).await.unwrap();
    conn.write_all(request.as_bytes()).await.unwrap();
    let id = eventually("the pending request", || async {
        let list = s.get_json("/v1/approvals", Some(OP), 200).await;
        list[0]["id"].as_str().map(str::to_owned)
    })
    .await;
    (conn, id)
}

#[tokio::test]
async fn a_client_that_stops_waiting_leaves_no_request_to_approve() {
    let s = TestServer::start().await;
    let (conn, id) = wait_on_a_raw_connection(&s, false).await;
    drop(conn);
    let abandoned = eventually("the request abandoned", || async {
        let r = s
            .get_json(&format!("/v1/approvals/{id}"), Some(OP), 200)
            .await;
        (r["status"] == json!("abandoned")).then_some(r)
    })
    .await;
    assert!(
        abandoned["reason"]
            .as_str()
            .unwrap()
            .contains("client went away"),
        "{abandoned}"
    );
    // Not listed as pending, and an operator who approves anyway is refused with 409.
    let pending = s.get_json("/v1/approvals", Some(OP), 200).await;
    assert_eq!(pending, json!([]));
    let refused = s
        .post_json(
            &format!("/v1/approvals/{id}/decision"),
            Some(OP),
            &json!({"approve": true, "scope": "always"}),
            409,
        )
        .await;
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("abandoned"),
        "{refused}"
    );
    assert_eq!(
        s.get_json("/v1/approvals?status=abandoned", Some(OP), 200)
            .await
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[tokio::test]
async fn a_client_may_keep_its_request_for_a_retry() {
    let s = TestServer::start().await;
    let (conn, id) = wait_on_a_raw_connection(&s, true).await;
    drop(conn);
    // Once the cancelled call is audited the server is done with it; the request must
    // still be pending and approvable.
    eventually("the cancelled call in the audit", || async {
        let records = s
            .get_json("/v1/audit?tool=writer&outcome=cancelled", Some(OP), 200)
            .await;
        records.as_array().unwrap().first().cloned()
    })
    .await;
    let r = s
        .get_json(&format!("/v1/approvals/{id}"), Some(OP), 200)
        .await;
    assert_eq!(r["status"], json!("pending"), "{r}");
    s.post_json(
        &format!("/v1/approvals/{id}/decision"),
        Some(OP),
        &json!({"approve": true}),
        200,
    )
    .await;
    let env = s
        .call(
            Some(DEV),
            json!({"tool": "writer", "arguments": {"note": "w"}}),
        )
        .await;
    assert_eq!(code(&env), "ok", "{env}");
}

/// A caller that is no operator cannot approve its own request over the API: refused 403
/// before the store is touched, the request stays pending, and the attempt is in the audit
/// (the decision desk records refusals; before it, this left no trace). An unknown id gets
/// the same 403, so a non-operator learns nothing about which ids exist.
#[tokio::test]
async fn a_non_operator_approving_its_own_request_is_refused_and_recorded() {
    let s = TestServer::start().await;
    let env = s
        .call(Some(DEV), json!({"tool": "writer", "arguments": {}}))
        .await;
    let id = approval_id(&env);
    let path = format!("/v1/approvals/{id}/decision");
    let refused = s
        .post_json(&path, Some(DEV), &json!({"approve": true}), 403)
        .await;
    assert_eq!(refused["error"]["code"], "forbidden");
    let unknown = s
        .post_json(
            "/v1/approvals/apr_000000000000/decision",
            Some(DEV),
            &json!({"approve": true}),
            403,
        )
        .await;
    assert_eq!(unknown["error"]["message"], refused["error"]["message"]);
    let now = s
        .get_json(&format!("/v1/approvals/{id}"), Some(OP), 200)
        .await;
    assert_eq!(now["status"], "pending");

    let records: Vec<Value> = s
        .audit_lines()
        .into_iter()
        .filter(|r| r["source"] == "approvals:api")
        .collect();
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(
        (
            &records[0]["principal"],
            &records[0]["outcome"],
            &records[0]["approval_id"],
            &records[0]["approver"]
        ),
        (&json!("bob"), &json!("forbidden"), &json!(id), &Value::Null)
    );
}
