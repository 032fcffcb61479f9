//! A toolgate server loaded with the MCP conformance suite's fixtures — TEST ONLY, never part
//! of the default catalog. The fixture tools are ordinary catalog tools behind the full
//! gateway pipeline (role `default`, read risk: allowed without approval); resources,
//! prompts, completions and logging come through the `McpExtras` extension point. The
//! router keeps the production guards (Host/Origin check, authentication).
//!
//! ```text
//! cargo run -p toolgate-server --example conformance_server -- [ADDR:PORT]
//! ```
//! Prints `listening on http://ADDR/mcp` on stdout, then serves until killed. State lives in a
//! temporary directory removed at exit.

#![allow(clippy::print_stdout, clippy::print_stderr)]

mod extras;
mod fixtures;

use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use toolgate_audit::{AuditLog, Durability};
use toolgate_gateway::{Gateway, GatewayConfig, GatewayDeps};
use toolgate_registry::Catalog;
use toolgate_server::config::AnonymousConfig;
use toolgate_server::mcp::McpOptions;
use toolgate_server::{AppState, Inner, ServerConfig, auth, mcp};
use toolgate_store::approvals::ApprovalStore;
use toolgate_store::idempotency::IdempotencyStore;
use toolgate_store::redact::Redactor;
use toolgate_store::results::ResultStore;

type Failure = Box<dyn std::error::Error + Send + Sync>;

#[tokio::main]
async fn main() -> Result<(), Failure> {
    let listen = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:0".to_owned());
    let dir = tempfile::tempdir()?;
    let db = dir.path().join("toolgate.db");
    let audit_jsonl = dir.path().join("logs/tool-audit.jsonl");
    std::fs::create_dir_all(dir.path().join("logs"))?;
    let catalog = Arc::new(Catalog::new());
    let lists = fixtures::Lists::new(Arc::clone(&catalog));
    catalog.register_many(fixtures::tools(&lists))?;
    let approvals = Arc::new(ApprovalStore::open(&db)?);
    let deps = GatewayDeps {
        catalog,
        audit: Arc::new(AuditLog::open(&audit_jsonl, &db, Durability::Buffered)?),
        approvals: Arc::clone(&approvals),
        results: Arc::new(ResultStore::open(&dir.path().join("results"))?),
        idempotency: Arc::new(IdempotencyStore::open(&db)?),
        redactor: Arc::new(Redactor::default()),
        approver: None,
        quota_buckets: std::sync::Arc::new(toolgate_store::quotas::MemoryBuckets::default()),
    };
    let gateway = Arc::new(Gateway::new(deps, &GatewayConfig::default())?);
    let listener = TcpListener::bind(&listen).await?;
    let local_addr = listener.local_addr()?;
    let config = ServerConfig {
        anonymous: Some(AnonymousConfig {
            role: "default".into(),
            principal: "conformance".into(),
            operator: false,
        }),
        ..ServerConfig::default()
    };
    let state = AppState::new(Inner {
        gateway,
        approvals,
        audit_jsonl,
        audit_db: db,
        config,
        local_addr,
        started: Instant::now(),
        shutdown: CancellationToken::new(),
    });
    let options = McpOptions {
        extras: Arc::new(extras::ConformanceExtras { lists }),
        ..McpOptions::default()
    };
    let app = Router::new()
        .merge(mcp::routes_with(options))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            auth::authenticate,
        ))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            auth::check_host_and_origin,
        ))
        .with_state(state);
    println!("listening on http://{local_addr}/mcp");
    axum::serve(listener, app).await?;
    drop(dir);
    Ok(())
}
