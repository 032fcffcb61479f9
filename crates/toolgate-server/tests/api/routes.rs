//! Every route answers; the OpenAPI document lists exactly the routes; unknown paths and
//! methods answer with the one error body; health, readiness and who-am-I.

use std::collections::BTreeSet;

use serde_json::json;
use toolgate_server::api::{Access, ROUTES};

use crate::fixture::{DEV, OP, Setup, TestServer, answer, approval_id};

#[tokio::test]
async fn every_route_answers_an_operator_with_success() {
    use toolgate_testkit::chat_model::{Say, ScriptedModel};
    let model = ScriptedModel::new(&[
        Say::call("call_1", "writer", r#"{"note":"c"}"#),
        Say::text("fine"),
        Say::text("hello"),
    ]);
    let s = TestServer::with(Setup {
        model: Some(model),
        ..Setup::default()
    })
    .await;
    // A conversation whose turn waits for an approval: its card's routes have one to show.
    let conversation = s
        .post("/v1/conversations", Some(OP), &json!({"text": "write c"}))
        .send()
        .await
        .unwrap()
        .json::<serde_json::Value>()
        .await
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let card = conversation_card(&s, &conversation).await;
    let pending = s
        .call(
            Some(OP),
            json!({"tool": "writer", "arguments": {"note": "a"}}),
        )
        .await;
    let id = approval_id(&pending);
    let issued = s
        .post(
            "/v1/tokens",
            Some(OP),
            &json!({"principal": "p", "role": "default"}),
        )
        .send()
        .await
        .unwrap()
        .json::<serde_json::Value>()
        .await
        .unwrap();
    let token_id = issued["id"].as_str().unwrap().to_owned();
    for r in ROUTES {
        let id = if r.path.starts_with("/v1/tokens/") {
            &token_id
        } else if r.path.starts_with("/v1/conversations/") {
            &conversation
        } else {
            &id
        };
        let path = r
            .path
            .replace("{name}", "echo")
            .replace("{id}", id)
            .replace("{approval_id}", &card);
        let resp = match r.method {
            "GET" if r.path == "/v1/tools/export" => s.get(&format!("{path}?format=mcp"), Some(OP)),
            "GET" => s.get(&path, Some(OP)),
            "POST" => {
                let body = match r.path {
                    "/v1/calls" => json!({"tool": "echo", "arguments": {}}),
                    "/v1/approvals/{id}/decision" => json!({"approve": false}),
                    "/v1/tokens" => json!({"principal": "q", "role": "readonly"}),
                    "/v1/conversations/{id}/messages" => json!({"text": "/help"}),
                    "/v1/conversations/{id}/approvals/{approval_id}/decision" => {
                        json!({"approve": false})
                    }
                    "/v1/chat/completions" => {
                        json!({"messages": [{"role": "user", "content": "hi"}]})
                    }
                    _ => json!({}),
                };
                s.post(&path, Some(OP), &body)
            }
            other => panic!("unexpected method {other}"),
        };
        let resp = resp.send().await.unwrap();
        // What makes something answers 201; revoking first makes rotating a conflict.
        let expected = match r.path {
            "/v1/tokens" | "/v1/conversations" if r.method == "POST" => 201,
            "/v1/conversations/{id}/messages" => 202,
            "/v1/tokens/{id}/rotate" => 409,
            _ => 200,
        };
        assert_eq!(resp.status().as_u16(), expected, "{} {path}", r.method);
    }
}

/// The approval a conversation's turn waits for (polled for up to 10 s).
async fn conversation_card(s: &TestServer, id: &str) -> String {
    for _ in 0..500 {
        let got = s
            .get_json(&format!("/v1/conversations/{id}"), Some(OP), 200)
            .await;
        if let Some(card) = got["events"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["kind"] == "approval")
        {
            return card["approval_id"].as_str().unwrap().to_owned();
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    panic!("the conversation's turn never asked for approval");
}

#[tokio::test]
async fn the_openapi_document_lists_exactly_the_routes() {
    let s = TestServer::start().await;
    let doc = s.get_json("/openapi.json", None, 200).await;
    assert_eq!(doc["openapi"], json!("3.1.0"));
    assert_eq!(doc["servers"], json!([{"url": s.base}]));
    let documented: BTreeSet<(String, String)> = doc["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(path, item)| {
            item.as_object()
                .unwrap()
                .keys()
                .map(|m| (m.to_ascii_uppercase(), path.clone()))
                .collect::<Vec<_>>()
        })
        .collect();
    let routed: BTreeSet<(String, String)> = ROUTES
        .iter()
        .map(|r| (r.method.to_owned(), r.path.to_owned()))
        .collect();
    assert_eq!(documented, routed);
    let codes: Vec<&str> = toolgate_protocol::ErrorCode::ALL
        .iter()
        .map(|c| c.as_str())
        .collect();
    assert_eq!(
        doc["components"]["schemas"]["ErrorCode"]["enum"],
        json!(codes)
    );
}

#[tokio::test]
async fn unknown_paths_and_methods_answer_with_the_error_body() {
    let s = TestServer::start().await;
    let body = s.get_json("/v1/nope", Some(OP), 404).await;
    assert_eq!(
        body,
        json!({"error": {"code": "invalid_arguments", "message": "nothing at GET /v1/nope",
            "retryable": false, "hint": "GET /openapi.json lists the API"}})
    );
    let resp = s
        .client
        .delete(s.url("/v1/tools"))
        .bearer_auth(OP)
        .send()
        .await
        .unwrap();
    let body = answer(resp, 405).await;
    assert_eq!(
        body,
        json!({"error": {"code": "invalid_arguments", "message": "/v1/tools does not answer DELETE",
            "retryable": false, "hint": "GET /openapi.json lists the methods of each path"}})
    );
}

#[tokio::test]
async fn health_ready_and_me() {
    let s = TestServer::start().await;
    let health = s.get_json("/v1/health", None, 200).await;
    assert_eq!(health["status"], json!("ok"));
    assert!(health["uptime_secs"].is_u64());
    // An operator sees the servers; without a token (tokens are configured) nobody is known.
    assert_eq!(
        s.get_json("/v1/ready", None, 200).await,
        json!({"ready": true, "checks": {"audit": "ok", "approvals": "ok"}})
    );
    assert_eq!(
        s.get_json("/v1/ready", Some(OP), 200).await,
        json!({"ready": true, "checks": {"audit": "ok", "approvals": "ok"}, "mcp_servers": []})
    );
    assert_eq!(
        s.get_json("/v1/ready", Some(DEV), 200).await,
        json!({"ready": true, "checks": {"audit": "ok", "approvals": "ok"}})
    );
    assert_eq!(
        s.get_json("/v1/me", Some(OP), 200).await,
        json!({"principal": "alice", "role": "default", "operator": true})
    );
    let prm = s
        .get_json("/.well-known/oauth-protected-resource", None, 200)
        .await;
    assert_eq!(
        prm,
        json!({"resource": format!("{}/mcp", s.base), "authorization_servers": [],
            "scopes_supported": [], "bearer_methods_supported": ["header"],
            "resource_name": "toolgate"})
    );
}

#[tokio::test]
async fn not_ready_when_the_audit_log_cannot_be_opened() {
    let missing = std::env::temp_dir().join("toolgate-no-such-dir/x/tool-audit.jsonl");
    let s = TestServer::with(Setup {
        audit_jsonl: Some(missing.clone()),
        ..Setup::default()
    })
    .await;
    let body = s.get_json("/v1/ready", Some(OP), 503).await;
    let audit_check = body["error"]["details"]["checks"]["audit"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        audit_check.starts_with(&format!(
            "cannot open {} for appending: ",
            missing.display()
        )),
        "{audit_check}"
    );
    assert_eq!(
        body,
        json!({"error": {"code": "unavailable", "message": "the server is not ready",
            "retryable": true, "details": {"ready": false,
                "checks": {"audit": audit_check, "approvals": "ok"}, "mcp_servers": []}}})
    );
}

#[tokio::test]
async fn tools_are_those_of_the_callers_role() {
    let s = TestServer::start().await;
    let list = s.get_json("/v1/tools", Some(OP), 200).await;
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["danger", "echo", "read_result", "writer"]);
    assert_eq!(
        list[1],
        json!({"name": "echo", "description": "Scripted test tool echo.", "risk": "read",
            "source": "builtin", "availability": {"state": "available"}, "tags": ["test"],
            "annotations": {}, "pin": {"state": "unpinned"}})
    );

    let narrow = s
        .get_json("/v1/tools", Some(crate::fixture::NARROW), 200)
        .await;
    let names: Vec<&str> = narrow
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["echo"]);

    let shown = s.get_json("/v1/tools/writer", Some(OP), 200).await;
    assert_eq!(shown["name"], json!("writer"));
    assert_eq!(shown["risk"], json!("write"));
    assert_eq!(shown["availability"], json!({"state": "available"}));
    assert_eq!(shown["input_schema"]["type"], json!("object"));

    let hidden = s
        .get_json("/v1/tools/writer", Some(crate::fixture::NARROW), 404)
        .await;
    assert_eq!(
        hidden,
        json!({"error": {"code": "unknown_tool",
            "message": "no tool named `writer` is visible to role `narrow`", "retryable": false,
            "hint": "GET /v1/tools lists the tools you can call"}})
    );
}

#[tokio::test]
async fn export_in_each_format_and_refuse_unknown_ones() {
    let s = TestServer::start().await;
    let narrow = Some(crate::fixture::NARROW);
    let anthropic = s
        .get_json("/v1/tools/export?format=anthropic", narrow, 200)
        .await;
    assert_eq!(
        anthropic,
        json!([{"name": "echo", "description": "Scripted test tool echo.",
            "input_schema": s.get_json("/v1/tools/echo", narrow, 200).await["input_schema"]}])
    );
    for format in ["openai-chat", "openai-responses", "mcp", "gemini"] {
        let v = s
            .get_json(&format!("/v1/tools/export?format={format}"), narrow, 200)
            .await;
        assert!(v.is_array(), "{format}: {v}");
    }
    let bad = s
        .get_json("/v1/tools/export?format=cobol", narrow, 400)
        .await;
    assert_eq!(bad["error"]["code"], json!("invalid_arguments"));
    assert_eq!(
        bad["error"]["message"],
        json!(
            "unknown export format `cobol` (expected one of: openai-chat, openai-responses, anthropic, mcp, gemini)"
        )
    );
    let missing = s.get_json("/v1/tools/export", narrow, 400).await;
    assert_eq!(
        missing["error"]["message"],
        json!("the `format` query parameter is required")
    );
}

#[test]
fn public_routes_are_the_public_ones_of_the_table() {
    let public: Vec<&str> = ROUTES
        .iter()
        .filter(|r| r.access == Access::Public)
        .map(|r| r.path)
        .collect();
    assert_eq!(
        public,
        [
            "/v1/health",
            "/v1/ready",
            "/openapi.json",
            "/.well-known/oauth-protected-resource"
        ]
    );
}
