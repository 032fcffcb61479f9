//! The contract check bites: answers that break the OpenAPI document — a body against its
//! declared schema, an undeclared status, another content type, a malformed event — fail it,
//! with the route, the status and what broke; and requests find the route the router serves.

use serde_json::{Value, json};

use crate::contract::{Route, assert_answer, assert_event, check, route};
use crate::fixture::{OP, TestServer, approval_id};

const JSON: Option<&str> = Some("application/json");

fn bytes(v: &Value) -> Vec<u8> {
    serde_json::to_vec(v).unwrap()
}

#[tokio::test]
async fn an_approval_that_breaks_its_schema_fails_the_check() {
    let s = TestServer::start().await;
    let pending = s
        .call(
            Some(OP),
            json!({"tool": "writer", "arguments": {"note": "a"}}),
        )
        .await;
    let id = approval_id(&pending);
    let path = format!("/v1/approvals/{id}");
    let real = s.get_json(&path, Some(OP), 200).await;
    assert_eq!(check("GET", &path, 200, JSON, Some(&bytes(&real))), Ok(()));

    let mut broken = real.clone();
    broken["status"] = json!("maybe");
    broken.as_object_mut().unwrap().remove("tool");
    broken["created_at"] = json!("yesterday");
    let why = check("GET", &path, 200, JSON, Some(&bytes(&broken))).unwrap_err();
    assert!(
        why.starts_with("the body breaks the declared schema: "),
        "{why}"
    );
    for part in [
        "\"maybe\"",
        "\"tool\" is a required property",
        "\"yesterday\"",
        "`/status`",
    ] {
        assert!(why.contains(part), "{part} in {why}");
    }
}

#[test]
fn an_error_body_that_breaks_its_schema_fails_the_check() {
    let body = json!({"error": {"code": "no_such_code", "message": "x", "retryable": false}});
    let why = check("GET", "/v1/tools/echo", 404, JSON, Some(&bytes(&body))).unwrap_err();
    assert!(
        why.contains("no_such_code") && why.contains("/error/code"),
        "{why}"
    );
    let why = check("GET", "/v1/tools/echo", 404, JSON, Some(b"not json")).unwrap_err();
    assert!(why.starts_with("the body is not JSON"), "{why}");
}

#[test]
fn an_undeclared_status_or_content_type_fails_the_check() {
    let why = check("GET", "/v1/health", 418, JSON, Some(b"{}")).unwrap_err();
    assert_eq!(
        why,
        "status 418 is not declared (the document declares [\"200\", \"403\"])"
    );
    let ok = bytes(&json!({"status": "ok", "uptime_secs": 1}));
    let why = check("GET", "/v1/health", 200, Some("text/plain"), Some(&ok)).unwrap_err();
    assert!(
        why.starts_with("content type `text/plain` is not declared"),
        "{why}"
    );
    let why = check("GET", "/v1/health", 200, None, Some(&ok)).unwrap_err();
    assert!(why.starts_with("content type `` is not declared"), "{why}");
    // A stream is checked by its content type.
    let stream = "/v1/approvals/stream";
    assert_eq!(
        check("GET", stream, 200, Some("text/event-stream"), None),
        Ok(())
    );
    assert!(check("GET", stream, 200, JSON, Some(b"[]")).is_err());
    // Off the routes: 404 and 405 with the error body, nothing else.
    let error =
        bytes(&json!({"error": {"code": "invalid_arguments", "message": "x", "retryable": false}}));
    assert_eq!(check("GET", "/v1/nope", 404, JSON, Some(&error)), Ok(()));
    assert!(check("GET", "/v1/nope", 200, JSON, Some(b"{}")).is_err());
    assert_eq!(
        check("DELETE", "/v1/tools", 405, JSON, Some(&error)),
        Ok(())
    );
    assert!(check("DELETE", "/v1/tools", 405, JSON, Some(b"{}")).is_err());
}

#[test]
#[should_panic(
    expected = "the answer to GET /v1/me breaks the OpenAPI document (GET /v1/me → 200): the body breaks the declared schema"
)]
fn a_failed_check_fails_the_test_naming_route_status_and_body() {
    let body = json!({"principal": "alice", "role": "default", "operator": "yes"});
    assert_answer("GET", "/v1/me", 200, JSON, Some(&bytes(&body)));
}

#[test]
#[should_panic(expected = "an approval event breaks the declared schema")]
fn a_malformed_approval_event_fails_the_check() {
    assert_event("approval", &json!({"id": "apr_000000000000"}));
}

#[test]
#[should_panic(expected = "the event breaks the declared event shape")]
fn an_undeclared_event_fails_the_check() {
    assert_event("mystery", &json!({}));
}

#[test]
fn requests_find_the_route_the_router_serves() {
    let op = |m: &str, t: &'static str| Route::Operation(m.into(), t);
    assert_eq!(
        route("GET", "/v1/tools/export?format=mcp"),
        op("GET", "/v1/tools/export")
    );
    assert_eq!(
        route("GET", "/v1/tools/echo"),
        op("GET", "/v1/tools/{name}")
    );
    assert_eq!(
        route("GET", "/v1/approvals/stream"),
        op("GET", "/v1/approvals/stream")
    );
    assert_eq!(
        route("POST", "/v1/approvals/apr_1/decision"),
        op("POST", "/v1/approvals/{id}/decision")
    );
    assert_eq!(
        route("GET", "http://localhost:1@evil.com/v1/health"),
        op("GET", "/v1/health")
    );
    assert_eq!(route("POST", "/v1/tools"), Route::OtherMethod("/v1/tools"));
    assert_eq!(route("GET", "/v1/tools/"), Route::Nowhere);
    assert_eq!(route("GET", "/v1"), Route::Nowhere);
    assert_eq!(route("POST", "/mcp"), Route::Outside);
    assert_eq!(route("GET", "/"), Route::Outside);
}

/// The document once declared no 500 for the store-backed routes, which answer it when the
/// approvals store fails.
#[tokio::test]
async fn a_failing_store_answers_the_declared_500() {
    let s = TestServer::start().await;
    let db = rusqlite::Connection::open(crate::fixture::db_path(s.dir.path())).unwrap();
    db.execute_batch("DROP TABLE approvals").unwrap();
    let body = s.get_json("/v1/approvals", Some(OP), 500).await;
    assert_eq!(body["error"]["code"], json!("execution_failed"), "{body}");
}

/// Every JSON answer the document declares has a schema that compiles, whether or not a test
/// meets that status.
#[test]
fn every_declared_schema_compiles() {
    let doc = toolgate_server::api::openapi::document("http://127.0.0.1:1");
    let mut checked = 0;
    for r in toolgate_server::api::ROUTES {
        let responses = &doc["paths"][r.path][r.method.to_ascii_lowercase()]["responses"];
        for (status, answer) in responses.as_object().unwrap() {
            if answer["content"].get("application/json").is_none() {
                continue;
            }
            let status: u16 = status.parse().unwrap();
            if let Err(why) = check(r.method, r.path, status, JSON, Some(b"null")) {
                assert!(
                    !why.contains("does not compile"),
                    "{} {}: {why}",
                    r.method,
                    r.path
                );
            }
            checked += 1;
        }
    }
    assert!(checked > 40, "{checked}");
}
