//! The Python SDK's MCPServer: both protocol eras on both transports, the tool spec and the
//! trust rule, `isError` results, cancellation reaching the server, and `list_changed`.

use std::time::Duration;

use serde_json::json;
use toolgate_core::ToolError;
use toolgate_mcp_client::{McpEvent, ProtocolChoice, ServerConfig, TransportKind};
use toolgate_protocol::{Annotations, Risk, ToolOutput, ToolSpec};

use super::peers::{HttpPeer, STARTUP, call, call_with, cancellable, py_stdio, start, wait_event};

async fn era(config: ServerConfig, transport: TransportKind, version: &str) {
    let (hub, catalog) = start(vec![config]).await;
    let status = &hub.status()[0];
    assert_eq!(
        (status.transport, status.protocol_version.as_deref()),
        (transport, Some(version)),
        "{status:?}"
    );
    assert_eq!(
        call(&catalog, "mcp__py__add", json!({"a": 2, "b": 3}))
            .await
            .unwrap(),
        ToolOutput::json(json!({"result": 5}))
    );
    hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_negotiates_2026_07_28_by_default() {
    era(py_stdio("py"), TransportKind::Stdio, "2026-07-28").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_speaks_2025_11_25_when_told_to() {
    let config = py_stdio("py").with_protocol(ProtocolChoice::Initialize);
    era(config, TransportKind::Stdio, "2025-11-25").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_negotiates_2026_07_28_by_default() {
    let peer = HttpPeer::python();
    let config = ServerConfig::http("py", &peer.url).with_startup_timeout(STARTUP);
    era(config, TransportKind::StreamableHttp, "2026-07-28").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_speaks_2025_11_25_when_told_to() {
    let peer = HttpPeer::python();
    let config = ServerConfig::http("py", &peer.url)
        .with_startup_timeout(STARTUP)
        .with_protocol(ProtocolChoice::Initialize);
    era(config, TransportKind::StreamableHttp, "2025-11-25").await;
}

fn add_spec(risk: Risk, open_world: Option<bool>) -> ToolSpec {
    ToolSpec::new(
        "mcp__py__add",
        "Add two integers.",
        json!({
            "type": "object",
            "properties": {
                "a": {"title": "A", "type": "integer"},
                "b": {"title": "B", "type": "integer"}
            },
            "required": ["a", "b"],
            "title": "addArguments"
        }),
    )
    .with_risk(risk)
    .with_annotations(Annotations {
        read_only_hint: Some(true),
        open_world_hint: open_world,
        ..Annotations::default()
    })
    .with_source("mcp:py")
    .with_tags(["mcp"])
    .with_output_schema(json!({
        "type": "object",
        "properties": {"result": {"title": "Result", "type": "integer"}},
        "required": ["result"],
        "title": "addOutput"
    }))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_a_trusted_servers_hints_lower_the_risk() {
    let (hub, catalog) = start(vec![py_stdio("py"), py_stdio("pyt").with_trusted(true)]).await;
    let untrusted = catalog.get("mcp__py__add").unwrap();
    assert_eq!(untrusted.spec(), &add_spec(Risk::Write, Some(true)));
    let trusted = catalog.get("mcp__pyt__add").unwrap();
    let expected = ToolSpec {
        name: "mcp__pyt__add".into(),
        source: "mcp:pyt".into(),
        ..add_spec(Risk::Read, None)
    };
    assert_eq!(trusted.spec(), &expected);
    hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_error_result_is_a_failure_with_the_servers_text() {
    let (hub, catalog) = start(vec![py_stdio("py")]).await;
    let err = call(&catalog, "mcp__py__fail", json!({"reason": "disk on fire"}))
        .await
        .unwrap_err();
    let text = "Error executing tool fail: disk on fire";
    let ToolError::Failed {
        message,
        retryable,
        details: Some(details),
    } = err
    else {
        panic!("{err:?}");
    };
    assert_eq!((message.as_str(), retryable), (text, false));
    // The whole result as the server sent it, for an MCP front end to pass on.
    assert_eq!(details["content"], json!([{"type": "text", "text": text}]));
    assert_eq!(details["isError"], true);
    assert_eq!(
        details["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "py-peer"
    );
    hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_call_cancels_it_on_the_server() {
    for protocol in [ProtocolChoice::Auto, ProtocolChoice::Initialize] {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("cancelled");
        let (hub, catalog) = start(vec![py_stdio("py").with_protocol(protocol)]).await;
        let (c, token) = cancellable("call_cancel");
        let canceller = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(500)).await;
            token.cancel();
        });
        let err = call_with(
            &catalog,
            "mcp__py__sleep",
            json!({"seconds": 60, "marker": marker.to_string_lossy()}),
            c,
        )
        .await
        .unwrap_err();
        canceller.await.unwrap();
        assert_eq!(err, ToolError::Cancelled);
        // The server creates the marker, then writes it: wait for the word, not the file.
        let deadline = tokio::time::Instant::now() + STARTUP;
        while std::fs::read_to_string(&marker).unwrap_or_default() != "cancelled" {
            assert!(
                tokio::time::Instant::now() < deadline,
                "{protocol:?}: the server never saw notifications/cancelled ({:?})",
                std::fs::read_to_string(&marker).ok()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        hub.shutdown().await;
    }
}

/// Issue 34, item 2: a 2026-07-28 server that offers `subscriptions/listen` but never
/// answers it is federated all the same — list changes are optional; before, the handshake
/// waited for the acknowledgment within the startup timeout and the server was retried
/// forever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_whose_listen_never_answers_is_federated_all_the_same() {
    let config = py_stdio("py")
        .with_protocol(ProtocolChoice::Auto)
        .with_env("PY_PEER_LISTEN", "silent")
        .with_startup_timeout(Duration::from_secs(4));
    let (hub, catalog) = start(vec![config]).await;
    let status = &hub.status()[0];
    assert_eq!(
        status.state,
        toolgate_mcp_client::ServerState::Ready,
        "{status:?}"
    );
    // The operator is told that its list changes are polled, and why.
    assert!(
        status
            .polling
            .as_deref()
            .is_some_and(|why| why.contains("subscriptions/listen")),
        "{status:?}"
    );
    assert_eq!(
        call(&catalog, "mcp__py__add", json!({"a": 2, "b": 3}))
            .await
            .unwrap(),
        ToolOutput::json(json!({"result": 5}))
    );
    hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_changed_refreshes_the_catalog_in_both_eras() {
    for (protocol, tool) in [
        (ProtocolChoice::Initialize, "legacy_extra"),
        (ProtocolChoice::Auto, "modern_extra"),
    ] {
        let (hub, catalog) = start(vec![py_stdio("py").with_protocol(protocol)]).await;
        let name = format!("mcp__py__{tool}");
        assert!(!catalog.has(&name));
        let mut events = hub.events();
        call(&catalog, "mcp__py__add_tool", json!({"name": tool}))
            .await
            .unwrap();
        let listed = wait_event(&mut events, STARTUP, |e| match e {
            McpEvent::ToolsChanged { tools, .. } if tools.contains(&name) => Some(tools.clone()),
            _ => None,
        })
        .await;
        assert_eq!(hub.status()[0].tools, listed.len(), "{protocol:?}");
        assert_eq!(
            hub.status()[0].polling,
            None,
            "changes are heard: {protocol:?}"
        );
        assert_eq!(
            call(&catalog, &name, json!({})).await.unwrap(),
            ToolOutput::json(json!({"result": tool})),
            "{protocol:?}"
        );
        let entry = catalog.get(&name).unwrap();
        assert_eq!(
            entry.tool.spec().description,
            format!("Added at run time: {tool}.")
        );
        hub.shutdown().await;
    }
}
