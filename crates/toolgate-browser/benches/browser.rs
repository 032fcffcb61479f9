//! Browser action latency: `navigate` (which loads the page and returns its snapshot) and a
//! separate `snapshot`, on a page served on loopback, through the whole guard (request
//! interception and the egress proxy). Prints p50/p99 over the measured iterations.
//!
//! `cargo bench -p toolgate-browser --bench browser [-- ITERATIONS]` (default 200; needs
//! Debian's chromium at /usr/bin/chromium).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::print_stdout
)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::response::Html;
use axum::routing::get;
use serde_json::json;
use toolgate_browser::{BrowserConfig, DEFAULT_CHROMIUM, browser_tools_with_lookup};
use toolgate_core::ToolContext;
use toolgate_net::{EgressPolicy, StaticLookup};

const PAGE: &str = "<!doctype html><title>Bench</title><h1>Benchmark page</h1>\
    <p>Some text to read, a list and a form.</p><ul><li><a href=\"/a\">First</a></li>\
    <li><a href=\"/b\">Second</a></li></ul><form><input name=q><button>Go</button></form>";

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn report(name: &str, mut times: Vec<Duration>) {
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "| {name} | {} | {:.1} | {:.1} | {:.1} | {:.1} |",
        times.len(),
        ms(percentile(&times, 0.5)),
        ms(percentile(&times, 0.9)),
        ms(percentile(&times, 0.99)),
        ms(*times.last().unwrap()),
    );
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    assert!(
        std::path::Path::new(DEFAULT_CHROMIUM).is_file(),
        "install Debian's chromium: apt-get install chromium"
    );
    let iterations: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(200);
    let app = Router::new().route("/", get(|| async { Html(PAGE) }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let site = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });

    let egress = EgressPolicy::default()
        .allow_host(&site.to_string())
        .unwrap()
        .allow_plain_http(&site.to_string())
        .unwrap();
    let cfg = BrowserConfig {
        enabled: true,
        egress,
        ..BrowserConfig::default()
    };
    let tools = browser_tools_with_lookup(&cfg, Arc::new(StaticLookup::new()));
    let (read, ctx) = (&tools[0], ToolContext::for_test());
    let url = format!("http://{site}/");

    let started = Instant::now();
    read.call(json!({"action": "navigate", "url": url}), ctx.clone())
        .await
        .unwrap();
    let launch = started.elapsed();
    for _ in 0..10 {
        read.call(json!({"action": "navigate", "url": url}), ctx.clone())
            .await
            .unwrap();
    }
    let (mut navigate, mut snapshot) = (Vec::new(), Vec::new());
    for _ in 0..iterations {
        let t = Instant::now();
        read.call(json!({"action": "navigate", "url": url}), ctx.clone())
            .await
            .unwrap();
        navigate.push(t.elapsed());
        let t = Instant::now();
        read.call(json!({"action": "snapshot"}), ctx.clone())
            .await
            .unwrap();
        snapshot.push(t.elapsed());
    }
    println!(
        "first call (Chromium launch + navigate + snapshot): {:.0} ms\n",
        launch.as_secs_f64() * 1000.0
    );
    println!("| action | n | p50 ms | p90 ms | p99 ms | max ms |\n|---|---|---|---|---|---|");
    report("navigate (load + snapshot)", navigate);
    report("snapshot", snapshot);
    read.call(json!({"action": "close"}), ctx).await.unwrap();
}
