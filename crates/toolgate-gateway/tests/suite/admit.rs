//! Issue 30, item 2: a call whose identifiers no store can hold (a NUL in the session id or
//! the tool name) is refused at the edge with `invalid_arguments`, and the refusal is
//! audited with the NUL escaped — where before it ran (a NUL session) or was answered
//! `unknown_tool` and, on PostgreSQL, never audited.

use serde_json::json;
use toolgate_gateway::{Arguments, CallRequest};

use super::fixture::{Harness, code};

#[tokio::test]
async fn a_nul_in_a_session_or_tool_name_is_refused_and_audited_escaped() {
    let h = Harness::new();
    let mut req = CallRequest::new("echo", Arguments::Json(json!({"text": "hi"})));
    req.session_id = "s\0evil".into();
    let e = h.gateway.call(req).await;
    assert_eq!(code(&e), "invalid_arguments", "{e:?}");
    let message = &e.error.as_ref().unwrap().message;
    assert!(message.contains("session id"), "{message}");

    let e = h.call("ec\0ho", json!({})).await;
    assert_eq!(code(&e), "invalid_arguments", "{e:?}");

    let lines = h.audit_lines();
    let seen: Vec<_> = lines
        .iter()
        .map(|r| {
            (
                r["kind"].as_str().unwrap(),
                r["session"].as_str().unwrap(),
                r["tool"].as_str().unwrap(),
                r["outcome"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("outcome", "s\\u0000evil", "echo", "invalid_arguments"),
            ("outcome", "default", "ec\\u0000ho", "invalid_arguments"),
        ]
    );
}
