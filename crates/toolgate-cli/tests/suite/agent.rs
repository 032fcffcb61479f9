//! `toolgate run` and `toolgate chat` end to end: the real binary against the scripted model
//! server (allowlisted in `[egress]`), the built-in file tools in a temp workspace.

use std::io::Write;
use std::process::Stdio;

use serde_json::Value;
use toolgate_agent::fake::{FakeServer, FakeTurn, Reply};

use super::harness::{Env, Run};

const KEY_VAR: &str = "TOOLGATE_TEST_MODEL_KEY";
const KEY: &str = "sk-test-model-key-0123456789";

struct Fixture {
    /// Runs the fake server while the test blocks on the binary.
    _rt: tokio::runtime::Runtime,
    server: FakeServer,
    env: Env,
}

impl Fixture {
    fn new(provider: &str, script: Vec<Reply>) -> Fixture {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let server = rt.block_on(FakeServer::start(script)).unwrap();
        let port = server.addr.port();
        let env = Env::with_config(&format!(
            "[model]\nprovider = \"{provider}\"\nmodel = \"fake-model\"\n\
             base_url = \"{}\"\napi_key_env = \"{KEY_VAR}\"\nretry_base_ms = 5\n\n\
             [egress]\nallow_hosts = [\"127.0.0.1:{port}\"]\nallow_http = [\"127.0.0.1:{port}\"]\n",
            server.base_url()
        ));
        env.write("notes.md", "# Notes\nbuy milk\n");
        env.write("todo.md", "- ship it\n");
        Fixture {
            _rt: rt,
            server,
            env,
        }
    }

    fn run(&self, args: &[&str]) -> Run {
        let out = self
            .env
            .command()
            .env(KEY_VAR, KEY)
            .args(args)
            .output()
            .unwrap();
        Run::from_output(out)
    }

    fn audit(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(self.env.audit_path()).unwrap_or_default();
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

fn read_both() -> Reply {
    Reply::Turn(FakeTurn::calls(&[
        ("call_1", "read_file", r#"{"path":"notes.md"}"#),
        ("call_2", "read_file", r#"{"path":"todo.md"}"#),
    ]))
}

#[test]
fn run_streams_the_answer_runs_the_calls_and_audits_them_under_one_session() {
    let fx = Fixture::new(
        "openai-chat",
        vec![
            read_both(),
            Reply::Turn(FakeTurn::calls(&[(
                "call_3",
                "write_file",
                r#"{"path":"out.md","content":"x"}"#,
            )])),
            Reply::Turn(FakeTurn::text("You need milk; writing needs approval.")),
        ],
    );
    let r = fx.run(&["run", "What do my notes say?", "--session", "task-1"]);
    r.assert_code(0);
    assert_eq!(
        r.stdout, "You need milk; writing needs approval.\n",
        "{r:#?}"
    );
    assert!(
        r.stderr.contains("→ read_file {\"path\":\"notes.md\"}"),
        "{r:#?}"
    );
    assert!(
        r.stderr.contains("✗ write_file: approval_required"),
        "{r:#?}"
    );
    assert!(
        r.stderr
            .contains("3 model calls · 30 input / 15 output tokens"),
        "{r:#?}"
    );

    // The model read both files' contents, under its own call ids, in order.
    let reqs = fx.server.requests();
    assert_eq!(reqs.len(), 3);
    let msgs = reqs[1].body["messages"].as_array().unwrap();
    let tool_msgs: Vec<(&str, bool)> = msgs
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            (
                m["tool_call_id"].as_str().unwrap(),
                m["content"].as_str().unwrap().contains("buy milk"),
            )
        })
        .collect();
    assert_eq!(tool_msgs, vec![("call_1", true), ("call_2", false)]);
    assert_eq!(
        reqs[0].headers.get("authorization").map(String::as_str),
        Some(format!("Bearer {KEY}").as_str())
    );

    // Every attempt audited with the conversation's session; the key is nowhere on disk.
    let audit = fx.audit();
    let outcomes: Vec<(&str, &str, &str)> = audit
        .iter()
        .filter(|r| r.get("outcome").is_some())
        .map(|r| {
            (
                r["tool"].as_str().unwrap(),
                r["outcome"].as_str().unwrap(),
                r["session"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        outcomes,
        vec![
            ("read_file", "ok", "task-1"),
            ("read_file", "ok", "task-1"),
            ("write_file", "approval_required", "task-1"),
        ]
    );
    assert!(!fx.env.ws.join("out.md").exists());
    let saved = std::fs::read_to_string(fx.env.data.join("sessions/task-1.json")).unwrap();
    assert!(!saved.contains(KEY));
    assert!(!r.stderr.contains(KEY) && !r.stdout.contains(KEY));
}

#[test]
fn a_resumed_session_sends_the_earlier_conversation() {
    let fx = Fixture::new(
        "anthropic",
        vec![
            read_both(),
            Reply::Turn(FakeTurn::text("Milk.")),
            Reply::Turn(FakeTurn::text("Still milk.")),
        ],
    );
    let r = fx.run(&["run", "Notes?", "--session", "s-9", "--no-stream"]);
    r.assert_code(0);
    assert_eq!(r.stdout, "Milk.\n");
    // The task from stdin.
    let mut child = fx
        .env
        .command()
        .env(KEY_VAR, KEY)
        .args(["run", "-", "--session", "s-9"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"And now?").unwrap();
    let r = Run::from_output(child.wait_with_output().unwrap());
    r.assert_code(0);
    assert_eq!(r.stdout, "Still milk.\n");
    let reqs = fx.server.requests();
    let roles: Vec<&str> = reqs[2].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    // user, assistant (tool_use), user (tool_result), assistant, user
    assert_eq!(
        reqs[2].body["messages"][4]["content"][0]["text"], "And now?",
        "{:#}",
        reqs[2].body
    );
    assert_eq!(
        roles,
        vec!["user", "assistant", "user", "assistant", "user"],
        "{:#}",
        reqs[2].body
    );
}

#[test]
fn unfinished_tasks_exit_non_zero_with_the_reason() {
    let fx = Fixture::new(
        "openai-responses",
        vec![
            Reply::Turn(FakeTurn::refusal("I won't.")),
            read_both(),
            Reply::Turn(FakeTurn::max_tokens("The notes sa")),
        ],
    );
    let r = fx.run(&["run", "Do something bad"]);
    r.assert_code(2);
    assert!(r.stderr.contains("refused"), "{r:#?}");

    let r = fx.run(&["run", "Read forever", "--max-steps", "1"]);
    r.assert_code(2);
    assert!(r.stderr.contains("step limit"), "{r:#?}");

    let r = fx.run(&["run", "Summarise"]);
    r.assert_code(2);
    assert!(r.stderr.contains("max_tokens"), "{r:#?}");
}

#[test]
fn missing_model_settings_and_keys_are_explained() {
    let env = Env::new();
    let r = env.run(&["run", "hi"]);
    r.assert_code(1);
    assert!(r.stderr.contains("set [model] model"), "{r:#?}");

    let fx = Fixture::new("openai-chat", vec![]);
    let r = Run::from_output(fx.env.command().args(["run", "hi"]).output().unwrap());
    r.assert_code(1);
    assert!(r.stderr.contains(KEY_VAR), "{r:#?}");
    assert!(fx.server.requests().is_empty());

    // A server answering 500 every time: retried, then a clear error.
    let five = || Reply::Status {
        status: 500,
        retry_after: None,
        message: "boom".into(),
    };
    let fx = Fixture::new("openai-chat", vec![five(), five(), five(), five()]);
    let r = fx.run(&["run", "hi"]);
    r.assert_code(1);
    assert!(
        r.stderr.contains("answered 500 4 times") && r.stderr.contains("boom"),
        "{r:#?}"
    );
}

#[test]
fn chat_keeps_the_conversation_and_resumes_it() {
    let fx = Fixture::new(
        "openai-chat",
        vec![
            Reply::Turn(FakeTurn::text("Hello!")),
            read_both(),
            Reply::Turn(FakeTurn::text("Milk.")),
            Reply::Turn(FakeTurn::text("Welcome back.")),
        ],
    );
    let chat = |input: &str| {
        let mut child = fx
            .env
            .command()
            .env(KEY_VAR, KEY)
            .args(["chat", "--session", "c1"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        Run::from_output(child.wait_with_output().unwrap())
    };
    let r = chat("hi\nwhat do my notes say?\n/exit\n");
    r.assert_code(0);
    assert_eq!(r.stdout, "Hello!\nMilk.\n", "{r:#?}");
    assert!(r.stderr.contains("→ read_file"), "{r:#?}");
    assert!(r.stderr.contains("toolgate chat --session c1"), "{r:#?}");

    let r = chat("back again\n");
    r.assert_code(0);
    assert!(r.stderr.contains("resumed: 6 earlier messages"), "{r:#?}");
    assert_eq!(r.stdout, "Welcome back.\n");
    let last = fx.server.requests().pop().unwrap();
    let n = last.body["messages"].as_array().unwrap().len();
    // user, assistant, user, assistant(tool_calls), tool, tool, assistant, user
    assert_eq!(n, 8, "{:#}", last.body);
}

#[test]
fn a_call_waiting_for_approval_is_shown_and_continues_once_approved_elsewhere() {
    let fx = Fixture::new(
        "openai-chat",
        vec![
            Reply::Turn(FakeTurn::calls(&[(
                "call_w",
                "write_file",
                r#"{"path":"out.md","content":"approved content"}"#,
            )])),
            Reply::Turn(FakeTurn::text("Written.")),
        ],
    );
    let config = fx.env.ws.join("toolgate.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("\n[approvals]\nwait = true\npoll_millis = 20\n");
    std::fs::write(&config, text).unwrap();

    let child = fx
        .env
        .command()
        .env(KEY_VAR, KEY)
        .args(["run", "Write out.md", "--session", "w1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The request appears in the store; an operator approves it from another process.
    let mut id = None;
    for _ in 0..1000 {
        let list = fx.env.run(&["approvals", "list", "--json"]).json();
        if let Some(first) = list.as_array().and_then(|a| a.first()) {
            id = first["id"].as_str().map(str::to_owned);
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let id = id.expect("no pending approval appeared");
    fx.env
        .run(&["approvals", "approve", &id, "--by", "alice"])
        .assert_code(0);
    let r = Run::from_output(child.wait_with_output().unwrap());
    r.assert_code(0);
    assert_eq!(r.stdout, "Written.\n");
    assert!(
        r.stderr.contains(&format!(
            "⏸ write_file waits for approval {id} (toolgate approvals approve {id})"
        )),
        "{r:#?}"
    );
    assert_eq!(
        std::fs::read_to_string(fx.env.ws.join("out.md")).unwrap(),
        "approved content"
    );
    let audit = fx.audit();
    let ok = audit
        .iter()
        .find(|r| r["tool"] == "write_file" && r["outcome"] == "ok")
        .expect("an ok record for write_file");
    assert_eq!(ok["session"], "w1");
    assert_eq!(ok["approver"], "alice", "{ok}");
}

#[test]
fn chat_asks_for_approval_inline_and_takes_the_answer_from_the_conversation() {
    let write = |id: &str, content: &str| {
        Reply::Turn(FakeTurn::calls(&[(
            id,
            "write_file",
            &format!(r#"{{"path":"out.md","content":"{content}"}}"#),
        )]))
    };
    let fx = Fixture::new(
        "anthropic",
        vec![
            write("toolu_1", "first"),
            Reply::Turn(FakeTurn::text("Written.")),
            write("toolu_2", "second"),
            Reply::Turn(FakeTurn::text("You said no.")),
        ],
    );
    let mut child = fx
        .env
        .command()
        .env(KEY_VAR, KEY)
        .env("USER", "carol")
        .args(["chat", "--session", "c2"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"write first\no\nwrite second\nd\n/exit\n")
        .unwrap();
    let r = Run::from_output(child.wait_with_output().unwrap());
    r.assert_code(0);
    assert_eq!(r.stdout, "Written.\nYou said no.\n", "{r:#?}");
    assert!(
        r.stderr
            .contains("approval needed: write_file (write risk)"),
        "{r:#?}"
    );
    assert!(r.stderr.contains("✗ write_file: approval_denied"), "{r:#?}");
    assert_eq!(
        std::fs::read_to_string(fx.env.ws.join("out.md")).unwrap(),
        "first"
    );
    let audit = fx.audit();
    let decided: Vec<&Value> = audit
        .iter()
        .filter(|r| r["tool"] == "write_file" && r["kind"] != "attempt")
        .filter(|r| r["source"] != "approvals:terminal")
        .collect();
    // Each answer given in the conversation is a decision record of its own.
    let answers: Vec<&Value> = audit
        .iter()
        .filter(|r| r["source"] == "approvals:terminal")
        .collect();
    assert_eq!(answers.len(), 2, "{audit:#?}");
    assert_eq!(answers[0]["approver"], "carol");
    let outcomes: Vec<&str> = decided
        .iter()
        .map(|r| r["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(outcomes, vec!["ok", "approval_denied"], "{audit:#?}");
    assert_eq!(decided[0]["approver"], "carol");
}

#[test]
fn ctrl_c_cancels_the_running_calls_and_exits_130_with_the_history_kept() {
    let fx = Fixture::new(
        "openai-chat",
        vec![Reply::Turn(FakeTurn::calls(&[
            (
                "call_s",
                "shell",
                r#"{"command": "touch started && exec sleep 30"}"#,
            ),
            ("call_r", "read_file", r#"{"path":"notes.md"}"#),
        ]))],
    );
    let config = fx.env.ws.join("toolgate.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("\n[roles.ops]\nrules = [{tool = \"shell\", decision = \"allow\"}]\n");
    std::fs::write(&config, text).unwrap();
    let child = fx
        .env
        .command()
        .env(KEY_VAR, KEY)
        .args(["--role", "ops", "run", "Sleep on it", "--session", "z1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = fx.env.ws.join("started");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !started.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the shell call never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    let r = Run::from_output(child.wait_with_output().unwrap());
    r.assert_code(130);
    assert!(r.stderr.contains("cancelled"), "{r:#?}");
    let audit = fx.audit();
    let shell: Vec<&str> = audit
        .iter()
        .filter(|r| r["tool"] == "shell" && r["kind"] != "attempt")
        .map(|r| r["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(shell, vec!["cancelled"], "{audit:#?}");
    // The conversation is saved well-formed: both calls have results.
    let saved: Value = serde_json::from_str(
        &std::fs::read_to_string(fx.env.data.join("sessions/z1.json")).unwrap(),
    )
    .unwrap();
    let last = saved["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["role"], "tool_results", "{saved:#}");
    assert_eq!(last["results"].as_array().unwrap().len(), 2);
}
