//! `GET /v1/tools/{name}` carries the definition check's findings (`lint`), checked against
//! the OpenAPI document like every answer; without a check, an empty list.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::fixture::{DEV, Setup, TestServer};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tools_page_shows_what_the_definition_check_found() {
    let check = Arc::new(|spec: &toolgate_protocol::ToolSpec| {
        vec![json!({
            "tool": spec.name,
            "rule": "boundary",
            "severity": "warning",
            "message": format!("`{}` does not say when not to use it", spec.name),
            "fix": "add a sentence naming the tool to use instead",
        })]
    });
    let server = TestServer::with(Setup {
        definition_check: Some(check),
        ..Setup::default()
    })
    .await;
    let tool = server.get_json("/v1/tools/echo", Some(DEV), 200).await;
    let lint = tool["lint"].as_array().expect("lint is a list");
    assert_eq!(lint.len(), 1);
    assert_eq!(lint[0]["tool"], "echo");
    assert_eq!(lint[0]["severity"], "warning");
    assert!(lint[0]["fix"].as_str().is_some_and(|f| !f.is_empty()));

    let plain = TestServer::start().await;
    let tool = plain.get_json("/v1/tools/echo", Some(DEV), 200).await;
    assert_eq!(tool["lint"], Value::Array(Vec::new()));
}
