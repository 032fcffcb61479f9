//! The Prometheus text exposition format (0.0.4) of a metrics collection, as the
//! OpenTelemetry–Prometheus compatibility specification maps it: dots become underscores,
//! the unit becomes a suffix (`s` → `_seconds`, `By` → `_bytes`; annotations like `{call}`
//! add none), monotonic sums are counters ending in `_total`, histograms are cumulative
//! `_bucket{le=…}` series with `_sum` and `_count`, and the resource is `target_info`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use opentelemetry::KeyValue;
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, Metric, MetricData, ResourceMetrics};

/// The whole collection as Prometheus text.
pub fn render(metrics: &ResourceMetrics) -> String {
    let mut families: BTreeMap<String, Family> = BTreeMap::new();
    for scope in metrics.scope_metrics() {
        for metric in scope.metrics() {
            add(&mut families, metric);
        }
    }
    let mut out = String::new();
    let resource: Vec<String> = metrics
        .resource()
        .iter()
        .map(|(k, v)| label(k.as_str(), &v.to_string()))
        .collect();
    out.push_str("# HELP target_info Target metadata\n# TYPE target_info gauge\n");
    let _ = writeln!(out, "target_info{{{}}} 1", resource.join(","));
    for (name, family) in families {
        let _ = writeln!(out, "# HELP {name} {}", escape_help(&family.help));
        let _ = writeln!(out, "# TYPE {name} {}", family.kind);
        let mut lines = family.lines;
        lines.sort();
        for line in lines {
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

struct Family {
    kind: &'static str,
    help: String,
    lines: Vec<String>,
}

fn add(families: &mut BTreeMap<String, Family>, metric: &Metric) {
    let base = format!("{}{}", sanitize(metric.name()), unit_suffix(metric.unit()));
    match metric.data() {
        AggregatedMetrics::F64(data) => add_data(families, &base, metric, data, fmt_f64),
        AggregatedMetrics::U64(data) => add_data(families, &base, metric, data, |v| v.to_string()),
        AggregatedMetrics::I64(data) => add_data(families, &base, metric, data, |v| v.to_string()),
    }
}

fn add_data<T: Copy>(
    families: &mut BTreeMap<String, Family>,
    base: &str,
    metric: &Metric,
    data: &MetricData<T>,
    num: impl Fn(T) -> String,
) {
    let (name, kind, lines) = match data {
        MetricData::Gauge(g) => (
            base.to_owned(),
            "gauge",
            g.data_points()
                .map(|p| series(base, p.attributes(), None, &num(p.value())))
                .collect(),
        ),
        MetricData::Sum(s) => {
            let (name, kind) = if s.is_monotonic() {
                (format!("{base}_total"), "counter")
            } else {
                (base.to_owned(), "gauge")
            };
            let lines = s
                .data_points()
                .map(|p| series(&name, p.attributes(), None, &num(p.value())))
                .collect();
            (name, kind, lines)
        }
        MetricData::Histogram(h) => {
            let mut lines = Vec::new();
            for p in h.data_points() {
                let attrs: Vec<&KeyValue> = p.attributes().collect();
                let mut cumulative = 0u64;
                let bounds: Vec<f64> = p.bounds().collect();
                for (i, count) in p.bucket_counts().enumerate() {
                    cumulative += count;
                    let le = bounds
                        .get(i)
                        .map_or_else(|| "+Inf".to_owned(), |b| fmt_f64(*b));
                    lines.push(series(
                        &format!("{base}_bucket"),
                        attrs.iter().copied(),
                        Some(&le),
                        &cumulative.to_string(),
                    ));
                }
                lines.push(series(
                    &format!("{base}_sum"),
                    attrs.iter().copied(),
                    None,
                    &num(p.sum()),
                ));
                lines.push(series(
                    &format!("{base}_count"),
                    attrs.iter().copied(),
                    None,
                    &p.count().to_string(),
                ));
            }
            (base.to_owned(), "histogram", lines)
        }
        // Not used by toolgate's instruments; Prometheus text has no form for them.
        MetricData::ExponentialHistogram(_) => return,
    };
    let family = families.entry(name).or_insert_with(|| Family {
        kind,
        help: metric.description().to_owned(),
        lines: Vec::new(),
    });
    family.lines.extend(lines);
}

/// One sample line; `le` is added last for histogram buckets.
fn series<'a>(
    name: &str,
    attributes: impl Iterator<Item = &'a KeyValue>,
    le: Option<&str>,
    value: &str,
) -> String {
    let mut labels: Vec<String> = attributes
        .map(|kv| label(kv.key.as_str(), &kv.value.to_string()))
        .collect();
    labels.sort();
    if let Some(le) = le {
        labels.push(format!("le=\"{le}\""));
    }
    if labels.is_empty() {
        format!("{name} {value}")
    } else {
        format!("{name}{{{}}} {value}", labels.join(","))
    }
}

fn label(key: &str, value: &str) -> String {
    let mut name = sanitize(key);
    if name.starts_with(|c: char| c.is_ascii_digit()) {
        name.insert_str(0, "key_");
    }
    format!("{name}=\"{}\"", escape_value(value))
}

/// Metric and label names: `[a-zA-Z0-9_:]`, anything else an underscore.
fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == ':' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn unit_suffix(unit: &str) -> &'static str {
    match unit {
        "s" => "_seconds",
        "ms" => "_milliseconds",
        "By" => "_bytes",
        _ => "",
    }
}

fn escape_value(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn escape_help(v: &str) -> String {
    v.replace('\\', "\\\\").replace('\n', "\\n")
}

fn fmt_f64(v: f64) -> String {
    if v.is_nan() {
        "NaN".to_owned()
    } else if v == f64::INFINITY {
        "+Inf".to_owned()
    } else if v == f64::NEG_INFINITY {
        "-Inf".to_owned()
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
mod tests {
    use opentelemetry::metrics::MeterProvider as _;
    use opentelemetry_sdk::metrics::SdkMeterProvider;
    use opentelemetry_sdk::metrics::reader::MetricReader as _;

    use super::*;
    use crate::install::SharedReader;

    /// A provider with one shared manual reader, as [`crate::install`] builds it.
    fn provider() -> (SdkMeterProvider, SharedReader) {
        let reader = SharedReader::new();
        let p = SdkMeterProvider::builder()
            .with_reader(reader.clone())
            .build();
        (p, reader)
    }

    #[test]
    fn counters_histograms_and_gauges_render_as_prometheus_text() {
        let (p, reader) = provider();
        let m = p.meter("t");
        let calls = m.u64_counter("toolgate.calls").with_unit("{call}").build();
        calls.add(
            2,
            &[
                KeyValue::new("gen_ai.tool.name", "read_file"),
                KeyValue::new("toolgate.outcome", "ok"),
            ],
        );
        calls.add(
            1,
            &[
                KeyValue::new("gen_ai.tool.name", "say \"hi\"\n"),
                KeyValue::new("toolgate.outcome", "forbidden"),
            ],
        );
        let d = m
            .f64_histogram("toolgate.call.duration")
            .with_unit("s")
            .with_description("A call")
            .with_boundaries(vec![0.1, 1.0])
            .build();
        d.record(0.05, &[]);
        d.record(0.5, &[]);
        d.record(5.0, &[]);
        let _g = m
            .i64_observable_gauge("toolgate.approvals.pending")
            .with_callback(|o| o.observe(3, &[]))
            .build();
        let mut rm = ResourceMetrics::default();
        reader.collect(&mut rm).unwrap();
        let text = render(&rm);
        for line in [
            "# TYPE toolgate_calls_total counter",
            r#"toolgate_calls_total{gen_ai_tool_name="read_file",toolgate_outcome="ok"} 2"#,
            r#"toolgate_calls_total{gen_ai_tool_name="say \"hi\"\n",toolgate_outcome="forbidden"} 1"#,
            "# HELP toolgate_call_duration_seconds A call",
            "# TYPE toolgate_call_duration_seconds histogram",
            r#"toolgate_call_duration_seconds_bucket{le="0.1"} 1"#,
            r#"toolgate_call_duration_seconds_bucket{le="1"} 2"#,
            r#"toolgate_call_duration_seconds_bucket{le="+Inf"} 3"#,
            "toolgate_call_duration_seconds_sum 5.55",
            "toolgate_call_duration_seconds_count 3",
            "# TYPE toolgate_approvals_pending gauge",
            "toolgate_approvals_pending 3",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "missing {line:?} in\n{text}"
            );
        }
        assert!(text.contains("target_info{"), "{text}");
    }
}
