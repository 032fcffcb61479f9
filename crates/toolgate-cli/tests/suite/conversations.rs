//! The agent under `toolgate serve`, end to end: the real binary, the scripted model server
//! behind `[model]`, a token as the user. Over `/v1/conversations`: a message → a write that
//! waits for its card in the conversation → approved there by its user → the tool runs once →
//! the answer; a stranger cannot read or decide it. SIGKILL while a turn waits for an approval
//! (decided from the CLI during the outage) and while it waits for the model: after the
//! restart, one run of the tool and one answer. The OpenAI-compatible endpoint is driven by the
//! official `openai` Python SDK, streaming and not.

use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolgate_agent::fake::{FakeServer, FakeTurn, Reply};

use super::harness::{Answer, Env, http_with, peer_python, serving_address};

const KEY_VAR: &str = "TOOLGATE_TEST_MODEL_KEY";
const KEY: &str = "sk-test-model-key-0123456789";

struct Fixture {
    _rt: tokio::runtime::Runtime,
    server: FakeServer,
    env: Env,
}

impl Drop for Fixture {
    /// A failing test shows what the servers logged.
    #[allow(clippy::print_stderr)]
    fn drop(&mut self) {
        if std::thread::panicking() {
            let log =
                std::fs::read_to_string(self.env.root().join("serve.log")).unwrap_or_default();
            eprintln!("--- toolgate serve's log ---\n{log}");
        }
    }
}

impl Fixture {
    fn new(script: Vec<Reply>) -> Fixture {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let server = rt.block_on(FakeServer::start(script)).unwrap();
        let port = server.addr.port();
        let env = Env::with_config(&format!(
            "[model]\nprovider = \"openai-chat\"\nmodel = \"fake-model\"\n\
             base_url = \"{}\"\napi_key_env = \"{KEY_VAR}\"\nretry_base_ms = 5\n\n\
             [conversations]\nlease_secs = 3\nsweep_secs = 1\n\n\
             [limits]\nreservation_lease_secs = 3\n\n\
             [egress]\nallow_hosts = [\"127.0.0.1:{port}\"]\nallow_http = [\"127.0.0.1:{port}\"]\n",
            server.base_url()
        ));
        Fixture {
            _rt: rt,
            server,
            env,
        }
    }

    /// A token for `principal` in role `default` (writes ask).
    fn token(&self, principal: &str) -> String {
        let run = self.env.run(&[
            "token",
            "create",
            "--principal",
            principal,
            "--role",
            "default",
        ]);
        run.assert_code(0);
        run.stdout.trim().to_owned()
    }

    fn serve(&self) -> (Child, String) {
        let mut child = self
            .env
            .command()
            .env(KEY_VAR, KEY)
            .env("TOOLGATE_LOG", "info")
            .args(["serve", "--listen", "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .stderr(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(self.env.root().join("serve.log"))
                    .unwrap(),
            )
            .spawn()
            .expect("spawn toolgate serve");
        let addr = serving_address(&mut child);
        (child, addr)
    }
}

fn call(addr: &str, token: &str, method: &str, path: &str, body: Option<&Value>) -> Answer {
    let bearer = format!("Bearer {token}");
    http_with(addr, method, path, &[("Authorization", &bearer)], body)
}

/// Polls the conversation until `pick` finds something in its events (60 s at most: a write
/// a killed process had reserved continues once the reservation lapses, 3 s here).
fn wait_for<T>(addr: &str, token: &str, id: &str, pick: impl Fn(&Value) -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let got = call(addr, token, "GET", &format!("/v1/conversations/{id}"), None);
        assert_eq!(got.status, 200, "{}", got.text);
        if let Some(found) = got.body["events"]
            .as_array()
            .unwrap()
            .iter()
            .find_map(&pick)
        {
            return found;
        }
        assert!(Instant::now() < deadline, "never came: {:#}", got.body);
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn kind<'a>(k: &'a str) -> impl Fn(&Value) -> Option<Value> + 'a {
    move |e: &Value| (e["kind"] == k).then(|| e.clone())
}

fn events(addr: &str, token: &str, id: &str) -> Vec<Value> {
    call(addr, token, "GET", &format!("/v1/conversations/{id}"), None).body["events"]
        .as_array()
        .unwrap()
        .clone()
}

fn kinds(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| e["kind"].as_str().unwrap().to_owned())
        .collect()
}

fn write_then_answer() -> Vec<Reply> {
    vec![
        Reply::Turn(FakeTurn::calls(&[(
            "call_1",
            "write_file",
            r#"{"path":"out.md","content":"from the chat"}"#,
        )])),
        Reply::Turn(FakeTurn::text("Wrote out.md.")),
    ]
}

fn write_outcomes(env: &Env) -> usize {
    env.audit_records()
        .iter()
        .filter(|r| {
            r["tool"] == "write_file"
                && r["outcome"] == "ok"
                && !r["source"].as_str().unwrap_or("").starts_with("approvals")
        })
        .count()
}

#[test]
fn a_web_conversation_asks_for_approval_inline_and_runs_the_tool_once() {
    let fx = Fixture::new(write_then_answer());
    let alice = fx.token("alice");
    let bob = fx.token("bob");
    let (mut child, addr) = fx.serve();
    let created = call(
        &addr,
        &alice,
        "POST",
        "/v1/conversations",
        Some(&json!({"text": "please write out.md"})),
    );
    assert_eq!(created.status, 201, "{}", created.text);
    let id = created.body["id"].as_str().unwrap().to_owned();
    assert_eq!(created.body["posted"]["queued"], true);
    let card = wait_for(&addr, &alice, &id, kind("approval"));
    let approval = card["approval_id"].as_str().unwrap();
    // The card's request, complete: what will run.
    let shown = call(
        &addr,
        &alice,
        "GET",
        &format!("/v1/conversations/{id}/approvals/{approval}"),
        None,
    );
    assert_eq!(shown.status, 200, "{}", shown.text);
    assert_eq!(shown.body["arguments"]["content"], "from the chat");
    // Another user neither reads the conversation nor decides its card.
    let peek = call(&addr, &bob, "GET", &format!("/v1/conversations/{id}"), None);
    assert_eq!(peek.status, 404, "{}", peek.text);
    let theirs = call(
        &addr,
        &bob,
        "POST",
        &format!("/v1/conversations/{id}/approvals/{approval}/decision"),
        Some(&json!({"approve": true})),
    );
    assert_eq!(theirs.status, 404, "{}", theirs.text);
    assert!(!fx.env.root().join("out.md").exists());
    let decided = call(
        &addr,
        &alice,
        "POST",
        &format!("/v1/conversations/{id}/approvals/{approval}/decision"),
        Some(&json!({"approve": true})),
    );
    assert_eq!(decided.status, 200, "{}", decided.text);
    assert_eq!(decided.body["decided_via"], "conversation:web");
    let answer = wait_for(&addr, &alice, &id, kind("answer"));
    assert_eq!(answer["text"], "Wrote out.md.");
    assert_eq!(fx.env.read("out.md"), "from the chat");
    assert_eq!(
        kinds(&events(&addr, &alice, &id)),
        [
            "user",
            "assistant",
            "approval",
            "results",
            "assistant",
            "answer"
        ]
    );
    let listed = call(&addr, &alice, "GET", "/v1/conversations", None);
    assert_eq!(
        listed.body.as_array().unwrap().len(),
        1,
        "{:#}",
        listed.body
    );
    assert_eq!(
        call(&addr, &bob, "GET", "/v1/conversations", None).body,
        json!([])
    );
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(write_outcomes(&fx.env), 1);
    let messages: Vec<(String, String)> = fx
        .env
        .audit_records()
        .iter()
        .filter(|r| r["tool"] == "conversation.message")
        .map(|r| {
            (
                r["arguments"]["direction"].as_str().unwrap().to_owned(),
                r["principal"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        messages,
        [
            ("in".into(), "alice".into()),
            ("out".into(), "alice".into())
        ]
    );
}

#[test]
fn sigkill_while_waiting_for_approval_decided_during_the_outage_runs_the_tool_once() {
    let fx = Fixture::new(write_then_answer());
    let alice = fx.token("alice");
    let (mut child, addr) = fx.serve();
    let created = call(
        &addr,
        &alice,
        "POST",
        "/v1/conversations",
        Some(&json!({"text": "please write out.md"})),
    );
    let id = created.body["id"].as_str().unwrap().to_owned();
    let card = wait_for(&addr, &alice, &id, kind("approval"));
    let approval = card["approval_id"].as_str().unwrap().to_owned();
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    // Decided while toolgate is down.
    fx.env.approve(&approval, &[]);
    let (mut child, addr) = fx.serve();
    let answer = wait_for(&addr, &alice, &id, kind("answer"));
    assert_eq!(answer["text"], "Wrote out.md.");
    std::thread::sleep(Duration::from_millis(1500));
    let all = events(&addr, &alice, &id);
    assert_eq!(
        all.iter().filter(|e| e["kind"] == "answer").count(),
        1,
        "{all:#?}"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(write_outcomes(&fx.env), 1, "the tool ran once");
    assert_eq!(
        fx.server.requests().len(),
        2,
        "the model was asked twice in all"
    );
}

#[test]
fn sigkill_while_waiting_for_the_model_answers_once_after_the_restart() {
    let fx = Fixture::new(vec![Reply::Hang, Reply::Turn(FakeTurn::text("Here I am."))]);
    let alice = fx.token("alice");
    let (mut child, addr) = fx.serve();
    let created = call(
        &addr,
        &alice,
        "POST",
        "/v1/conversations",
        Some(&json!({"text": "are you there?"})),
    );
    let id = created.body["id"].as_str().unwrap().to_owned();
    let deadline = Instant::now() + Duration::from_secs(30);
    while fx.server.requests().is_empty() {
        assert!(Instant::now() < deadline, "the model was never asked");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let (mut child, addr) = fx.serve();
    let answer = wait_for(&addr, &alice, &id, kind("answer"));
    assert_eq!(answer["text"], "Here I am.");
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(
        kinds(&events(&addr, &alice, &id)),
        ["user", "assistant", "answer"]
    );
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn the_openai_sdk_talks_to_the_agent_streaming_and_not() {
    let fx = Fixture::new(vec![
        Reply::Turn(FakeTurn::calls(&[(
            "call_1",
            "read_file",
            r#"{"path":"notes.md"}"#,
        )])),
        Reply::Turn(FakeTurn::text("You need milk.")),
        Reply::Turn(FakeTurn::text("Streaming: you need milk.")),
    ]);
    fx.env.write("notes.md", "buy milk\n");
    let alice = fx.token("alice");
    let (mut child, addr) = fx.serve();
    let script = r#"
import json, sys
from openai import OpenAI
client = OpenAI(base_url=sys.argv[1], api_key=sys.argv[2])
models = client.models.list()
done = client.chat.completions.create(model="agent", messages=[
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "What do I need?"}])
chunks = list(client.chat.completions.create(model="agent", stream=True, messages=[
    {"role": "user", "content": "What do I need?"},
    {"role": "assistant", "content": done.choices[0].message.content},
    {"role": "user", "content": "Again, streaming."}]))
text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
print(json.dumps({
    "models": [m.id for m in models.data],
    "answer": done.choices[0].message.content,
    "finish": done.choices[0].finish_reason,
    "id": done.id,
    "streamed": text,
    "last_finish": chunks[-1].choices[0].finish_reason,
}))
"#;
    let out = std::process::Command::new(peer_python())
        .args(["-c", script, &format!("http://{addr}/v1"), &alice])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(got["models"], json!(["fake-model"]));
    assert_eq!(got["answer"], "You need milk.");
    assert_eq!(got["finish"], "stop");
    assert!(
        got["streamed"]
            .as_str()
            .unwrap()
            .ends_with("Streaming: you need milk."),
        "{got}"
    );
    assert_eq!(got["last_finish"], "stop");
    // The non-streaming request is a conversation of alice's, readable afterwards.
    let id = got["id"].as_str().unwrap().trim_start_matches("chatcmpl-");
    let all = events(&addr, &alice, id);
    assert_eq!(
        kinds(&all),
        [
            "prelude",
            "user",
            "assistant",
            "results",
            "assistant",
            "answer"
        ]
    );
    // The model saw the client's instructions, labelled, before the question.
    let first = &fx.server.requests()[0].body["messages"];
    assert!(
        first
            .to_string()
            .contains("Instructions from the client application:\\nBe brief."),
        "{first}"
    );
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn doctor_checks_the_agents_model() {
    let fx = Fixture::new(vec![]);
    let conversations = |run: &super::harness::Run| {
        run.json()["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "conversations")
            .cloned()
            .unwrap()
    };
    let with_key = fx
        .env
        .command()
        .env(KEY_VAR, KEY)
        .args(["doctor", "--json"])
        .output()
        .unwrap();
    let ok = conversations(&super::harness::Run::from_output(with_key));
    assert_eq!(ok["status"], "ok", "{ok}");
    assert!(
        ok["detail"].as_str().unwrap().contains("fake-model"),
        "{ok}"
    );
    let without = fx.env.run(&["doctor", "--json"]);
    let failed = conversations(&without);
    assert_eq!(failed["status"], "fail", "{failed}");
    assert!(
        failed["detail"].as_str().unwrap().contains(KEY_VAR),
        "{failed}"
    );
}
