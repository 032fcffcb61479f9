//! The HTTP API end to end: a real server on 127.0.0.1:0 over an in-process gateway on temp
//! stores, driven with a real HTTP client. Every answer is checked against the OpenAPI
//! document ([`contract`]) by the client itself ([`checked`]) and by the raw-socket helpers
//! ([`raw`]).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

#[path = "api/checked.rs"]
mod checked;
#[path = "api/contract.rs"]
mod contract;
#[path = "api/fixture.rs"]
mod fixture;
#[path = "api/raw.rs"]
mod raw;

#[path = "api/approvals.rs"]
mod approvals;
#[path = "api/audit.rs"]
mod audit;
#[path = "api/auth.rs"]
mod auth;
#[path = "api/calls.rs"]
mod calls;
#[path = "api/export_rag.rs"]
mod export_rag;
#[path = "api/hostile.rs"]
mod hostile;
#[path = "api/limits.rs"]
mod limits;
#[path = "api/list_changed.rs"]
mod list_changed;
#[path = "api/mcp_json.rs"]
mod mcp_json;
#[path = "api/metrics.rs"]
mod metrics;
#[path = "api/pins.rs"]
mod pins;
#[path = "api/routes.rs"]
mod routes;
#[path = "api/shutdown.rs"]
mod shutdown;
#[path = "api/tool_lint.rs"]
mod tool_lint;
#[path = "api/webhook.rs"]
mod webhook;
#[path = "api/wire.rs"]
mod wire;
