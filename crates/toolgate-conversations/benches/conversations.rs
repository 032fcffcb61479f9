//! The conversation core's own cost, with a model that answers at once (in process), every turn
//! journaled in the embedded store and every message audited (durable audit, as by default):
//! 200 conversations sending 10 messages back to back (saturation: throughput), the same with
//! 1–3 s between an answer and the next message (as people talk), and one conversation alone.
//! Prints toolgate's latency per turn — from the post to the answer journaled, which is all
//! toolgate's own work here — as p50/p99, and the memory an idle conversation costs (RSS
//! growth over 2,000 answered, idle conversations).
//!
//! `cargo bench -p toolgate-conversations --bench conversations`

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;
use toolgate_audit::Durability;
use toolgate_conversations::{
    ConversationDeps, Conversations, ConversationsConfig, Live, ModelSetup, Speaker,
};
use toolgate_gateway::policy::RoleConfig;
use toolgate_gateway::{Gateway, GatewayConfig, GatewayDeps};
use toolgate_protocol::Risk;
use toolgate_registry::Catalog;
use toolgate_testkit::chat_model::{Say, ScriptedModel};

const CONVERSATIONS: usize = 200;
const TURNS: usize = 10;
const IDLE: usize = 2_000;

fn rss_kib() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4
}

fn desk(dir: &std::path::Path) -> Conversations {
    let catalog = Arc::new(Catalog::new());
    catalog
        .register_many(vec![toolgate_testkit::scripted("echo", Risk::Read) as _])
        .unwrap();
    let deps = GatewayDeps::open_dir(dir, catalog, Durability::Durable).unwrap();
    let cfg = GatewayConfig {
        roles: BTreeMap::from([("default".to_owned(), RoleConfig::default())]),
        ..GatewayConfig::default()
    };
    let gateway = Arc::new(Gateway::new(deps, &cfg).unwrap());
    let store =
        toolgate_store::Store::open_embedded(&dir.join("toolgate.db"), &dir.join("results"))
            .unwrap();
    let desk = Conversations::new(ConversationDeps {
        store: store.conversations(),
        gateway,
        model: ModelSetup {
            client: ScriptedModel::cycling(&[Say::text("ok")]),
            system: None,
            max_steps: 4,
            max_tokens: None,
            parallel_tool_calls: None,
            selector: None,
        },
        config: ConversationsConfig::default(),
    });
    desk.start(&CancellationToken::new());
    desk
}

/// Posts `text` in `chat` and waits for its answer; the time it took.
async fn turn(
    desk: &Conversations,
    row: &toolgate_conversations::ConversationRow,
    text: &str,
) -> Duration {
    let mut live = desk.listen(&row.id);
    let started = Instant::now();
    let toolgate_conversations::Posted::Queued { seq, .. } =
        desk.post(row, "u", &"default".into(), text).await.unwrap()
    else {
        panic!("not queued");
    };
    // user = seq, the model's turn = seq + 1, the answer = seq + 2.
    loop {
        match live.recv().await {
            Ok(Live::Journal { seq: s }) if s >= seq + 2 => return started.elapsed(),
            Ok(_) => {}
            Err(e) => panic!("{e}"),
        }
    }
}

fn speaker(i: usize) -> Speaker {
    Speaker {
        entry: "bench".into(),
        chat: format!("chat-{i}"),
        user_ref: format!("user-{i}"),
        principal: format!("user-{i}").into(),
        role: "default".into(),
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let desk = desk(dir.path());
        // Warm-up.
        let warm = desk.open(&speaker(usize::MAX)).await.unwrap();
        for _ in 0..20 {
            turn(&desk, &warm, "warm").await;
        }
        let started = Instant::now();
        let mut tasks = Vec::new();
        for i in 0..CONVERSATIONS {
            let desk = desk.clone();
            tasks.push(tokio::spawn(async move {
                let row = desk.open(&speaker(i)).await.unwrap();
                let mut times = Vec::with_capacity(TURNS);
                for t in 0..TURNS {
                    times.push(turn(&desk, &row, &format!("message {t}")).await);
                }
                times
            }));
        }
        let mut all = Vec::new();
        for t in tasks {
            all.extend(t.await.unwrap());
        }
        let elapsed = started.elapsed();
        all.sort_unstable();
        println!(
            "{CONVERSATIONS} conversations × {TURNS} turns back to back (saturation), model answering at once: toolgate per turn p50 {:.2} ms, p99 {:.2} ms; {:.0} turns/s",
            percentile(&all, 0.5).as_secs_f64() * 1e3,
            percentile(&all, 0.99).as_secs_f64() * 1e3,
            all.len() as f64 / elapsed.as_secs_f64()
        );
        // 200 conversations as people hold them: a message, the answer, then a pause of 1 to
        // 3 s before the next (about 100 turns/s offered in all).
        let started = Instant::now();
        let mut tasks = Vec::new();
        for i in 0..CONVERSATIONS {
            let desk = desk.clone();
            tasks.push(tokio::spawn(async move {
                let row = desk.open(&speaker(20_000 + i)).await.unwrap();
                // Spread the first messages over the first two seconds.
                tokio::time::sleep(Duration::from_millis((i as u64 * 10) % 2000)).await;
                let mut times = Vec::with_capacity(TURNS);
                for t in 0..TURNS {
                    times.push(turn(&desk, &row, &format!("message {t}")).await);
                    let think = 1000 + ((i * 7919 + t * 104_729) % 2000) as u64;
                    tokio::time::sleep(Duration::from_millis(think)).await;
                }
                times
            }));
        }
        let mut paced = Vec::new();
        for t in tasks {
            paced.extend(t.await.unwrap());
        }
        let elapsed = started.elapsed();
        paced.sort_unstable();
        println!(
            "{CONVERSATIONS} conversations × {TURNS} turns, 1–3 s between an answer and the next message ({:.0} turns/s offered): toolgate per turn p50 {:.2} ms, p99 {:.2} ms",
            paced.len() as f64 / elapsed.as_secs_f64(),
            percentile(&paced, 0.5).as_secs_f64() * 1e3,
            percentile(&paced, 0.99).as_secs_f64() * 1e3
        );
        // One conversation at a time: the latency without queueing behind the others.
        let solo = desk.open(&speaker(usize::MAX - 1)).await.unwrap();
        let mut one = Vec::new();
        for _ in 0..200 {
            one.push(turn(&desk, &solo, "alone").await);
        }
        one.sort_unstable();
        println!(
            "one conversation alone: toolgate per turn p50 {:.2} ms, p99 {:.2} ms",
            percentile(&one, 0.5).as_secs_f64() * 1e3,
            percentile(&one, 0.99).as_secs_f64() * 1e3
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
        let before = rss_kib();
        for i in 0..IDLE {
            let row = desk.open(&speaker(10_000 + i)).await.unwrap();
            turn(&desk, &row, "hello").await;
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
        let after = rss_kib();
        println!(
            "{IDLE} idle conversations (one answered turn each): RSS {before} KiB → {after} KiB, {:.1} KiB per idle conversation",
            (after.saturating_sub(before)) as f64 / IDLE as f64
        );
    });
}
