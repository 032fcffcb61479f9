//! `GET /v1/tools/export` with Tool RAG: `query` runs `search_tools` through the gateway as
//! the caller and exports its top K plus `search_tools`; `deferred=true` gives the API's
//! deferred-loading form. A stand-in `search_tools` (toolgate-rag's is tested there) answers
//! with the tools its role may see.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Value, json};
use toolgate_core::{Tool, ToolContext, ToolError};
use toolgate_protocol::{ToolOutput, ToolSpec};

use crate::fixture::{DEV, NARROW, TestServer};

/// Answers every query with `writer` then `echo`.
struct SearchTools(ToolSpec);

#[async_trait]
impl Tool for SearchTools {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    async fn call(&self, args: Value, _: ToolContext) -> Result<ToolOutput, ToolError> {
        let k = args["k"].as_u64().unwrap_or(5) as usize;
        let tools: Vec<Value> = ["writer", "echo"]
            .iter()
            .take(k)
            .map(|n| json!({"name": n}))
            .collect();
        Ok(ToolOutput::json(
            json!({"query": args["query"], "tools": tools}),
        ))
    }
}

async fn server() -> TestServer {
    let s = TestServer::start().await;
    let spec = ToolSpec::new(
        "search_tools",
        "Find tools.",
        json!({"type": "object", "properties": {"query": {"type": "string"},
               "k": {"type": "integer"}}, "required": ["query"]}),
    );
    s.state
        .gateway
        .catalog()
        .register_many(vec![Arc::new(SearchTools(spec)) as Arc<dyn Tool>])
        .unwrap();
    s
}

fn names(v: &Value) -> Vec<&str> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap_or("?"))
        .collect()
}

#[tokio::test]
async fn query_exports_the_top_k_plus_search_tools_and_is_audited() {
    let s = server().await;
    let dev = Some(DEV);
    let v = s
        .get_json(
            "/v1/tools/export?format=anthropic&query=change%20a%20file&k=1",
            dev,
            200,
        )
        .await;
    assert_eq!(names(&v), ["writer", "search_tools"]);
    let v = s
        .get_json("/v1/tools/export?format=anthropic&query=anything", dev, 200)
        .await;
    assert_eq!(names(&v), ["writer", "echo", "search_tools"]);
    let audited = s.audit_lines();
    assert!(
        audited.iter().any(|r| r["tool"] == "search_tools"),
        "the search is a gateway call"
    );
    let empty = s
        .get_json("/v1/tools/export?format=anthropic&query=%20", dev, 400)
        .await;
    assert_eq!(empty["error"]["code"], "invalid_arguments");
}

#[tokio::test]
async fn deferred_forms_and_the_fallback() {
    let s = server().await;
    let dev = Some(DEV);
    let v = s
        .get_json(
            "/v1/tools/export?format=anthropic&deferred=true&query=x&k=1",
            dev,
            200,
        )
        .await;
    let list = v.as_array().unwrap();
    assert_eq!(
        list[0],
        json!({"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"})
    );
    for t in &list[1..] {
        assert_ne!(t["name"], "search_tools");
        assert_eq!(
            t.get("defer_loading").is_none(),
            t["name"] == "writer",
            "{t}"
        );
    }
    let v = s
        .get_json(
            "/v1/tools/export?format=openai-responses&deferred=true",
            dev,
            200,
        )
        .await;
    assert_eq!(v[0], json!({"type": "tool_search"}));
    assert!(
        v.as_array().unwrap()[1..]
            .iter()
            .all(|t| t["defer_loading"] == true)
    );
    // No deferred form: the query's top K, or a 400 that says so.
    let v = s
        .get_json(
            "/v1/tools/export?format=openai-chat&deferred=true&query=x",
            dev,
            200,
        )
        .await;
    let chat: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(chat, ["writer", "echo", "search_tools"]);
    let bad = s
        .get_json("/v1/tools/export?format=gemini&deferred=true", dev, 400)
        .await;
    assert!(
        bad["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no deferred-loading form"),
        "{bad}"
    );
}

#[tokio::test]
async fn a_role_without_search_tools_is_told_why() {
    let s = server().await;
    // `narrow` may see only echo.
    let v = s
        .get_json(
            "/v1/tools/export?format=anthropic&query=x",
            Some(NARROW),
            400,
        )
        .await;
    assert_eq!(v["error"]["code"], "invalid_arguments");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("search_tools"),
        "{v}"
    );
}
