//! `notifications/tools/list_changed` over MCP: a session hears about a change to the tools
//! its role sees, and nothing about tools it cannot see.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};
use toolgate_gateway::Caller;
use toolgate_protocol::Risk;
use toolgate_server::mcp::{McpOptions, serve_io};

use super::fixture::{TestServer, scripted};

struct Client {
    lines: Lines<BufReader<DuplexStream>>,
    out: DuplexStream,
}

impl Client {
    /// An initialized MCP session over stdio-style pipes, acting as `role`.
    async fn connect(server: &TestServer, role: &str) -> Client {
        let (client_out, server_in) = tokio::io::duplex(1 << 16);
        let (server_out, client_in) = tokio::io::duplex(1 << 16);
        let caller = Caller::named(format!("{role}-user"), role, false);
        tokio::spawn(serve_io(
            server.state.gateway.clone(),
            caller,
            McpOptions::default(),
            server_in,
            server_out,
        ));
        let mut c = Client {
            lines: BufReader::new(client_in).lines(),
            out: client_out,
        };
        c.send(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}}),
        )
        .await;
        let init = c
            .next(Duration::from_secs(30))
            .await
            .expect("initialize answer");
        assert_eq!(
            init["result"]["capabilities"]["tools"]["listChanged"], true,
            "{init}"
        );
        c.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        // The baseline: what the session was served.
        c.list().await;
        c
    }

    async fn list(&mut self) -> Vec<String> {
        self.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
            .await;
        let list = self
            .next(Duration::from_secs(30))
            .await
            .expect("tools/list answer");
        list["result"]["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("{list}"))
            .iter()
            .filter_map(|t| t["name"].as_str().map(str::to_owned))
            .collect()
    }

    async fn send(&mut self, v: Value) {
        let mut line = v.to_string();
        line.push('\n');
        self.out.write_all(line.as_bytes()).await.unwrap();
    }

    /// The next message, or None if none comes within `wait`.
    async fn next(&mut self, wait: Duration) -> Option<Value> {
        match tokio::time::timeout(wait, self.lines.next_line()).await {
            Ok(Ok(Some(line))) => Some(serde_json::from_str(&line).unwrap()),
            _ => None,
        }
    }
}

#[tokio::test]
async fn a_session_hears_of_changes_to_its_own_tools_only() {
    let server = TestServer::start().await;
    // `narrow` sees only echo; `auto` sees everything.
    let mut narrow = Client::connect(&server, "narrow").await;
    let mut auto = Client::connect(&server, "auto").await;
    server
        .state
        .gateway
        .catalog()
        .register(scripted("fresh", Risk::Read))
        .unwrap();
    let heard = auto
        .next(Duration::from_secs(30))
        .await
        .expect("auto was told");
    assert_eq!(
        heard["method"], "notifications/tools/list_changed",
        "{heard}"
    );
    // Both sessions check every second; `narrow` had three to speak up.
    assert!(
        narrow.next(Duration::from_secs(3)).await.is_none(),
        "a change to a hidden tool was announced"
    );
    // The list `auto` re-reads holds the new tool; one notice per change.
    assert!(auto.list().await.contains(&"fresh".to_owned()));
    assert!(
        auto.next(Duration::from_secs(3)).await.is_none(),
        "the same change was announced twice"
    );
}
