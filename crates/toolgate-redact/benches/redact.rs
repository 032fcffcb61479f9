//! The redactor's cost per call, on the inputs the audit sees: the gateway bench's arguments
//! (a key-masked API key and a bearer header inside a string), prose without secrets, a tool
//! result of log lines with a few secrets in it, and a percent-encoded URL.
//!
//! `cargo bench -p toolgate-store --bench redact` prints, for each input, the median of 15
//! rounds of nanoseconds per call (each round long enough to take about 40 ms).
#![allow(clippy::print_stdout, clippy::unwrap_used)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolgate_redact::Redactor;

fn gateway_args() -> Value {
    json!({
        "text": "Summarise the last deploy of checkout-api and list the failing health checks",
        "count": 3,
        "tags": ["deploy", "prod", "eu-west-1"],
        "options": {
            "api_key": "sk-proj-4f9b2c7d1e8a6f3b5c9d2e7a1f4b8c6d",
            "header": "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJib3QifQ.c2lnbmF0dXJl",
            "verbose": false,
            "format": "text"
        }
    })
}

const PROSE: &str = "The deploy of checkout-api at 14:02 UTC rolled out build 8c1f2e9 to eu-west-1; \
two of the five health checks failed (the /ready probe timed out after 3 s and the database \
pool reported 40 of 40 connections in use). The previous build, 5b7d0a3, is still cached, and \
the rollback runbook says to drain the canary first, then scale the old replica set to 6. \
Request id 0f8b6c1e-3a2d-4e5f-9a7b-1c2d3e4f5a6b; trace 4bf92f3577b34da6a3ce929d0e0e4736.";

fn log_lines() -> String {
    let mut s = String::new();
    for i in 0..20 {
        s.push_str(&format!(
            "2026-12-07T10:{i:02}:00Z INFO request GET /v1/items/{i} 200 in {}ms user=alice\n",
            i * 3 + 1
        ));
    }
    s.push_str(
        "2026-12-07T10:21:00Z WARN retry with token=ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789\n",
    );
    s.push_str("2026-12-07T10:22:00Z DEBUG DATABASE_URL=postgres://app:pw-s3cret@db:5432/app\n");
    s
}

const ENCODED_URL: &str =
    "redirect to https://example.test/login?next=https%3A%2F%2Fadmin%3Ahunter2x%40db.internal%2F";

/// A named input and the call that redacts it.
type Case<'a> = (&'static str, Box<dyn FnMut() + 'a>);

fn per_call(f: &mut dyn FnMut()) -> f64 {
    // Calibrate a round to about 40 ms.
    let mut n = 1u64;
    loop {
        let t = Instant::now();
        for _ in 0..n {
            f();
        }
        if t.elapsed() > Duration::from_millis(40) {
            break;
        }
        n *= 2;
    }
    let mut rounds: Vec<f64> = (0..15)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..n {
                f();
            }
            t.elapsed().as_nanos() as f64 / n as f64
        })
        .collect();
    rounds.sort_by(f64::total_cmp);
    rounds[rounds.len() / 2]
}

fn main() {
    let r = Redactor::default();
    let args = gateway_args();
    let logs = log_lines();
    let logs_value = json!({"stdout": logs, "exit_code": 0});
    let cases: Vec<Case<'_>> = vec![
        (
            "for_audit_arguments(gateway args)",
            Box::new(|| {
                black_box(r.for_audit_arguments(black_box(&args)));
            }),
        ),
        (
            "redact_text(prose, 430 B, no secret)",
            Box::new(|| {
                black_box(r.redact_text(black_box(PROSE)));
            }),
        ),
        (
            "redact_text(22 log lines, 2 secrets)",
            Box::new(|| {
                black_box(r.redact_text(black_box(&logs)));
            }),
        ),
        (
            "for_audit_result(log lines)",
            Box::new(|| {
                black_box(r.for_audit_result(black_box(&logs_value)));
            }),
        ),
        (
            "redact_text(percent-encoded URL)",
            Box::new(|| {
                black_box(r.redact_text(black_box(ENCODED_URL)));
            }),
        ),
        (
            "Redactor::default()",
            Box::new(|| {
                black_box(Redactor::default());
            }),
        ),
    ];
    println!("{:<40} {:>12}", "input", "ns/call");
    for (name, mut f) in cases {
        println!("{name:<40} {:>12.0}", per_call(&mut *f));
    }
}
