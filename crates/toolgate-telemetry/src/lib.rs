//! OpenTelemetry for toolgate (issue 17; docs/telemetry.md).
//!
//! - [`config`]: the `[telemetry]` table and how it meets the standard `OTEL_*` variables.
//! - [`install`]: the one place the SDK is set up — a batched OTLP/HTTP (protobuf) span
//!   exporter when tracing is on, and a meter provider whose readers are the periodic OTLP
//!   export and this process's own `/metrics`. Nothing is installed: spans are never
//!   started and every instrument is a no-op.
//! - [`metrics`](mod@metrics): every instrument toolgate records into, named by the conventions (or
//!   `toolgate.*` where they name none).
//! - [`spans`]: the tracer, and the bridge between a [`toolgate_core::TraceContext`] (what
//!   crosses HTTP and MCP `_meta`) and the spans toolgate starts.
//! - [`operation`]: an operation timed into a histogram and, traced, a span (MCP requests
//!   answered and sent, model requests).
//! - [`prometheus`]: the Prometheus text exposition of a metrics collection.
//! - [`names`]: the attribute names used, in one place.
//!
//! Conventions followed: the OpenTelemetry GenAI semantic conventions v0.1.0
//! (`open-telemetry/semantic-conventions-genai`, status Development) for `execute_tool`,
//! model (`chat`) and MCP spans and metrics; the general conventions v1.40 for `error.type`,
//! `server.address` and `network.transport`.

#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)
)]

pub mod config;
pub mod install;
pub mod metrics;
pub mod names;
pub mod operation;
pub mod prometheus;
pub mod spans;

pub use config::TelemetryConfig;
pub use install::{Telemetry, TelemetryError};
pub use metrics::metrics;
pub use spans::tracer;
