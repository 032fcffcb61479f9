//! Query-embedding latency of the local encoder, one query at a time (the hybrid search's
//! dominant cost): `cargo run --release -p toolgate-rag --example embed_latency -- MODEL_DIR`.
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use toolgate_rag::LocalEmbedder;

const QUERIES: [&str; 6] = [
    "What's the weather like in Beijing tomorrow?",
    "read a file",
    "Find the area of a triangle with base 10 units and height 5 units.",
    "I need to book a flight from San Francisco to New York on the 3rd of next month for two adults and then reserve a hotel near Central Park for three nights.",
    "convert a PDF to text",
    "open a GitHub issue about the failing build",
];

/// CPU time of the whole process so far (all threads), from /proc/self/stat.
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or("", |(_, rest)| rest)
        .split_whitespace()
        .collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    // utime and stime, fields 14 and 15 (1-based; 12 and 13 after the command name).
    Duration::from_millis((ticks(11) + ticks(12)) * 10)
}

fn main() {
    let dir = std::env::args()
        .nth(1)
        .expect("usage: embed_latency MODEL_DIR [ROUNDS]");
    let rounds: usize = std::env::args()
        .nth(2)
        .and_then(|r| r.parse().ok())
        .unwrap_or(50);
    let model = LocalEmbedder::load(&dir).expect("model");
    let matrix: Vec<f32> = (0..10_000 * 384)
        .map(|i| ((i % 97) as f32) * 0.001)
        .collect();
    let v: Vec<f32> = (0..384).map(|i| (i % 13) as f32 * 0.01).collect();
    let mut scan: Vec<Duration> = (0..50)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(toolgate_rag::dense::kernel::dot_rows(&matrix, 384, &v));
            t.elapsed()
        })
        .collect();
    scan.sort();
    println!(
        "dense scan of 10,000 × 384: p50 {:?} min {:?}",
        scan[25], scan[0]
    );
    let codes: Vec<i8> = (0..10_000 * 384).map(|i| (i % 251 - 125) as i8).collect();
    let qcodes: Vec<i8> = (0..384).map(|i| (i % 29 - 14) as i8).collect();
    let mut scan: Vec<Duration> = (0..50)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(toolgate_rag::dense::kernel::dot_rows_i8(
                &codes, 384, &qcodes,
            ));
            t.elapsed()
        })
        .collect();
    scan.sort();
    println!(
        "i8 scan of 10,000 × 384 (the first pass): p50 {:?} min {:?}",
        scan[25], scan[0]
    );
    let hello = model.embed(&["hello world".to_owned()]).expect("embed");
    println!(
        "\"hello world\" → {:?} (reference −0.0345, 0.0310, 0.0067, 0.0261)",
        &hello[0][..4]
    );
    for q in QUERIES {
        model.embed(&[q.to_owned()]).expect("warm-up");
    }
    for q in QUERIES {
        let tokens = model.token_ids(q).expect("tokens").len();
        let cpu = cpu_time();
        let mut times: Vec<Duration> = (0..rounds)
            .map(|_| {
                let t = Instant::now();
                model.embed(&[q.to_owned()]).expect("embed");
                t.elapsed()
            })
            .collect();
        let cpu = (cpu_time() - cpu).as_secs_f64() * 1e3 / rounds as f64;
        times.sort();
        println!(
            "{tokens:>3} tokens  p50 {:>7.3} ms  min {:>7.3} ms  cpu/query {cpu:>7.3} ms",
            times[times.len() / 2].as_secs_f64() * 1e3,
            times[0].as_secs_f64() * 1e3
        );
    }
}
