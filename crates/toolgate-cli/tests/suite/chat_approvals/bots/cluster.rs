//! Two replicas of `toolgate serve` on one PostgreSQL store, one Slack bot behind them (its
//! events and presses reach either replica, as behind a load balancer): a turn started on
//! replica A, A killed while its card waits, Slack's redelivery of the event to B ignored, the
//! card approved through B — B takes the conversation over, the tool runs once and the answer
//! is posted once.

use std::time::Duration;

use toolgate_agent::fake::{FakeTurn, Reply};
use toolgate_testkit::pg::Scratch;

use super::*;

#[test]
fn a_slack_turn_is_handed_over_when_its_replica_dies_and_answers_once() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let db = rt.block_on(Scratch::new());
    let bot = Bot::slack_with(
        vec![
            Reply::Turn(FakeTurn::calls(&[(
                "call_1",
                "write_file",
                r#"{"path":"out.md","content":"from the cluster"}"#,
            )])),
            Reply::Turn(FakeTurn::text("Wrote it on the other replica.")),
        ],
        &format!("\n[store]\nurl = \"{}\"\n", db.url()),
    );
    let data_b = bot.env.root().join("replica-b");
    std::fs::create_dir_all(&data_b).unwrap();
    let mut a = bot.serve();
    let b = bot.serve_at(&data_b);
    wait_for("both replicas to know the bot", || {
        (std::fs::read_to_string(&bot.log)
            .unwrap_or_default()
            .matches("bot: talking to the agent")
            .count()
            >= 2)
            .then_some(())
    });
    let hook = |addr: &str| format!("http://{addr}/hooks/bots/slack/assistant");
    let said = bot.fake.post(
        "/_test/event",
        &json!({"url": hook(&a.addr), "type": "app_mention", "channel": SLACK_CHAT,
                "user": "U0ALICE", "text": "<@U0TGBOT01> please write out.md"}),
    );
    assert_eq!(said["status"], 200, "{said}");
    let thread = said["ts"].as_str().unwrap().to_owned();
    let bot_messages = || -> Vec<Value> {
        bot.fake
            .messages()
            .into_iter()
            .filter(|m| m["channel"] == SLACK_CHAT && m["user"].is_null() && m["deleted"] != true)
            .collect()
    };
    let card = wait_for("the card in the thread", || {
        bot_messages()
            .into_iter()
            .find(|m| m["blocks"].is_array() && m["thread_ts"] == thread.as_str())
    });
    // Killed once the card is recorded (see the Telegram restart test).
    std::thread::sleep(Duration::from_millis(500));
    a.child.kill().unwrap(); // SIGKILL
    a.child.wait().unwrap();
    // Slack got no answer in time from A's address and redelivers to B: handled once.
    let again = bot.fake.post(
        "/_test/event",
        &json!({"url": hook(&b.addr), "type": "app_mention", "channel": SLACK_CHAT,
                "user": "U0ALICE", "text": "<@U0TGBOT01> please write out.md",
                "event_id": said["event_id"], "retry": 1}),
    );
    assert_eq!(again["status"], 200, "{again}");
    let approve = card["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "actions")
        .unwrap()["elements"][0]["action_id"]
        .as_str()
        .unwrap()
        .to_owned();
    click(
        &bot.fake,
        &hook(&b.addr),
        &card,
        "U0ALICE",
        &approve,
        json!({}),
    );
    let told = ephemeral_to(&bot.fake, "U0ALICE", 1);
    assert!(told[0].contains("Approved"), "{told:?}");
    // B takes the conversation over once A's lease lapses; the write A had reserved runs
    // once its reservation lapses (3 s here).
    wait_within(Duration::from_secs(60), "the answer on B", || {
        bot_messages()
            .iter()
            .any(|m| m["text"] == "Wrote it on the other replica.")
            .then_some(())
    });
    std::thread::sleep(Duration::from_millis(2_500));
    let sent = bot_messages();
    let answers = sent
        .iter()
        .filter(|m| m["text"] == "Wrote it on the other replica.")
        .count();
    assert_eq!(answers, 1, "{sent:#?}");
    let cards = sent.iter().filter(|m| m["blocks"].is_array()).count();
    assert_eq!(cards, 1, "the card was posted again: {sent:#?}");
    assert_eq!(bot.env.read("out.md"), "from the cluster");
    drop(b);
    // Every replica's audit chain, from the shared store.
    let export = bot.env.root().join("audit.jsonl");
    bot.env
        .run(&["audit", "export", "--out", export.to_str().unwrap()])
        .assert_code(0);
    let records: Vec<Value> = super::super::super::harness::audit_lines(&export)
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .collect();
    let runs = records
        .iter()
        .filter(|r| {
            r["tool"] == "write_file"
                && r["outcome"] == "ok"
                && !r["source"].as_str().unwrap_or("").starts_with("approvals")
        })
        .count();
    assert_eq!(runs, 1, "the write ran {runs} times across the replicas");
    let inbound = records
        .iter()
        .filter(|r| r["tool"] == "conversation.message" && r["arguments"]["direction"] == "in")
        .count();
    assert_eq!(inbound, 1, "the redelivered event was handled again");
    drop(db);
}
