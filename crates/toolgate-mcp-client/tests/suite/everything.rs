//! server-everything (the reference test server) over stdio and Streamable HTTP: naming,
//! the legacy-era fallback, and results that keep their content types and progress.

use std::time::Duration;

use serde_json::json;
use toolgate_mcp_client::{
    McpEvent, McpHub, ServerConfig, ServerState, ServerStatus, TransportKind,
};
use toolgate_protocol::{ContentBlock, ToolOutput};
use toolgate_registry::Catalog;

use super::peers::{
    HttpPeer, STARTUP, call, call_with, ctx, everything_stdio, names, start, wait_event,
};

const TOOLS: [&str; 13] = [
    "mcp__everything__echo",
    "mcp__everything__get-annotated-message",
    "mcp__everything__get-env",
    "mcp__everything__get-resource-links",
    "mcp__everything__get-resource-reference",
    "mcp__everything__get-structured-content",
    "mcp__everything__get-sum",
    "mcp__everything__get-tiny-image",
    "mcp__everything__gzip-file-as-resource",
    "mcp__everything__toggle-simulated-logging",
    "mcp__everything__toggle-subscriber-updates",
    "mcp__everything__trigger-long-running-operation",
    "mcp__everything__simulate-research-query",
];

fn ready(transport: TransportKind, tools: usize) -> ServerStatus {
    ServerStatus {
        name: "everything".into(),
        source: "mcp:everything".into(),
        transport,
        state: ServerState::Ready,
        protocol_version: Some("2025-11-25".into()),
        tools,
        restarts: 0,
        polling: None,
    }
}

async fn exercise(hub: &McpHub, catalog: &Catalog) {
    let mut expected: Vec<String> = TOOLS.iter().map(|s| (*s).to_owned()).collect();
    expected.sort();
    assert_eq!(names(catalog, "mcp:everything"), expected);

    assert_eq!(
        call(
            catalog,
            "mcp__everything__echo",
            json!({"message": "hello"})
        )
        .await
        .unwrap(),
        ToolOutput::text("Echo: hello")
    );
    assert_eq!(
        call(catalog, "mcp__everything__get-sum", json!({"a": 2, "b": 3}))
            .await
            .unwrap(),
        ToolOutput::text("The sum of 2 and 3 is 5.")
    );

    let image = call(catalog, "mcp__everything__get-tiny-image", json!({}))
        .await
        .unwrap();
    let png = match image.content.first() {
        Some(ContentBlock::Image { data, .. }) => data.clone(),
        _ => panic!("the image block is kept: {image:?}"),
    };
    assert!(png.starts_with("iVBORw0KGgo"), "base64 PNG data kept");
    assert_eq!(
        image,
        ToolOutput {
            data: json!("Here's the image you requested:"),
            content: vec![
                ContentBlock::Image {
                    data: png,
                    mime_type: "image/png".into()
                },
                ContentBlock::Text {
                    text: "The image above is the MCP logo.".into()
                },
            ],
            mcp_result: None,
        }
    );

    // structuredContent is the data; its JSON copy in a text block is not repeated.
    assert_eq!(
        call(
            catalog,
            "mcp__everything__get-structured-content",
            json!({"location": "New York"}),
        )
        .await
        .unwrap(),
        ToolOutput::json(json!({"temperature": 33, "conditions": "Cloudy", "humidity": 82}))
    );

    // Progress notifications reach the caller's progress sink and the event channel,
    // tagged with our call id.
    let mut events = hub.events();
    let reported = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = {
        let reported = std::sync::Arc::clone(&reported);
        toolgate_core::ProgressSink::new(move |u| {
            reported.lock().unwrap().push((u.progress, u.total));
        })
    };
    let out = call_with(
        catalog,
        "mcp__everything__trigger-long-running-operation",
        json!({"duration": 1, "steps": 3}),
        toolgate_core::ToolContext {
            progress: sink,
            ..ctx("call_progress")
        },
    )
    .await
    .unwrap();
    assert!(
        matches!(&out.data, serde_json::Value::String(s) if s.contains("completed")),
        "{out:?}"
    );
    let mut seen = Vec::new();
    while seen.len() < 3 {
        let step = wait_event(&mut events, STARTUP, |e| match e {
            McpEvent::Progress {
                server,
                call_id,
                progress,
                total,
                ..
            } if server == "everything" => Some((call_id.clone(), *progress, *total)),
            _ => None,
        })
        .await;
        seen.push(step);
    }
    let id = Some("call_progress".to_owned());
    assert_eq!(
        seen,
        [
            (id.clone(), 1.0, Some(3.0)),
            (id.clone(), 2.0, Some(3.0)),
            (id, 3.0, Some(3.0))
        ]
    );
    // The channel saw all three, so the sink (called first, in the same handler) did too.
    assert_eq!(
        *reported.lock().unwrap(),
        [(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_over_stdio_falls_back_to_initialize_and_keeps_content_types() {
    let (hub, catalog) = start(vec![everything_stdio("everything")]).await;
    assert_eq!(hub.status(), [ready(TransportKind::Stdio, TOOLS.len())]);
    exercise(&hub, &catalog).await;
    hub.shutdown().await;
    assert_eq!(hub.status()[0].state, ServerState::Stopped);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_over_streamable_http() {
    let peer = HttpPeer::everything();
    let config = ServerConfig::http("everything", &peer.url).with_startup_timeout(STARTUP);
    let (hub, catalog) = start(vec![config]).await;
    assert_eq!(
        hub.status(),
        [ready(TransportKind::StreamableHttp, TOOLS.len())]
    );
    exercise(&hub, &catalog).await;
    hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_cancelled_by_the_caller_returns_cancelled() {
    let (hub, catalog) = start(vec![everything_stdio("everything")]).await;
    let (c, token) = super::peers::cancellable("call_cancel");
    let canceller = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        token.cancel();
    });
    let err = call_with(
        &catalog,
        "mcp__everything__trigger-long-running-operation",
        json!({"duration": 30, "steps": 30}),
        c,
    )
    .await
    .unwrap_err();
    canceller.await.unwrap();
    assert_eq!(err, toolgate_core::ToolError::Cancelled);
    // The connection is still good after a cancelled call.
    assert_eq!(
        call(
            &catalog,
            "mcp__everything__echo",
            json!({"message": "after"})
        )
        .await
        .unwrap(),
        ToolOutput::text("Echo: after")
    );
    hub.shutdown().await;
}

/// `simulate-research-query` runs only as an MCP task (`taskSupport: required`). rmcp's
/// tool model does not carry `execution`, so the refusal of the first call tells: that call
/// is `unavailable` with the reason, and from then on the catalog shows the tool
/// unavailable — it is no longer offered as callable and failing every time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_only_tool_is_marked_unavailable_with_the_reason() {
    let (hub, catalog) = start(vec![everything_stdio("everything")]).await;
    let name = "mcp__everything__simulate-research-query";
    let err = call(&catalog, name, json!({"topic": "tasks"}))
        .await
        .unwrap_err();
    let reason = "MCP server `everything` runs this tool only as an MCP task \
                  (taskSupport: required), which toolgate does not run yet; the tool is \
                  unavailable until then";
    assert_eq!(err, toolgate_core::ToolError::Unavailable(reason.into()));
    let deadline = tokio::time::Instant::now() + STARTUP;
    loop {
        let availability = catalog.get(name).unwrap().availability;
        if availability == toolgate_registry::Availability::Unavailable(reason.into()) {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "still {availability:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The other tools are untouched.
    assert!(catalog.get("mcp__everything__echo").unwrap().is_available());
    hub.shutdown().await;
}
