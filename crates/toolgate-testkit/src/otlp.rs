//! An OTLP/HTTP collector for tests: accepts `POST /v1/traces` and `/v1/metrics` in the
//! protobuf encoding, answers 200, and keeps every span decoded with the official
//! `opentelemetry-proto` messages — so a test reads what went over the wire, not what the
//! SDK meant to send.

#![allow(clippy::expect_used)] // a test fixture: a broken sink should fail the test loudly

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use prost::Message as _;

/// One span as received.
#[derive(Debug, Clone, PartialEq)]
pub struct ReceivedSpan {
    pub name: String,
    /// `SPAN_KIND_*` as its number (1 internal, 2 server, 3 client).
    pub kind: i32,
    pub trace_id: String,
    pub span_id: String,
    /// Empty for a root span.
    pub parent_span_id: String,
    /// Every attribute, its value as text (strings bare, numbers and booleans as written).
    pub attributes: BTreeMap<String, String>,
    pub events: Vec<String>,
    /// The status code (0 unset, 1 ok, 2 error).
    pub status: i32,
    /// The resource's attributes.
    pub resource: BTreeMap<String, String>,
}

#[derive(Default)]
struct Received {
    traces: Vec<Vec<u8>>,
    metrics: Vec<Vec<u8>>,
}

/// The collector; it runs until the test process ends.
#[derive(Clone)]
pub struct OtlpSink {
    addr: String,
    received: Arc<Mutex<Received>>,
}

impl OtlpSink {
    pub fn start() -> OtlpSink {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the OTLP sink");
        let addr = listener.local_addr().expect("local addr").to_string();
        let received = Arc::new(Mutex::new(Received::default()));
        let r = Arc::clone(&received);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let r = Arc::clone(&r);
                std::thread::spawn(move || serve(stream, &r));
            }
        });
        OtlpSink { addr, received }
    }

    /// `http://127.0.0.1:<port>`: the base URL (`/v1/traces` is appended by the exporter).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every span received so far.
    pub fn spans(&self) -> Vec<ReceivedSpan> {
        let bodies = self.received.lock().expect("lock").traces.clone();
        bodies.iter().flat_map(|b| decode(b)).collect()
    }

    /// The name of every metric received, with the sum of its data points' values for
    /// sums (counters) and of their counts for histograms, from the latest export that
    /// has it (cumulative temporality: the latest is the total).
    pub fn metrics(&self) -> BTreeMap<String, f64> {
        use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
        use opentelemetry_proto::tonic::metrics::v1::NumberDataPoint;
        use opentelemetry_proto::tonic::metrics::v1::metric::Data;
        use opentelemetry_proto::tonic::metrics::v1::number_data_point::Value as N;
        let bodies = self.received.lock().expect("lock").metrics.clone();
        let mut out = BTreeMap::new();
        for body in bodies {
            let Ok(request) = ExportMetricsServiceRequest::decode(body.as_slice()) else {
                continue;
            };
            for rm in request.resource_metrics {
                for sm in rm.scope_metrics {
                    for m in sm.metrics {
                        let number = |p: &NumberDataPoint| match p.value {
                            Some(N::AsInt(i)) => i as f64,
                            Some(N::AsDouble(d)) => d,
                            None => 0.0,
                        };
                        let total = match m.data {
                            Some(Data::Sum(s)) => s.data_points.iter().map(number).sum(),
                            Some(Data::Gauge(g)) => g.data_points.iter().map(number).sum(),
                            Some(Data::Histogram(h)) => {
                                h.data_points.iter().map(|p| p.count as f64).sum()
                            }
                            _ => 0.0,
                        };
                        out.insert(m.name, total);
                    }
                }
            }
        }
        out
    }

    /// Waits up to `timeout` for a span named `name`.
    pub fn wait_for(&self, name: &str, timeout: Duration) -> Option<ReceivedSpan> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(s) = self.spans().into_iter().find(|s| s.name == name) {
                return Some(s);
            }
            if Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn serve(stream: TcpStream, received: &Mutex<Received>) {
    let mut writer = match stream.try_clone() {
        Ok(w) => w,
        Err(_) => return,
    };
    let mut reader = BufReader::new(stream);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let path = line.split_whitespace().nth(1).unwrap_or("").to_owned();
        let mut length = 0usize;
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((k, v)) = header.split_once(':')
                && k.eq_ignore_ascii_case("content-length")
            {
                length = v.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        {
            let mut r = received.lock().expect("lock");
            match path.as_str() {
                "/v1/traces" => r.traces.push(body),
                "/v1/metrics" => r.metrics.push(body),
                _ => {}
            }
        }
        let reply =
            "HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n";
        if writer.write_all(reply.as_bytes()).is_err() {
            return;
        }
    }
}

fn decode(body: &[u8]) -> Vec<ReceivedSpan> {
    let Ok(request) = ExportTraceServiceRequest::decode(body) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for rs in request.resource_spans {
        let resource = rs
            .resource
            .map(|r| attributes(&r.attributes))
            .unwrap_or_default();
        for ss in rs.scope_spans {
            for s in ss.spans {
                out.push(ReceivedSpan {
                    name: s.name,
                    kind: s.kind,
                    trace_id: hex::encode(&s.trace_id),
                    span_id: hex::encode(&s.span_id),
                    parent_span_id: hex::encode(&s.parent_span_id),
                    attributes: attributes(&s.attributes),
                    events: s.events.into_iter().map(|e| e.name).collect(),
                    status: s.status.map_or(0, |st| st.code),
                    resource: resource.clone(),
                });
            }
        }
    }
    out
}

fn attributes(
    kvs: &[opentelemetry_proto::tonic::common::v1::KeyValue],
) -> BTreeMap<String, String> {
    kvs.iter()
        .map(|kv| {
            let v = match kv.value.as_ref().and_then(|v| v.value.as_ref()) {
                Some(Any::StringValue(s)) => s.clone(),
                Some(Any::IntValue(i)) => i.to_string(),
                Some(Any::BoolValue(b)) => b.to_string(),
                Some(Any::DoubleValue(d)) => d.to_string(),
                Some(other) => format!("{other:?}"),
                None => String::new(),
            };
            (kv.key.clone(), v)
        })
        .collect()
}
