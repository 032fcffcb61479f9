//! The MCP server handler (`toolgate_server::mcp::serve_io`, what `toolgate serve --stdio`
//! runs) on fuzzer-written JSON-RPC lines, through an in-memory duplex into a gateway with
//! two harmless tools: `echo` (read) and `writer` (write; the connection's role allows
//! writes without approval).
//!
//! Input: the bytes the client sends, then the client hangs up. The corpus opens sessions
//! of both eras: `initialize` (2025-11-25) and `server/discover` plus per-request `_meta`
//! (2026-07-28), then `tools/list`, `tools/call`, pings, notifications and cancellations.
//! Properties: no panic; the connection ends within a few seconds of the hang-up whatever
//! was in flight; and everything the server writes
//! is JSON-RPC 2.0, one message a line.

use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use toolgate_audit::Durability;
use toolgate_core::{Tool, ToolContext, ToolError};
use toolgate_gateway::Caller;
use toolgate_gateway::policy::RoleConfig;
use toolgate_gateway::{Gateway, GatewayConfig, GatewayDeps};
use toolgate_protocol::{Risk, ToolOutput, ToolSpec};
use toolgate_registry::Catalog;
use toolgate_server::mcp::{McpOptions, serve_io};

/// How long the server may take to finish after the client hangs up.
const WIND_DOWN: Duration = Duration::from_secs(10);

/// Echoes its arguments; `sleep_ms` (at most 50) waits, watching cancellation; `fail` fails.
struct Harmless {
    spec: ToolSpec,
}

#[async_trait]
impl Tool for Harmless {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, args: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        if let Some(ms) = args.get("sleep_ms").and_then(Value::as_u64) {
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(ms.min(50))) => {}
                () = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
            }
        }
        if let Some(m) = args.get("fail").and_then(Value::as_str) {
            return Err(ToolError::failed(m));
        }
        Ok(ToolOutput::json(json!({ "echo": args })))
    }
}

fn harmless(name: &str, risk: Risk) -> Arc<dyn Tool> {
    let schema = json!({
        "type": "object",
        "properties": {
            "sleep_ms": {"type": "integer", "minimum": 0},
            "fail": {"type": "string"},
            "note": {"type": "string"}
        },
        "additionalProperties": false
    });
    Arc::new(Harmless {
        spec: ToolSpec::new(name, format!("Harmless fuzz tool {name}."), schema).with_risk(risk),
    })
}

struct Fixture {
    _dir: tempfile::TempDir,
    gateway: Arc<Gateway>,
    runtime: tokio::runtime::Runtime,
}

static FIXTURE: LazyLock<Fixture> = LazyLock::new(|| {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let gateway = runtime.block_on(async {
        let catalog = Arc::new(Catalog::new());
        catalog
            .register_many(vec![
                harmless("echo", Risk::Read),
                harmless("writer", Risk::Write),
            ])
            .unwrap_or_else(|e| panic!("{e}"));
        let deps = GatewayDeps::open_dir(dir.path(), catalog, Durability::Buffered)
            .unwrap_or_else(|e| panic!("{e}"));
        let mut cfg = GatewayConfig::default();
        cfg.limits.call_timeout_secs = 5;
        cfg.limits.max_argument_bytes = 4096;
        // Writes are allowed without approval: a call waiting for one holds the connection
        // open for rmcp's 5-second drain after the hang-up, which would make most inputs
        // cost seconds (the approval wait itself is covered by the server's tests).
        let fuzz: RoleConfig = toml::from_str("write = \"allow\"\ndangerous = \"ask\"\n")
            .unwrap_or_else(|e| panic!("{e}"));
        cfg.roles = BTreeMap::from([("fuzz".to_owned(), fuzz)]);
        Arc::new(Gateway::new(deps, &cfg).unwrap_or_else(|e| panic!("{e}")))
    });
    Fixture {
        _dir: dir,
        gateway,
        runtime,
    }
});

/// One input: see the module doc for the properties checked.
pub fn run(data: &[u8]) {
    let f = &*FIXTURE;
    let output = f.runtime.block_on(async {
        let (mut client_out, server_in) = tokio::io::duplex(1 << 16);
        let (server_out, mut client_in) = tokio::io::duplex(1 << 16);
        let caller = Caller::named("fuzzer", "fuzz", false);
        let server = tokio::spawn(serve_io(
            Arc::clone(&f.gateway),
            caller,
            McpOptions::default(),
            server_in,
            server_out,
        ));
        let reader = tokio::spawn(async move {
            let mut out = Vec::new();
            let _ = client_in.read_to_end(&mut out).await;
            out
        });
        // The server may stop reading early (a failed handshake): a write error is fine.
        let _ = client_out.write_all(data).await;
        let _ = client_out.shutdown().await;
        drop(client_out);
        let ended = tokio::time::timeout(WIND_DOWN, async {
            let _ = server.await;
            reader.await
        })
        .await;
        match ended {
            Ok(Ok(out)) => out,
            Ok(Err(e)) => panic!("the output reader failed: {e}"),
            Err(_) => panic!("the MCP connection did not end within {WIND_DOWN:?} of the hang-up"),
        }
    });
    let text = String::from_utf8(output).unwrap_or_else(|e| panic!("output is not UTF-8: {e}"));
    for line in text.lines() {
        let msg: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("the server wrote a line that is not JSON ({e}): {line}"));
        assert_eq!(msg["jsonrpc"], "2.0", "not a JSON-RPC 2.0 message: {line}");
    }
}
