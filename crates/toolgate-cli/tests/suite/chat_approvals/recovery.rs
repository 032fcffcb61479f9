//! Exactly once under stress: console and chat at once, a SIGKILL and restart, an outage,
//! a rate limit, two replicas.

use super::*;

/// The console and a chat decide the same request at the same moment: it is decided once,
/// and the loser is told who won.
#[test]
fn a_decision_in_the_console_and_the_chat_at_once_resolves_once() {
    let fake = Fake::telegram();
    let env = Env::with_config(&telegram_config(&fake));
    let log = env.root().join("serve.log");
    let served = serve(&env, &log);
    let call = waiting_call(
        &env,
        "write_file",
        &json!({"path": "r.txt", "content": "race"}),
    );
    let id = pending_id(&env);
    let card = fake.messages_when("the card", |m| !m.is_empty())[0].clone();

    let addr = served.addr.clone();
    let path = format!("/v1/approvals/{id}/decision");
    let console =
        std::thread::spawn(move || http(&addr, "POST", &path, Some(&json!({"approve": true}))));
    let q = tap_stale(&fake, &card, ALICE, &format!("d.{id}"));
    let (status, _) = console.join().unwrap();
    let answer = answer_to(&fake, &q);
    let decided = show(&env, &id);
    let chat_won = chat_records(&env, "telegram:oncall")
        .iter()
        .any(|r| r["outcome"] == "ok");
    match decided["status"].as_str().unwrap() {
        "approved" => {
            assert_eq!(status, 200);
            assert!(!chat_won);
            assert!(decided["decided_via"].is_null());
            assert!(
                answer.starts_with("Already decided: ✅ Approved once"),
                "{answer}"
            );
            finished(call).assert_code(0);
        }
        "denied" => {
            assert_eq!(status, 409, "the console lost");
            assert!(chat_won);
            assert_eq!(decided["decided_via"], "telegram:oncall");
            assert!(answer.starts_with("❌ Denied by alice"), "{answer}");
            assert_ne!(finished(call).code, 0);
        }
        other => panic!("unexpected status {other}"),
    }
    let status_word = decided["status"].as_str().unwrap().to_owned();
    fake.messages_when("the card updated once to the outcome", |m| {
        m[0]["edits"].as_array().is_some_and(|e| e.len() == 1)
            && m[0]["text"].as_str().is_some_and(|t| {
                t.contains(if status_word == "approved" {
                    "Approved"
                } else {
                    "Denied"
                })
            })
    });
    assert_eq!(fake.calls("sendMessage"), 1);
}

/// toolgate killed with a request pending and its card posted: a tap made while it was down
/// decides after the restart, and the card is not posted again. (A lost answer, a kill
/// between the post and its record, and flood control are the channels' own tests, on an
/// injected clock.)
#[test]
fn after_a_kill_and_restart_the_same_card_decides() {
    let fake = Fake::telegram();
    let env = Env::with_config(&telegram_config(&fake));
    let log = env.root().join("serve.log");
    let mut served = serve(&env, &log);
    let call = waiting_call(
        &env,
        "write_file",
        &json!({"path": "k.txt", "content": "kept"}),
    );
    let id = pending_id(&env);
    let card = fake.messages_when("the card", |m| !m.is_empty())[0].clone();
    // The kill comes once the store holds the card's message: a kill between the post and
    // that write leaves a card no tap can decide (refused, never misread; the card is
    // posted again after the lease).
    wait_for("the card recorded as posted", || {
        std::fs::read_to_string(&log)
            .ok()
            .filter(|l| l.contains("approval announced"))
    });
    assert_eq!(fake.messages().len(), 1);

    served.child.kill().expect("SIGKILL toolgate serve");
    served.child.wait().expect("reap");
    tap(&fake, &card, ALICE, &format!("a.once.{id}"));
    assert_eq!(show(&env, &id)["status"], "pending", "nobody is listening");

    let _restarted = serve(&env, &log);
    finished(call).assert_code(0);
    assert_eq!(env.read("k.txt"), "kept");
    assert_eq!(show(&env, &id)["decided_via"], "telegram:oncall");
    fake.messages_when("the card closed", |m| {
        m[0]["text"].as_str().is_some_and(|t| t.starts_with("✅"))
    });
    assert_eq!(
        fake.messages().len(),
        1,
        "not announced again after the restart"
    );
    let posted = fake
        .get("/_test/requests")
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["method"] == "sendMessage" && r["status"] == 200)
        .count();
    assert_eq!(posted, 1, "one sendMessage");
    assert_no_secret(&log);
}

/// Telegram's flood control (429 with `retry_after`): the channel posts nothing more until
/// the pause is over, then the card once — not a retry every pass.
#[test]
fn a_rate_limited_channel_waits_as_asked_then_posts_once() {
    let fake = Fake::telegram();
    let env = Env::with_config(&telegram_config(&fake));
    let log = env.root().join("serve.log");
    let _served = serve(&env, &log);
    fake.post(
        "/_test/ratelimit",
        &json!({"method": "sendMessage", "count": 1, "retry_after": 2}),
    );
    let call = waiting_call(
        &env,
        "write_file",
        &json!({"path": "f.txt", "content": "flood"}),
    );
    let id = pending_id(&env);
    let asked = Instant::now();
    let card = wait_within(Duration::from_secs(40), "the card after the pause", || {
        let m = fake.messages();
        (!m.is_empty()).then_some(m)
    })[0]
        .clone();
    assert!(
        asked.elapsed() >= Duration::from_millis(1_500),
        "posted {:?} after the request, inside Telegram's 2 s pause",
        asked.elapsed()
    );
    let attempts: Vec<Value> = fake
        .get("/_test/requests")
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["method"] == "sendMessage")
        .cloned()
        .collect();
    let statuses: Vec<&Value> = attempts.iter().map(|r| &r["status"]).collect();
    assert_eq!(statuses, [&json!(429), &json!(200)], "{attempts:?}");
    tap(&fake, &card, ALICE, &format!("a.once.{id}"));
    finished(call).assert_code(0);
    assert_no_secret(&log);
}

/// Two replicas on one PostgreSQL store, both running the Slack channel: the card is posted
/// once between them, a click on either decides the call waiting on the other, and the card
/// is replaced once.
#[test]
fn two_replicas_post_one_card_and_either_decides() {
    let db = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(toolgate_testkit::pg::Scratch::new());
    let fake = Fake::slack();
    // A loopback caller without a token acts in the default role, as the cluster tests do.
    let config = format!(
        "[store]\nurl = \"{}\"\n\n[server.anonymous]\nrole = \"default\"\noperator = true\n{}",
        db.url(),
        slack_config(&fake)
    );
    let env = Env::with_config(&config);
    let log = env.root().join("serve.log");
    let a = serve_replica(&env, &log, "127.0.0.1:0", &env.root().join("data-a"));
    let b = serve_replica(&env, &log, "127.0.0.1:0", &env.root().join("data-b"));
    let caller = a.addr.clone();
    let call = std::thread::spawn(move || {
        let body = json!({"tool": "write_file", "wait_for_approval": true,
                          "arguments": {"path": "two.txt", "content": "one card"}});
        http(&caller, "POST", "/v1/calls", Some(&body))
    });
    let card = fake.messages_when("the card", |m| !m.is_empty())[0].clone();
    // Both replicas have run several passes (every 2 s and on each change) since.
    std::thread::sleep(Duration::from_secs(5));
    assert_eq!(fake.messages().len(), 1, "one card for two replicas");
    let id = card["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|b| b["elements"].as_array().cloned().unwrap_or_default())
        .find_map(|e| {
            e["value"]
                .as_str()?
                .strip_prefix("a.once.")
                .map(str::to_owned)
        })
        .unwrap_or_else(|| panic!("no approve button: {card}"));
    let hook_b = format!("http://{}/hooks/slack/ops", b.addr);
    let clicked = click(
        &fake,
        &hook_b,
        &card,
        "U0ALICE",
        &format!("a.once.{id}"),
        json!({}),
    );
    assert_eq!(clicked["status"], 200, "{clicked}");
    let (status, envelope) = call.join().unwrap();
    assert_eq!((status, &envelope["ok"]), (200, &json!(true)), "{envelope}");
    assert_eq!(env.read("two.txt"), "one card");
    let (_, on_a) = http(&a.addr, "GET", &format!("/v1/approvals/{id}"), None);
    assert_eq!(on_a["decided_via"], "slack:ops", "{on_a}");
    let replaced = fake.messages_when("the card replaced", |m| {
        m[0]["updates"].as_array().is_some_and(|u| !u.is_empty())
    });
    std::thread::sleep(Duration::from_secs(3));
    // A card is marked ended only after its edit went through, so the tap's handler and each
    // replica's pass may edit it before one of them marks it: the same text each time, and
    // no more edits once it is marked.
    let updates: Vec<Value> = fake.messages()[0]["updates"].as_array().unwrap().clone();
    assert!(updates.len() <= 3, "{replaced:?}");
    assert!(
        updates.iter().all(|u| u["text"] == updates[0]["text"]),
        "{updates:?}"
    );
    assert_eq!(fake.messages().len(), 1);
    assert_no_secret(&log);
}
