//! The `[telemetry]` table. Off by default; the standard variables are honoured:
//! `OTEL_SDK_DISABLED=true` turns everything off, an `OTEL_EXPORTER_OTLP_ENDPOINT` (or its
//! `_TRACES_` / `_METRICS_` form) turns export on where the file does not, and the exporter
//! and SDK read the rest themselves (`OTEL_EXPORTER_OTLP_HEADERS`, `_TIMEOUT`,
//! `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER[_ARG]`, `OTEL_BSP_*`).
//! What the file sets explicitly wins over the environment.

use std::collections::BTreeMap;
use std::net::SocketAddr;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TelemetryConfig {
    /// Export traces and metrics over OTLP/HTTP (protobuf).
    pub enabled: bool,
    /// The collector's base URL (`/v1/traces` and `/v1/metrics` are appended); absent: the
    /// `OTEL_EXPORTER_OTLP_*ENDPOINT` variables, else `http://localhost:4318`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// Request headers whose values are read from environment variables (header name →
    /// variable name), so a collector's key never sits in the file.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub headers_from_env: BTreeMap<String, String>,
    /// The share of new traces sampled, 0.0 to 1.0; a caller's sampled flag is followed.
    /// Absent: `OTEL_TRACES_SAMPLER`, else every trace.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sampling: Option<f64>,
    /// `service.name`; absent: `OTEL_SERVICE_NAME`, else `toolgate`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_name: Option<String>,
    /// How often metrics are exported over OTLP.
    pub metrics_interval_secs: u64,
    /// Record each call's arguments and result on its span (redacted exactly like the
    /// audit). Off: neither is ever recorded.
    pub record_arguments: bool,
    /// Serve `/metrics` without a token on this separate address too (for a scraper on a
    /// private network); the main listener serves it to operators only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metrics_listen: Option<SocketAddr>,
}

impl Default for TelemetryConfig {
    fn default() -> Self {
        TelemetryConfig {
            enabled: false,
            endpoint: None,
            headers_from_env: BTreeMap::new(),
            sampling: None,
            service_name: None,
            metrics_interval_secs: 15,
            record_arguments: false,
            metrics_listen: None,
        }
    }
}

/// Why a `[telemetry]` table cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConfigError {
    #[error("[telemetry] sampling must be between 0.0 and 1.0, not {0}")]
    Sampling(f64),
    #[error("[telemetry] endpoint {0:?} is not an http:// or https:// URL")]
    Endpoint(String),
    #[error("[telemetry] metrics_interval_secs must be at least 1")]
    Interval,
    #[error("[telemetry] headers_from_env names {var} for {header}, which is not set")]
    MissingHeader { header: String, var: String },
}

impl TelemetryConfig {
    /// Checks what can be checked without the environment.
    pub fn check(&self) -> Result<(), ConfigError> {
        if let Some(s) = self.sampling
            && !(0.0..=1.0).contains(&s)
        {
            return Err(ConfigError::Sampling(s));
        }
        if let Some(e) = &self.endpoint
            && !(e.starts_with("http://") || e.starts_with("https://"))
        {
            return Err(ConfigError::Endpoint(e.clone()));
        }
        if self.metrics_interval_secs == 0 {
            return Err(ConfigError::Interval);
        }
        Ok(())
    }

    /// Whether spans and metrics are exported, given the environment `env` reads.
    pub fn exports(&self, env: impl Fn(&str) -> Option<String>) -> bool {
        let set = |name: &str| env(name).is_some_and(|v| !v.trim().is_empty());
        if env("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true")) {
            return false;
        }
        self.enabled
            || set("OTEL_EXPORTER_OTLP_ENDPOINT")
            || set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
            || set("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT")
    }

    /// The signal's URL when the file names a collector: `<endpoint>/v1/<signal>`.
    pub fn signal_url(&self, signal: &str) -> Option<String> {
        self.endpoint
            .as_ref()
            .map(|e| format!("{}/v1/{signal}", e.trim_end_matches('/')))
    }

    /// The headers, their values read through `env`.
    pub fn headers(
        &self,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<BTreeMap<String, String>, ConfigError> {
        self.headers_from_env
            .iter()
            .map(|(header, var)| match env(var) {
                Some(v) => Ok((header.clone(), v)),
                None => Err(ConfigError::MissingHeader {
                    header: header.clone(),
                    var: var.clone(),
                }),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn off_by_default_on_by_the_file_or_a_standard_endpoint_variable_and_sdk_disabled_wins() {
        let off = TelemetryConfig::default();
        assert!(!off.exports(env(&[])));
        assert!(off.exports(env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318")])));
        assert!(off.exports(env(&[("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://c/x")])));
        assert!(!off.exports(env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", " ")])));
        let on = TelemetryConfig {
            enabled: true,
            ..TelemetryConfig::default()
        };
        assert!(on.exports(env(&[])));
        assert!(!on.exports(env(&[("OTEL_SDK_DISABLED", "TRUE")])));
    }

    #[test]
    fn bad_values_are_named() {
        let bad = |c: TelemetryConfig| c.check().unwrap_err().to_string();
        let base = TelemetryConfig::default;
        assert!(
            bad(TelemetryConfig {
                sampling: Some(1.5),
                ..base()
            })
            .contains("between 0.0 and 1.0, not 1.5")
        );
        assert!(
            bad(TelemetryConfig {
                endpoint: Some("collector:4318".into()),
                ..base()
            })
            .contains("\"collector:4318\"")
        );
        assert!(
            bad(TelemetryConfig {
                metrics_interval_secs: 0,
                ..base()
            })
            .contains("at least 1")
        );
    }

    #[test]
    fn headers_come_from_the_environment_and_a_missing_one_is_named() {
        let mut c = TelemetryConfig::default();
        c.headers_from_env
            .insert("authorization".into(), "OTLP_AUTH".into());
        let h = c.headers(env(&[("OTLP_AUTH", "Bearer s3cret")])).unwrap();
        assert_eq!(h["authorization"], "Bearer s3cret");
        let e = c.headers(env(&[])).unwrap_err().to_string();
        assert!(
            e.contains("OTLP_AUTH") && e.contains("authorization"),
            "{e}"
        );
        assert_eq!(
            TelemetryConfig {
                endpoint: Some("http://c:4318/".into()),
                ..TelemetryConfig::default()
            }
            .signal_url("traces")
            .as_deref(),
            Some("http://c:4318/v1/traces")
        );
    }
}
