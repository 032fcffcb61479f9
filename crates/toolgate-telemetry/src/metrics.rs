//! Every instrument toolgate records into. Before [`crate::install`] (and in processes
//! that never install, like the tests of other crates) they are bound to a provider with
//! no reader, so recording costs next to nothing and goes nowhere.
//!
//! Observed values (approvals pending, MCP servers up, the audit queue) are not pushed per
//! event: their owners register a callback with [`observe`], read at collection time.

use std::sync::{LazyLock, OnceLock};

use opentelemetry::KeyValue;
use opentelemetry::metrics::{AsyncInstrument, Counter, Histogram, Meter, MeterProvider as _};
use opentelemetry_sdk::metrics::SdkMeterProvider;

/// Upper bounds (seconds) of the duration histograms: 100 µs to 5 min, so both an
/// in-process read and a human's approval land in a real bucket.
pub const DURATION_BOUNDS: &[f64] = &[
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
    5.0, 10.0, 30.0, 60.0, 300.0,
];

/// Token counts of a model call (`gen_ai.client.token.usage`, as the conventions bound it).
const TOKEN_BOUNDS: &[f64] = &[
    1.0, 4.0, 16.0, 64.0, 256.0, 1024.0, 4096.0, 16384.0, 65536.0, 262144.0, 1048576.0,
];

/// The instruments, created once per meter provider.
pub struct Instruments {
    meter: Meter,
    /// `toolgate.calls`: gateway calls by `gen_ai.tool.name`, `toolgate.outcome`,
    /// `toolgate.role`.
    pub calls: Counter<u64>,
    /// `toolgate.call.duration` (s): a call through the whole pipeline, by tool and outcome.
    pub call_duration: Histogram<f64>,
    /// `mcp.server.operation.duration` (s): an MCP request toolgate answered.
    pub mcp_server_duration: Histogram<f64>,
    /// `mcp.client.operation.duration` (s): an MCP request toolgate sent a federated server.
    pub mcp_client_duration: Histogram<f64>,
    /// `toolgate.approval.requests`: approval requests opened, by tool.
    pub approval_requests: Counter<u64>,
    /// `toolgate.approval.wait` (s): how long a call waited for a human, by the request's
    /// final `toolgate.approval.status`.
    pub approval_wait: Histogram<f64>,
    /// `toolgate.audit.sync.duration` (s): one fsync of the audit log.
    pub audit_sync: Histogram<f64>,
    /// `toolgate.rag.search.duration` (s): one Tool RAG search.
    pub rag_search: Histogram<f64>,
    /// `gen_ai.client.operation.duration` (s): one model request of the agent loop.
    pub model_duration: Histogram<f64>,
    /// `gen_ai.client.token.usage` ({token}): tokens of one model request, by
    /// `gen_ai.token.type`.
    pub model_tokens: Histogram<u64>,
}

impl std::fmt::Debug for Instruments {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Instruments")
    }
}

impl Instruments {
    pub(crate) fn new(meter: Meter) -> Self {
        let seconds = |name: &'static str, what: &'static str| {
            meter
                .f64_histogram(name)
                .with_unit("s")
                .with_description(what)
                .with_boundaries(DURATION_BOUNDS.to_vec())
                .build()
        };
        Instruments {
            calls: meter
                .u64_counter("toolgate.calls")
                .with_unit("{call}")
                .with_description("Tool calls through the gateway, by tool, outcome and role")
                .build(),
            call_duration: seconds(
                "toolgate.call.duration",
                "A tool call through the whole pipeline, by tool and outcome",
            ),
            mcp_server_duration: seconds(
                "mcp.server.operation.duration",
                "MCP request duration as observed on the receiver",
            ),
            mcp_client_duration: seconds(
                "mcp.client.operation.duration",
                "MCP request duration as observed on the sender",
            ),
            approval_requests: meter
                .u64_counter("toolgate.approval.requests")
                .with_unit("{request}")
                .with_description("Approval requests opened, by tool")
                .build(),
            approval_wait: seconds(
                "toolgate.approval.wait",
                "How long a call waited for a human, by the request's final status",
            ),
            audit_sync: seconds("toolgate.audit.sync.duration", "One fsync of the audit log"),
            rag_search: seconds("toolgate.rag.search.duration", "One Tool RAG search"),
            model_duration: seconds(
                "gen_ai.client.operation.duration",
                "GenAI operation duration",
            ),
            model_tokens: meter
                .u64_histogram("gen_ai.client.token.usage")
                .with_unit("{token}")
                .with_description("Number of input and output tokens used")
                .with_boundaries(TOKEN_BOUNDS.to_vec())
                .build(),
            meter,
        }
    }
}

static INSTALLED: OnceLock<Instruments> = OnceLock::new();
static UNINSTALLED: LazyLock<Instruments> =
    LazyLock::new(|| Instruments::new(SdkMeterProvider::builder().build().meter("toolgate")));

/// The instruments of the installed provider, or readerless ones before that.
pub fn metrics() -> &'static Instruments {
    INSTALLED.get().unwrap_or_else(|| &UNINSTALLED)
}

/// The installed instruments, `None` before [`crate::install`]: for the per-call path,
/// which then builds no attributes at all.
pub fn recording() -> Option<&'static Instruments> {
    INSTALLED.get()
}

pub(crate) fn set_installed(instruments: Instruments) {
    let _ = INSTALLED.set(instruments);
}

/// One observed value: attributes and the number.
pub type Observation = (Vec<KeyValue>, i64);

/// Registers a gauge read when metrics are collected (`/metrics`, the OTLP export):
/// `read` returns every series' current value. A no-op before [`crate::install`].
pub fn observe(
    name: &'static str,
    unit: &'static str,
    description: &'static str,
    read: impl Fn() -> Vec<Observation> + Send + Sync + 'static,
) {
    let Some(instruments) = INSTALLED.get() else {
        return;
    };
    let _gauge = instruments
        .meter
        .i64_observable_gauge(name)
        .with_unit(unit)
        .with_description(description)
        .with_callback(move |observer: &dyn AsyncInstrument<i64>| {
            for (attributes, value) in read() {
                observer.observe(value, &attributes);
            }
        })
        .build();
}
