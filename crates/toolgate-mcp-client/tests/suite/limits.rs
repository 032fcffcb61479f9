//! A hostile server's results that break the client's limits end the call at once with the
//! right code, instead of leaving it to wait out the whole call timeout and end `timeout`
//! (issue 12, item 9): over the 16 MiB message limit → `result_too_large`; nested deeper
//! than the decoder's limit → `execution_failed`. The connection stays usable after each.
//!
//! The call timeout is a long 60 s, so a hang shows as the wrong code (`timeout`); no test
//! asserts a time.

use std::time::Duration;

use serde_json::json;
use toolgate_mcp_client::{ProtocolChoice, ServerConfig};
use toolgate_protocol::{ErrorCode, ToolOutput};

use super::peers::{STARTUP, call, peer_script, python, start};

fn hostile() -> ServerConfig {
    ServerConfig::stdio("hostile", python())
        .with_args([peer_script("hostile.py")])
        .with_protocol(ProtocolChoice::Initialize)
        .with_startup_timeout(STARTUP)
        .with_call_timeout(Duration::from_secs(60))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_and_too_deep_results_fail_at_once_with_their_own_codes() {
    let (hub, catalog) = start(vec![hostile()]).await;
    let ok = || call(&catalog, "mcp__hostile__ok", json!({}));
    for (tool, code, says) in [
        (
            "mcp__hostile__huge",
            ErrorCode::ResultTooLarge,
            "MCP server `hostile`: the result is over the MCP message limit of 16777216 bytes",
        ),
        (
            "mcp__hostile__huge_id_last",
            ErrorCode::ResultTooLarge,
            "MCP server `hostile`: the result is over the MCP message limit of 16777216 bytes",
        ),
        // Issue 30, 30.24: no newline after it, so the line never ended: it waited out
        // `call_timeout` (here `timeout` after 60 s).
        (
            "mcp__hostile__huge_unended",
            ErrorCode::ResultTooLarge,
            "MCP server `hostile`: the result is over the MCP message limit of 16777216 bytes",
        ),
        (
            "mcp__hostile__deep",
            ErrorCode::ExecutionFailed,
            "MCP server `hostile`: the server's response could not be decoded: recursion limit exceeded",
        ),
    ] {
        let err = call(&catalog, tool, json!({})).await.unwrap_err();
        assert_eq!(err.code(), code, "{tool}: {err}");
        assert!(err.to_string().starts_with(says), "{tool}: {err}");
        assert_eq!(
            ok().await.unwrap(),
            ToolOutput::json(json!("fine")),
            "after {tool}"
        );
    }
    assert_eq!(hub.status()[0].restarts, 0, "{:?}", hub.status());
    hub.shutdown().await;
}
