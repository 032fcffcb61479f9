//! Approval channels end to end (issue 19): `toolgate serve` with `[[approvals.channels]]`
//! against local fakes of the Telegram Bot API and the Slack Web API + interactivity
//! (`tests/peers/fake_telegram.py`, `fake_slack.py`, checked by the official SDKs in
//! `chat_sdk_check.py`, which also validates every message toolgate posted here). A waiting
//! `toolgate call` is the caller; operators tap in the fakes.
//!
//! This file holds the fakes and the steps the tests share; the tests are in `telegram`,
//! `slack`, `recovery` (races, restarts, outages, rate limits, replicas) and `doctor`.

use std::io::BufRead;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::harness::{Env, Run, http, peer_python, serving_address};

mod bots;
mod doctor;
mod one_desk;
mod recovery;
mod slack;
mod telegram;

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
