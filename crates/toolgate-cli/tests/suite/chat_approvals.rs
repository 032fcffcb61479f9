//! Approval channels end to end (issue 19): `toolgate serve` with `[[approvals.channels]]`
//! against local fakes of the Telegram Bot API and the Slack Web API + interactivity
//! (`tests/peers/fake_telegram.py`, `fake_slack.py`, checked by the official SDKs in
//! `chat_sdk_check.py`, which also validates every message toolgate posted here). A waiting
//! `toolgate call` is the caller; operators tap in the fakes.

use std::io::BufRead;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::harness::{Env, Run, http, peer_python, serving_address};

const TG_TOKEN: &str = "123456:TEST-telegram-bot-token-do-not-log";
const SLACK_TOKEN: &str = "xoxb-test-slack-token-do-not-log";
const SLACK_SECRET: &str = "slack-signing-secret-do-not-log";
const TG_WEBHOOK_SECRET: &str = "tg-webhook-secret-do-not-log";
const CHAT: &str = "-1001";
const SLACK_CHAT: &str = "C0OPS";
/// Telegram users: alice (an operator), mallory (mapped, not an operator), and 99 (unmapped).
const ALICE: i64 = 42;
const MALLORY: i64 = 43;
const STRANGER: i64 = 99;

fn peers() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/peers"))
}

/// A fake chat service, killed on drop.
struct Fake {
    child: Child,
    addr: String,
}

impl Drop for Fake {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Fake {
    fn start(script: &str, args: &[&str]) -> Fake {
        let mut child = Command::new(peer_python())
            .arg(peers().join(script))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the fake");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("the port line");
        let port = serde_json::from_str::<Value>(&line).expect("port JSON")["port"]
            .as_u64()
            .expect("a port");
        Fake {
            child,
            addr: format!("127.0.0.1:{port}"),
        }
    }

    fn telegram() -> Fake {
        Fake::start("fake_telegram.py", &["--token", TG_TOKEN, "--chat", CHAT])
    }

    fn slack() -> Fake {
        Fake::start(
            "fake_slack.py",
            &[
                "--token",
                SLACK_TOKEN,
                "--signing-secret",
                SLACK_SECRET,
                "--channel",
                &format!("{SLACK_CHAT}:ops"),
            ],
        )
    }

    fn get(&self, path: &str) -> Value {
        http(&self.addr, "GET", path, None).1
    }

    fn post(&self, path: &str, body: &Value) -> Value {
        let (status, answer) = http(&self.addr, "POST", path, Some(body));
        assert_eq!(status, 200, "{path}: {answer}");
        answer
    }

    fn messages(&self) -> Vec<Value> {
        self.get("/_test/messages")
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    /// The messages, once `ready` holds for them (20 s at most).
    fn messages_when(&self, what: &str, ready: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        wait_for(what, || {
            let m = self.messages();
            ready(&m).then_some(m)
        })
    }

    fn calls(&self, method: &str) -> u64 {
        self.get("/_test/calls")[method].as_u64().unwrap_or(0)
    }
}

fn wait_for<T>(what: &str, f: impl FnMut() -> Option<T>) -> T {
    wait_within(Duration::from_secs(20), what, f)
}

fn wait_within<T>(limit: Duration, what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// What both services' configurations share: calls wait for their decision, alice is an
/// operator, and the fakes on loopback are allowed by `[egress]`.
const PREAMBLE: &str = r#"
[approvals]
wait = true
poll_millis = 20
operators = ["alice"]

[egress]
allow_hosts = ["127.0.0.1"]
allow_http = ["127.0.0.1"]
"#;

fn telegram_config(fake: &Fake) -> String {
    format!(
        r#"{PREAMBLE}
[[approvals.channels]]
name = "oncall"
kind = "telegram"
token_env = "TG_TOKEN"
api_url = "http://{addr}"
chats = ["{CHAT}"]
[approvals.channels.operators]
"{ALICE}" = "alice"
"{MALLORY}" = "mallory"
"#,
        addr = fake.addr
    )
}

fn slack_config(fake: &Fake) -> String {
    format!(
        r#"{PREAMBLE}
[[approvals.channels]]
name = "ops"
kind = "slack"
token_env = "SLACK_TOKEN"
signing_secret_env = "SLACK_SIGNING_SECRET"
api_url = "http://{addr}/api"
chats = ["{SLACK_CHAT}"]
operators = {{ "U0ALICE" = "alice", "U0MALLORY" = "mallory" }}
"#,
        addr = fake.addr
    )
}

/// `toolgate serve` with the chat secrets in its environment; stderr kept in `log`.
struct Served {
    child: Child,
    addr: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(env: &Env, log: &Path) -> Served {
    serve_on(env, log, "127.0.0.1:0")
}

fn serve_on(env: &Env, log: &Path, listen: &str) -> Served {
    serve_replica(env, log, listen, &env.data)
}

/// `toolgate serve` with its own data dir `data` (a replica, when `[store] url` is shared).
fn serve_replica(env: &Env, log: &Path, listen: &str, data: &Path) -> Served {
    let stderr = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .expect("log file");
    let mut child = env
        .command_for(data)
        .env("TG_TOKEN", TG_TOKEN)
        .env("SLACK_TOKEN", SLACK_TOKEN)
        .env("SLACK_SIGNING_SECRET", SLACK_SECRET)
        .env("TG_WEBHOOK_SECRET", TG_WEBHOOK_SECRET)
        .env("TOOLGATE_LOG", "info")
        .args(["serve", "--listen", listen])
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .expect("spawn toolgate serve");
    let addr = serving_address(&mut child);
    Served { child, addr }
}

/// A `toolgate call TOOL` that waits for its approval.
fn waiting_call(env: &Env, tool: &str, args: &Value) -> Child {
    env.command()
        .args(["call", tool, "--args", &args.to_string(), "--no-prompt"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn toolgate call")
}

fn pending_id(env: &Env) -> String {
    wait_for("the approval request", || {
        let listed = env.run(&["approvals", "list", "--json"]);
        listed.json()[0]["id"].as_str().map(str::to_owned)
    })
}

fn show(env: &Env, id: &str) -> Value {
    let listed = env.run(&["approvals", "list", "--all", "--json"]).json();
    listed
        .as_array()
        .and_then(|all| all.iter().find(|r| r["id"] == id).cloned())
        .unwrap_or_else(|| panic!("{id} not listed: {listed}"))
}

fn finished(child: Child) -> Run {
    Run::from_output(child.wait_with_output().expect("wait for the call"))
}

/// The audit records a channel wrote for its decisions.
fn chat_records(env: &Env, via: &str) -> Vec<Value> {
    env.audit_records()
        .into_iter()
        .filter(|r| r["source"] == json!(format!("approvals:{via}")))
        .collect()
}

fn tap(fake: &Fake, message: &Value, from: i64, data: &str) -> Value {
    fake.post(
        "/_test/tap",
        &json!({"chat_id": CHAT.parse::<i64>().unwrap(), "message_id": message["message_id"],
                "from_id": from, "data": data}),
    )
}

/// A tap on a card that may have changed meanwhile (a client that did not refresh yet).
fn tap_stale(fake: &Fake, message: &Value, from: i64, data: &str) -> Value {
    fake.post(
        "/_test/tap",
        &json!({"chat_id": CHAT.parse::<i64>().unwrap(), "message_id": message["message_id"],
                "from_id": from, "data": data, "force": true}),
    )
}

/// The callback answer toolgate gave to the tap `query`.
fn answer_to(fake: &Fake, query: &Value) -> String {
    wait_for("the tap's answer", || {
        fake.get("/_test/answers")
            .as_array()?
            .iter()
            .find(|a| a["callback_query_id"] == query["callback_query_id"])
            .and_then(|a| a["text"].as_str().map(str::to_owned))
    })
}

/// What toolgate sent passes the official SDKs' models.
fn validate_with_sdks(telegram: Option<&Fake>, slack: Option<&Fake>) -> Value {
    let url = |f: Option<&Fake>| f.map_or("-".to_owned(), |f| format!("http://{}", f.addr));
    super::harness::peer_json(
        Command::new(peer_python())
            .arg(peers().join("chat_sdk_check.py"))
            .args(["--validate", &url(telegram), &url(slack)]),
    )
}

fn assert_no_secret(log: &Path) {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    for secret in [
        TG_TOKEN,
        SLACK_TOKEN,
        SLACK_SECRET,
        "TEST-telegram",
        "do-not-log",
    ] {
        assert!(!text.contains(secret), "a secret reached the log:\n{text}");
    }
}

/// A request is announced once with the console's preview; strangers' and non-operators'
/// taps are refused and audited; an operator's tap approves it, the waiting call resumes,
/// the card says who decided where, and the decision records the principal and channel.
#[test]
fn a_telegram_tap_approves_and_the_waiting_call_resumes() {
    let fake = Fake::telegram();
    let env = Env::with_config(&telegram_config(&fake));
    let log = env.root().join("serve.log");
    let _served = serve(&env, &log);
    let call = waiting_call(
        &env,
        "write_file",
        &json!({"path": "w.txt", "content": "from chat"}),
    );
    let id = pending_id(&env);
    let card = fake.messages_when("the card", |m| !m.is_empty())[0].clone();
    let text = card["text"].as_str().unwrap();
    for expected in ["write_file", &id, "\"from chat\"", "Caller: cli:tester"] {
        assert!(text.contains(expected), "{expected} not in {text}");
    }
    let buttons: Vec<&str> = card["reply_markup"]["inline_keyboard"][0]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["callback_data"].as_str().unwrap())
        .collect();
    let approve = format!("a.once.{id}");
    assert_eq!(
        buttons,
        [
            approve.as_str(),
            &format!("a.session.{id}"),
            &format!("a.always.{id}"),
            &format!("d.{id}")
        ]
    );

    for (who, reason) in [
        (STRANGER, "not mapped to a toolgate operator"),
        (MALLORY, "mallory does not hold the operator right"),
    ] {
        let q = tap(&fake, &card, who, &approve);
        let answer = answer_to(&fake, &q);
        assert!(
            answer.starts_with("Not allowed") && answer.contains(reason),
            "{answer}"
        );
    }
    assert_eq!(show(&env, &id)["status"], "pending");
    // A reply that is not the tool's name approves nothing, even from an operator.
    fake.post(
        "/_test/reply",
        &json!({"chat_id": CHAT.parse::<i64>().unwrap(), "reply_to_message_id": card["message_id"],
                "from_id": ALICE, "text": "no"}),
    );
    fake.messages_when("the answer to the reply", |m| {
        m.iter().any(|x| {
            x["text"]
                .as_str()
                .is_some_and(|t| t.starts_with("`no` is not `write_file`: a reply approves only"))
        })
    });
    assert_eq!(show(&env, &id)["status"], "pending");

    let q = tap(&fake, &card, ALICE, &approve);
    assert!(answer_to(&fake, &q).starts_with("✅ Approved once by alice via telegram:oncall"));
    let run = finished(call);
    run.assert_code(0);
    assert_eq!(env.read("w.txt"), "from chat");
    let decided = show(&env, &id);
    assert_eq!(
        (&decided["decided_by"], &decided["decided_via"]),
        (&json!("alice"), &json!("telegram:oncall"))
    );
    let card = fake.messages_when("the card closed", |m| {
        m[0]["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("✅ Approved once by alice via telegram:oncall"))
    })[0]
        .clone();
    assert!(card["reply_markup"].is_null(), "no buttons left: {card}");
    assert_eq!(
        fake.messages()
            .iter()
            .filter(|m| m["reply_markup"].is_object()
                || m["edits"].as_array().is_some_and(|e| !e.is_empty()))
            .count(),
        1,
        "announced exactly once (the other message is the answer to the reply)"
    );

    let records = chat_records(&env, "telegram:oncall");
    let outcomes: Vec<(&str, &str)> = records
        .iter()
        .map(|r| {
            (
                r["principal"].as_str().unwrap(),
                r["outcome"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        outcomes,
        [
            ("telegram:99", "forbidden"),
            ("mallory", "forbidden"),
            ("alice", "invalid_arguments"),
            ("alice", "ok")
        ]
    );
    assert_eq!(records[3]["approval_id"], json!(id));
    assert_eq!(records[3]["approver"], "alice");
    assert_eq!(
        records[3]["arguments"]["chat_user"],
        json!(ALICE.to_string())
    );

    let checked = validate_with_sdks(Some(&fake), None);
    assert!(
        checked["telegram_messages"].as_u64() >= Some(1),
        "{checked}"
    );
    assert_no_secret(&log);
}

/// A dangerous tool is never approved by a tap: only a reply with its exact name does.
#[test]
fn a_dangerous_tool_needs_the_typed_name_in_telegram() {
    let fake = Fake::telegram();
    let env = Env::with_config(&telegram_config(&fake));
    let log = env.root().join("serve.log");
    let _served = serve(&env, &log);
    let call = waiting_call(&env, "shell", &json!({"command": "echo typed > t.txt"}));
    let id = pending_id(&env);
    let card = fake.messages_when("the card", |m| !m.is_empty())[0].clone();
    assert!(
        card["text"]
            .as_str()
            .unwrap()
            .contains("Reply to this message with `shell`")
    );

    let q = tap(&fake, &card, ALICE, &format!("a.once.{id}"));
    let answer = answer_to(&fake, &q);
    assert!(answer.contains("a tap does not approve it"), "{answer}");
    assert_eq!(show(&env, &id)["status"], "pending");

    let reply = |text: &str| {
        fake.post(
            "/_test/reply",
            &json!({"chat_id": CHAT.parse::<i64>().unwrap(), "reply_to_message_id": card["message_id"],
                    "from_id": ALICE, "text": text}),
        )
    };
    reply("shel");
    let refused = fake.messages_when("the refusal", |m| {
        m.iter().any(|x| {
            x["text"]
                .as_str()
                .is_some_and(|t| t.contains("`shel` is not `shell`"))
        })
    });
    assert!(!refused.is_empty());
    assert_eq!(show(&env, &id)["status"], "pending");
    reply("shell");
    let run = finished(call);
    run.assert_code(0);
    assert_eq!(env.read("t.txt").trim(), "typed");
    assert_eq!(show(&env, &id)["decided_via"], "telegram:oncall");
    assert_no_secret(&log);
}

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
/// decides after the restart, and the card is not posted again. A lost connection to the
/// service delays the announcement, never duplicates it.
#[test]
fn after_a_kill_and_restart_the_same_card_decides() {
    let fake = Fake::telegram();
    let env = Env::with_config(&telegram_config(&fake));
    let log = env.root().join("serve.log");
    let mut served = serve(&env, &log);
    fake.post("/_test/outage", &json!({"ms": 3000}));
    let call = waiting_call(
        &env,
        "write_file",
        &json!({"path": "k.txt", "content": "kept"}),
    );
    let id = pending_id(&env);
    // A post that got no answer may have reached the service: its claim is kept for the
    // lease (30 s) before the card is posted again, so the outage delays it, never doubles it.
    let card = wait_within(Duration::from_secs(60), "the card after the outage", || {
        let m = fake.messages();
        (!m.is_empty()).then_some(m)
    })[0]
        .clone();
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
    assert_eq!(
        posted, 1,
        "one successful sendMessage (the others were dropped by the outage)"
    );
    assert_no_secret(&log);
}

fn click(fake: &Fake, hook: &str, card: &Value, user: &str, action: &str, extra: Value) -> Value {
    let mut body = json!({"url": hook, "channel": SLACK_CHAT, "ts": card["ts"],
                          "user_id": user, "action_id": action, "value": action});
    if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
        b.extend(e.clone());
    }
    fake.post("/_test/click", &body)
}

fn ephemeral_to(fake: &Fake, user: &str, n: usize) -> Vec<String> {
    wait_for("the ephemeral answers", || {
        let all: Vec<String> = fake
            .get("/_test/ephemeral")
            .as_array()?
            .iter()
            .filter(|e| e["user"] == user)
            .filter_map(|e| e["text"].as_str().map(str::to_owned))
            .collect();
        (all.len() >= n).then_some(all)
    })
}

/// Slack: forged interactions (bad signature, a stale timestamp, a replay) are refused
/// before anything is read; a dangerous tool needs its name typed in the card's box; the
/// operator's click with it approves, and the card is replaced.
#[test]
fn slack_interactions_are_verified_and_decide() {
    let fake = Fake::slack();
    let env = Env::with_config(&slack_config(&fake));
    let log = env.root().join("serve.log");
    let served = serve(&env, &log);
    let hook = format!("http://{}/hooks/slack/ops", served.addr);
    let call = waiting_call(&env, "shell", &json!({"command": "echo slack > s.txt"}));
    let id = pending_id(&env);
    let card = fake.messages_when("the card", |m| !m.is_empty())[0].clone();
    let blocks = card["blocks"].as_array().unwrap();
    assert!(
        blocks
            .iter()
            .any(|b| b["type"] == "input" && b["block_id"] == "confirm")
    );
    let approve = format!("a.once.{id}");

    for (forgery, why) in [
        (json!({"bad_signature": true}), "signature does not match"),
        (json!({"timestamp_offset": -600}), "more than 5 minutes"),
    ] {
        let answer = click(&fake, &hook, &card, "U0ALICE", &approve, forgery);
        assert_eq!(answer["status"], 401, "{answer}");
        assert!(answer["body"].as_str().unwrap().contains(why), "{answer}");
    }
    // A genuine click without the typed name, then the same request replayed.
    let genuine = click(&fake, &hook, &card, "U0ALICE", &approve, json!({}));
    assert_eq!(genuine["status"], 200, "{genuine}");
    let replayed = click(
        &fake,
        &hook,
        &card,
        "U0ALICE",
        &approve,
        json!({"replay": true}),
    );
    assert_eq!(replayed["status"], 401, "{replayed}");
    assert!(replayed["body"].as_str().unwrap().contains("replay"));
    let told = ephemeral_to(&fake, "U0ALICE", 1);
    assert!(told[0].contains("a tap does not approve it"), "{told:?}");
    assert_eq!(show(&env, &id)["status"], "pending");

    let mallory = click(
        &fake,
        &hook,
        &card,
        "U0MALLORY",
        &approve,
        json!({"state": {"confirm": {"confirm_name": {"type": "plain_text_input", "value": "shell"}}}}),
    );
    assert_eq!(mallory["status"], 200);
    assert!(ephemeral_to(&fake, "U0MALLORY", 1)[0].starts_with("Not allowed"));
    assert_eq!(show(&env, &id)["status"], "pending");

    let typed = click(
        &fake,
        &hook,
        &card,
        "U0ALICE",
        &approve,
        json!({"state": {"confirm": {"confirm_name": {"type": "plain_text_input", "value": "shell"}}}}),
    );
    assert_eq!(typed["status"], 200, "{typed}");
    finished(call).assert_code(0);
    assert_eq!(env.read("s.txt").trim(), "slack");
    let decided = show(&env, &id);
    assert_eq!(
        (&decided["decided_by"], &decided["decided_via"]),
        (&json!("alice"), &json!("slack:ops"))
    );
    let closed = fake.messages_when("the card replaced", |m| {
        m[0]["updates"].as_array().is_some_and(|u| !u.is_empty())
    })[0]
        .clone();
    let last = &closed["blocks"];
    assert!(
        last.to_string()
            .contains("Approved once by alice via slack:ops"),
        "{last}"
    );
    assert!(
        !last.to_string().contains("\"actions\""),
        "no buttons left: {last}"
    );
    let outcomes: Vec<String> = chat_records(&env, "slack:ops")
        .iter()
        .map(|r| {
            format!(
                "{} {}",
                r["principal"].as_str().unwrap(),
                r["outcome"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        outcomes,
        ["alice invalid_arguments", "mallory forbidden", "alice ok"]
    );
    validate_with_sdks(None, Some(&fake));
    assert_no_secret(&log);
}

/// `toolgate doctor` checks each channel: token accepted, chat reachable — or says why not.
#[test]
fn doctor_checks_each_channel() {
    let fake = Fake::telegram();
    let config = telegram_config(&fake).replace(
        &format!("chats = [\"{CHAT}\"]"),
        &format!("chats = [\"{CHAT}\", \"-1002\"]"),
    );
    let env = Env::with_config(&config);
    let doctor = |token: Option<&str>| {
        let mut cmd = env.command();
        cmd.args(["doctor", "--json"]);
        if let Some(t) = token {
            cmd.env("TG_TOKEN", t);
        }
        let run = Run::from_output(cmd.output().expect("doctor"));
        run.json()["checks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["name"].as_str().unwrap().starts_with("approvals:"))
            .map(|c| {
                format!(
                    "{} {} {}",
                    c["status"].as_str().unwrap(),
                    c["name"].as_str().unwrap(),
                    c["detail"].as_str().unwrap()
                )
            })
            .collect::<Vec<_>>()
    };
    let good = doctor(Some(TG_TOKEN));
    assert!(
        good[0].starts_with("ok approvals: telegram:oncall token accepted: @"),
        "{good:?}"
    );
    assert!(
        good[1].starts_with(&format!(
            "ok approvals: telegram:oncall chat {CHAT} reachable"
        )),
        "{good:?}"
    );
    assert!(
        good[2].starts_with("fail approvals: telegram:oncall chat -1002")
            && good[2].contains("chat not found"),
        "{good:?}"
    );

    // mallory is mapped but holds no operator right anywhere in the configuration.
    assert!(
        good.iter().any(|l| l.starts_with(
            "warn approvals: telegram:oncall operators mallory hold(s) no operator token"
        )),
        "{good:?}"
    );
    let wrong = doctor(Some("123:wrong"));
    assert!(
        wrong[0].starts_with("fail") && wrong[0].contains("the token is wrong or revoked"),
        "{wrong:?}"
    );
    let unset = doctor(None);
    assert!(
        unset[0].starts_with("fail") && unset[0].contains("TG_TOKEN"),
        "{unset:?}"
    );
    for line in good.iter().chain(&wrong).chain(&unset) {
        assert!(
            !line.contains(TG_TOKEN) && !line.contains("123:wrong"),
            "{line}"
        );
    }

    // Without the egress allowance nothing reaches the fake.
    let guarded = Env::with_config(&config.replace("allow_hosts = [\"127.0.0.1\"]", ""));
    let run = Run::from_output(
        guarded
            .command()
            .args(["doctor", "--json"])
            .env("TG_TOKEN", TG_TOKEN)
            .output()
            .unwrap(),
    );
    let refused = run.json()["checks"].to_string();
    assert!(refused.contains("refused by [egress]"), "{refused}");
}

/// A long request is paged (anyone in the chat may page; nothing is decided by it), its
/// secrets are redacted on the card, and once it expires the card says so; a tap on the
/// expired card answers how it ended.
#[test]
fn long_requests_are_paged_redacted_and_expiry_updates_the_card() {
    let fake = Fake::telegram();
    let config = telegram_config(&fake).replace("wait = true", "wait = false\nttl_secs = 3");
    let env = Env::with_config(&config);
    let log = env.root().join("serve.log");
    let _served = serve(&env, &log);
    let secret = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB";
    let content: String =
        (0..300).map(|i| format!("line {i}\n")).collect::<String>() + &format!("token {secret}\n");
    let run = env.call(
        "write_file",
        &json!({"path": "long.txt", "content": content}),
    );
    assert_eq!(run.envelope()["error"]["code"], "approval_required");
    let id = pending_id(&env);
    let card = fake.messages_when("the card", |m| !m.is_empty())[0].clone();
    let text = card["text"].as_str().unwrap();
    assert!(text.contains("(page 1 of 2)"), "{text}");
    let rows = card["reply_markup"]["inline_keyboard"].as_array().unwrap();
    assert_eq!(rows[1][0]["callback_data"], json!(format!("p.1.{id}")));
    tap(&fake, &card, STRANGER, &format!("p.1.{id}"));
    let paged = fake.messages_when("page 2", |m| {
        m[0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("(page 2 of 2)"))
    })[0]
        .clone();
    let page2 = paged["text"].as_str().unwrap();
    assert!(
        page2.contains("line 299") && page2.contains("[REDACTED]"),
        "{page2}"
    );
    for m in fake.messages() {
        assert!(
            !m.to_string().contains(secret),
            "a secret reached the chat: {m}"
        );
    }
    assert_eq!(
        show(&env, &id)["status"],
        "pending",
        "paging decides nothing"
    );

    let expired = fake.messages_when("the card expired", |m| {
        m[0]["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("⌛ Expired"))
    })[0]
        .clone();
    assert!(expired["reply_markup"].is_null());
    let q = tap_stale(&fake, &card, ALICE, &format!("a.once.{id}"));
    let answer = answer_to(&fake, &q);
    assert!(
        answer.starts_with("Already decided: ⌛ Expired"),
        "{answer}"
    );
    assert_eq!(show(&env, &id)["status"], "expired");
    validate_with_sdks(Some(&fake), None);
}

/// Telegram in webhook mode: toolgate registers `<public_url>/hooks/telegram/<name>` with its
/// secret token at start; updates carrying the secret decide, anything else is refused.
#[test]
fn telegram_webhook_mode_takes_only_updates_with_the_secret() {
    let fake = Fake::telegram();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let config = telegram_config(&fake).replace(
        "token_env = \"TG_TOKEN\"",
        "token_env = \"TG_TOKEN\"\nupdates = \"webhook\"\nwebhook_secret_env = \"TG_WEBHOOK_SECRET\"",
    ) + &format!("\n[server]\npublic_url = \"http://127.0.0.1:{port}\"\n");
    let env = Env::with_config(&config);
    let log = env.root().join("serve.log");
    let served = serve_on(&env, &log, &format!("127.0.0.1:{port}"));
    let hook = format!("http://127.0.0.1:{port}/hooks/telegram/oncall");
    wait_for("the webhook registered", || {
        (fake.get(&format!("/bot{TG_TOKEN}/getWebhookInfo"))["result"]["url"] == json!(hook))
            .then_some(())
    });
    let call = waiting_call(
        &env,
        "write_file",
        &json!({"path": "h.txt", "content": "hooked"}),
    );
    let id = pending_id(&env);
    let card = fake.messages_when("the card", |m| !m.is_empty())[0].clone();

    let update = json!({"update_id": 1, "callback_query": {
        "id": "forged", "from": {"id": ALICE, "is_bot": false, "first_name": "A"},
        "message": {"message_id": card["message_id"], "date": 0, "chat": {"id": CHAT.parse::<i64>().unwrap(), "type": "group"}},
        "chat_instance": "x", "data": format!("a.once.{id}")}});
    for secret in [None, Some("guess")] {
        let headers: Vec<(&str, &str)> = secret
            .map(|s| vec![("X-Telegram-Bot-Api-Secret-Token", s)])
            .unwrap_or_default();
        let answer = super::harness::http_with(
            &served.addr,
            "POST",
            "/hooks/telegram/oncall",
            &headers,
            Some(&update),
        );
        assert_eq!(answer.status, 401, "{}", answer.text);
    }
    assert_eq!(show(&env, &id)["status"], "pending");

    let q = tap(&fake, &card, ALICE, &format!("a.once.{id}"));
    assert!(answer_to(&fake, &q).starts_with("✅ Approved once by alice"));
    finished(call).assert_code(0);
    assert_eq!(env.read("h.txt"), "hooked");
    let delivered = fake.get("/_test/deliveries");
    assert!(
        delivered
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["status"] == 200),
        "{delivered}"
    );
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
        &json!({"method": "sendMessage", "count": 1, "retry_after": 6}),
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
        asked.elapsed() >= Duration::from_secs(4),
        "posted {:?} after the request, inside Telegram's 6 s pause",
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
