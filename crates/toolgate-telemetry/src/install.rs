//! Setting the SDK up, once per process.
//!
//! - Traces (export on): a [`BatchSpanProcessor`] — spans queue in memory (2048 by default,
//!   `OTEL_BSP_*`), a background thread posts them to the collector, a full queue drops
//!   spans rather than wait, and a collector that is down fails no call.
//! - Metrics (always, once installed): a manual reader this process collects from for
//!   `/metrics` and the console's dashboard, and with export on a periodic OTLP reader.
//!
//! The OTLP endpoint is the operator's own collector, named in the file or the standard
//! variables — never an address a model or a tool chose — so it is reached directly, like
//! the store, not through the `[egress]` guard.

use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;

use opentelemetry::KeyValue;
use opentelemetry::metrics::MeterProvider as _;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig as _, WithHttpConfig as _};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::metrics::data::ResourceMetrics;
use opentelemetry_sdk::metrics::reader::MetricReader;
use opentelemetry_sdk::metrics::{
    InstrumentKind, ManualReader, PeriodicReader, Pipeline, SdkMeterProvider, Temporality,
};
use opentelemetry_sdk::trace::{BatchSpanProcessor, Sampler, SdkTracerProvider};

use crate::config::{ConfigError, TelemetryConfig};
use crate::metrics::{Instruments, set_installed};
use crate::spans::set_tracer;

/// Why telemetry could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("cannot build the OTLP {signal} exporter: {message}")]
    Exporter {
        signal: &'static str,
        message: String,
    },
}

/// The installed SDK: what `/metrics` collects from and what shutdown flushes.
pub struct Telemetry {
    tracing: Option<SdkTracerProvider>,
    meters: SdkMeterProvider,
    reader: SharedReader,
    exporting: bool,
    record_arguments: bool,
}

impl std::fmt::Debug for Telemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Telemetry")
            .field("exporting", &self.exporting)
            .field("record_arguments", &self.record_arguments)
            .finish_non_exhaustive()
    }
}

static INSTALLED: OnceLock<Telemetry> = OnceLock::new();

/// The process's telemetry, once installed.
pub fn installed() -> Option<&'static Telemetry> {
    INSTALLED.get()
}

/// Whether spans should carry each call's (redacted) arguments and result.
pub fn record_arguments() -> bool {
    INSTALLED.get().is_some_and(|t| t.record_arguments)
}

impl Telemetry {
    /// Sets the SDK up for `config` (reading the process environment), once per process:
    /// a later call returns the first installation whatever its configuration.
    pub fn install(config: &TelemetryConfig) -> Result<&'static Telemetry, TelemetryError> {
        if let Some(t) = INSTALLED.get() {
            return Ok(t);
        }
        let telemetry = build(config, |name| std::env::var(name).ok())?;
        let tracer = telemetry.tracing.as_ref().map(|p| p.tracer("toolgate"));
        let instruments = Instruments::new(telemetry.meters.meter("toolgate"));
        // Another thread may have installed first: then its installation stands.
        if INSTALLED.set(telemetry).is_ok() {
            if let Some(tracer) = tracer {
                set_tracer(tracer);
            }
            set_installed(instruments);
        }
        Ok(INSTALLED
            .get()
            .unwrap_or_else(|| unreachable!("set just above")))
    }

    /// Whether spans and metrics leave the process over OTLP.
    pub fn exporting(&self) -> bool {
        self.exporting
    }

    /// Everything recorded so far (cumulative), for `/metrics`.
    pub fn collect(&self) -> ResourceMetrics {
        let mut metrics = ResourceMetrics::default();
        if let Err(e) = self.reader.0.collect(&mut metrics) {
            tracing::warn!("collecting metrics failed: {e}");
        }
        metrics
    }

    /// `/metrics` as Prometheus text.
    pub fn prometheus(&self) -> String {
        crate::prometheus::render(&self.collect())
    }

    /// Sends what is queued (spans, the last metrics) and stops the exporters; waits at most
    /// `timeout` for each. Recording after this goes nowhere.
    pub fn shutdown(&self, timeout: Duration) {
        if let Some(p) = &self.tracing
            && let Err(e) = p.shutdown_with_timeout(timeout)
        {
            tracing::warn!("flushing spans failed: {e}");
        }
        if self.exporting
            && let Err(e) = self.meters.shutdown_with_timeout(timeout)
        {
            tracing::warn!("flushing metrics failed: {e}");
        }
    }

    /// Sends queued spans and metrics now (tests and one-off commands).
    pub fn flush(&self) {
        if let Some(p) = &self.tracing {
            let _ = p.force_flush();
        }
        if self.exporting {
            let _ = self.meters.force_flush();
        }
    }
}

fn build(
    config: &TelemetryConfig,
    env: impl Fn(&str) -> Option<String> + Copy,
) -> Result<Telemetry, TelemetryError> {
    config.check()?;
    let exporting = config.exports(env);
    let resource = resource(config, env);
    let reader = SharedReader::new();
    let mut meters = SdkMeterProvider::builder()
        .with_resource(resource.clone())
        .with_reader(reader.clone());
    let mut tracing = None;
    if exporting {
        let headers: std::collections::HashMap<String, String> =
            config.headers(env)?.into_iter().collect();
        let mut spans = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_headers(headers.clone());
        if let Some(url) = config.signal_url("traces") {
            spans = spans.with_endpoint(url);
        }
        let spans = spans.build().map_err(|e| TelemetryError::Exporter {
            signal: "traces",
            message: e.to_string(),
        })?;
        let mut provider = SdkTracerProvider::builder()
            .with_resource(resource)
            .with_span_processor(BatchSpanProcessor::builder(spans).build());
        if let Some(ratio) = config.sampling {
            provider = provider.with_sampler(Sampler::ParentBased(Box::new(
                Sampler::TraceIdRatioBased(ratio),
            )));
        }
        tracing = Some(provider.build());

        let mut points = opentelemetry_otlp::MetricExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_headers(headers);
        if let Some(url) = config.signal_url("metrics") {
            points = points.with_endpoint(url);
        }
        let points = points.build().map_err(|e| TelemetryError::Exporter {
            signal: "metrics",
            message: e.to_string(),
        })?;
        meters = meters.with_reader(
            PeriodicReader::builder(points)
                .with_interval(Duration::from_secs(config.metrics_interval_secs))
                .build(),
        );
    }
    Ok(Telemetry {
        tracing,
        meters: meters.build(),
        reader,
        exporting,
        record_arguments: config.record_arguments,
    })
}

/// `service.name` from the file, else `OTEL_SERVICE_NAME` (the SDK's detector), else
/// `toolgate`; `service.version`; and `OTEL_RESOURCE_ATTRIBUTES`.
fn resource(config: &TelemetryConfig, env: impl Fn(&str) -> Option<String>) -> Resource {
    let mut builder = Resource::builder()
        .with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")));
    match &config.service_name {
        Some(name) => builder = builder.with_service_name(name.clone()),
        None if env("OTEL_SERVICE_NAME").is_none_or(|v| v.trim().is_empty()) => {
            builder = builder.with_service_name("toolgate");
        }
        None => {}
    }
    builder.build()
}

/// The manual reader, shared between the provider (which registers with it) and
/// [`Telemetry::collect`].
#[derive(Debug, Clone)]
pub(crate) struct SharedReader(pub(crate) Arc<ManualReader>);

impl SharedReader {
    pub(crate) fn new() -> Self {
        SharedReader(Arc::new(ManualReader::builder().build()))
    }
}

impl MetricReader for SharedReader {
    fn register_pipeline(&self, pipeline: Weak<Pipeline>) {
        self.0.register_pipeline(pipeline);
    }

    fn collect(&self, rm: &mut ResourceMetrics) -> OTelSdkResult {
        self.0.collect(rm)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.0.force_flush()
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.0.shutdown_with_timeout(timeout)
    }

    fn temporality(&self, kind: InstrumentKind) -> Temporality {
        self.0.temporality(kind)
    }
}
