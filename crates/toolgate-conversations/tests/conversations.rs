//! The conversation core on a real gateway and store, with a scripted model: a message is
//! answered; a write waits for its card in the conversation, decided there by its user, runs
//! once; a dangerous tool needs its typed name; a stranger's decision and a request made
//! outside the conversation are refused and audited; a turn interrupted while waiting for an
//! approval (decided during the outage) or for the model continues after the restart with
//! one run of the tool and one answer; a runner that died is taken over after its lease;
//! messages queue, commands answer at once, `/stop` ends a turn.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolgate_audit::{AuditLog, Durability};
use toolgate_conversations::{
    ConversationDeps, ConversationError, ConversationRow, Conversations, ConversationsConfig,
    Entry, Event, ModelSetup, Posted, Speaker,
};
use toolgate_core::{Tool, ToolContext, ToolError};
use toolgate_gateway::approve::{Ask, Refusal};
use toolgate_gateway::policy::RoleConfig;
use toolgate_gateway::{Arguments, CallRequest, Gateway, GatewayConfig, GatewayDeps};
use toolgate_protocol::{Principal, Risk, ToolOutput, ToolSpec};
use toolgate_registry::Catalog;
use toolgate_store::approvals::DecisionScope;
use toolgate_store::redact::Redactor;
use toolgate_testkit::chat_model::{Say, ScriptedModel as Scripted};

/// How many times `note` and `wipe` acted in this test process.
static NOTES: AtomicU64 = AtomicU64::new(0);
static WIPES: AtomicU64 = AtomicU64::new(0);

struct TestTool(ToolSpec);

#[async_trait]
impl Tool for TestTool {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    async fn call(&self, args: Value, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        match self.0.name.as_str() {
            "note" => {
                let n = NOTES.fetch_add(1, Ordering::SeqCst) + 1;
                Ok(ToolOutput::json(json!({"noted": args["text"], "count": n})))
            }
            "wipe" => {
                WIPES.fetch_add(1, Ordering::SeqCst);
                Ok(ToolOutput::text("wiped"))
            }
            _ => Ok(ToolOutput::json(json!({"echo": args["text"]}))),
        }
    }
}

fn catalog() -> Arc<Catalog> {
    let text = json!({"type": "object", "properties": {"text": {"type": "string"}},
                      "additionalProperties": false});
    let catalog = Arc::new(Catalog::new());
    catalog
        .register_many(vec![
            Arc::new(TestTool(
                ToolSpec::new("echo", "Echo the text.", text.clone()).with_risk(Risk::Read),
            )) as Arc<dyn Tool>,
            Arc::new(TestTool(
                ToolSpec::new("note", "Write a note.", text.clone()).with_risk(Risk::Write),
            )),
            Arc::new(TestTool(
                ToolSpec::new("wipe", "Wipe everything.", text).with_risk(Risk::Dangerous),
            )),
        ])
        .unwrap();
    catalog
}

/// The shared data dir of a "cluster": the store every process opens (the embedded database
/// in it, or a PostgreSQL schema of the test's own).
struct Shared {
    dir: tempfile::TempDir,
    pg: Option<toolgate_testkit::pg::Scratch>,
}

/// One toolgate process over the shared store: its own gateway and audit log, its
/// conversations, and the signal that stops it.
struct Process {
    gateway: Arc<Gateway>,
    desk: Conversations,
    stop: CancellationToken,
    audit_path: std::path::PathBuf,
}

impl Shared {
    fn new() -> Shared {
        Shared {
            dir: tempfile::tempdir().unwrap(),
            pg: None,
        }
    }

    async fn postgres() -> Shared {
        Shared {
            dir: tempfile::tempdir().unwrap(),
            pg: Some(toolgate_testkit::pg::Scratch::new().await),
        }
    }

    /// A new connection to the shared store (another process, or replica).
    async fn store(&self) -> toolgate_store::Store {
        let p = self.dir.path();
        match &self.pg {
            None => {
                toolgate_store::Store::open_embedded(&p.join("toolgate.db"), &p.join("results"))
                    .unwrap()
            }
            Some(scratch) => {
                let url: toolgate_store::pg::PgUrl = scratch.url().parse().unwrap();
                let backend = toolgate_store::PgBackend::open(&url, CancellationToken::new())
                    .await
                    .unwrap();
                toolgate_store::Store::postgres(backend)
            }
        }
    }

    async fn process(
        &self,
        name: &str,
        model: Arc<Scripted>,
        config: ConversationsConfig,
    ) -> Process {
        let store = self.store().await;
        let own = self.dir.path().join(name);
        std::fs::create_dir_all(&own).unwrap();
        let audit_path = own.join("tool-audit.jsonl");
        let deps = GatewayDeps {
            catalog: catalog(),
            audit: Arc::new(
                AuditLog::open(&audit_path, &own.join("audit.db"), Durability::Durable).unwrap(),
            ),
            approvals: Arc::new(store.approvals()),
            results: Arc::new(store.results().unwrap()),
            idempotency: Arc::new(store.idempotency()),
            redactor: Arc::new(Redactor::default()),
            approver: None,
            quota_buckets: Arc::new(toolgate_store::quotas::MemoryBuckets::default()),
        };
        let cfg = GatewayConfig {
            roles: BTreeMap::from([
                ("default".to_owned(), RoleConfig::default()),
                // Sees `echo` only.
                (
                    "reader".to_owned(),
                    RoleConfig {
                        tools: vec!["echo".into()],
                        ..RoleConfig::default()
                    },
                ),
            ]),
            ..GatewayConfig::default()
        };
        let gateway = Arc::new(Gateway::new(deps, &cfg).unwrap());
        let desk = Conversations::new(ConversationDeps {
            store: store.conversations(),
            gateway: Arc::clone(&gateway),
            model: ModelSetup {
                client: model,
                system: None,
                max_steps: 6,
                max_tokens: None,
                parallel_tool_calls: None,
                selector: None,
            },
            config,
        });
        let stop = CancellationToken::new();
        desk.start(&stop);
        Process {
            gateway,
            desk,
            stop,
            audit_path,
        }
    }
}

impl Process {
    /// Stops the process where it stands (its turns journal nothing more).
    async fn kill(&self) {
        self.stop.cancel();
        tokio::time::sleep(Duration::from_millis(300)).await;
    }

    async fn audit(&self) -> Vec<Value> {
        self.gateway.audit().flush().await.unwrap();
        read_lines(&self.audit_path)
    }
}

fn read_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn fast() -> ConversationsConfig {
    ConversationsConfig {
        lease_secs: 3,
        sweep_secs: 1,
        ..ConversationsConfig::default()
    }
}

fn alice() -> Speaker {
    Speaker {
        entry: "web".into(),
        chat: "chat-1".into(),
        user_ref: "alice".into(),
        principal: "alice".into(),
        role: "default".into(),
    }
}

async fn entries(desk: &Conversations, id: &str) -> Vec<Entry> {
    desk.entries(id, 0, 100_000).await.unwrap()
}

/// Waits (up to 15 s) until the journal holds an entry `pick` finds.
async fn wait_for<T>(desk: &Conversations, id: &str, pick: impl Fn(&Event) -> Option<T>) -> T {
    for _ in 0..750 {
        if let Some(found) = entries(desk, id).await.iter().find_map(|e| pick(&e.event)) {
            return found;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!(
        "never journaled; the journal: {:#?}",
        entries(desk, id).await
    );
}

fn answer(e: &Event) -> Option<String> {
    match e {
        Event::Answer { text, .. } => Some(text.clone()),
        _ => None,
    }
}

fn card(e: &Event) -> Option<String> {
    match e {
        Event::Approval { approval_id, .. } => Some(approval_id.clone()),
        _ => None,
    }
}

fn kinds(entries: &[Entry]) -> Vec<&'static str> {
    entries.iter().map(|e| e.event.kind()).collect()
}

fn approve() -> Ask {
    Ask::approve(DecisionScope::Once)
}

async fn open(p: &Process) -> ConversationRow {
    p.desk.open(&alice()).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_is_answered_and_audited_both_ways() {
    let shared = Shared::new();
    let model = Scripted::new(&[Say::text("Hello, Alice.")]);
    let p = shared.process("p1", Arc::clone(&model), fast()).await;
    let row = open(&p).await;
    let posted = p
        .desk
        .post(&row, "alice", &"default".into(), "hi there")
        .await
        .unwrap();
    assert_eq!(posted, Posted::Queued { seq: 1, ahead: 0 });
    assert_eq!(wait_for(&p.desk, &row.id, answer).await, "Hello, Alice.");
    assert_eq!(
        kinds(&entries(&p.desk, &row.id).await),
        ["user", "assistant", "answer"]
    );
    let records = p.audit().await;
    let messages: Vec<(&str, &str)> = records
        .iter()
        .filter(|r| r["tool"] == "conversation.message")
        .map(|r| {
            (
                r["arguments"]["direction"].as_str().unwrap(),
                r["arguments"]["text"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(messages, [("in", "hi there"), ("out", "Hello, Alice.")]);
    assert!(records.iter().all(|r| r["session"] == row.id.as_str()));
    let row = p.desk.get(&row.id, &"alice".into(), false).await.unwrap();
    assert_eq!(row.title, "hi there");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_waits_for_its_card_and_runs_once_when_its_user_approves() {
    let shared = Shared::new();
    let model = Scripted::new(&[
        Say::call("call_1", "note", r#"{"text":"buy milk"}"#),
        Say::text("Noted."),
    ]);
    let p = shared.process("p1", Arc::clone(&model), fast()).await;
    let row = open(&p).await;
    p.desk
        .post(&row, "alice", &"default".into(), "note: buy milk")
        .await
        .unwrap();
    let approval = wait_for(&p.desk, &row.id, card).await;
    assert_eq!(NOTES.load(Ordering::SeqCst), 0, "not before the decision");
    let decided = p
        .desk
        .decide(&row, &approval, approve(), &"alice".into(), false)
        .await
        .unwrap();
    assert_eq!(decided.decided_by.as_deref(), Some("alice"));
    assert_eq!(decided.decided_via.as_deref(), Some("conversation:web"));
    // The record says what right the decider held: the conversation's user, not an operator.
    let records = p.audit().await;
    let decision = records
        .iter()
        .find(|r| r["source"] == "approvals:conversation:web" && r["outcome"] == "ok")
        .unwrap_or_else(|| panic!("no decision record: {records:#?}"));
    assert_eq!(decision["role"], "conversation user", "{decision}");
    assert_eq!(decision["principal"], "alice");
    assert_eq!(wait_for(&p.desk, &row.id, answer).await, "Noted.");
    assert_eq!(NOTES.load(Ordering::SeqCst), 1);
    assert_eq!(
        kinds(&entries(&p.desk, &row.id).await),
        [
            "user",
            "assistant",
            "approval",
            "results",
            "assistant",
            "answer"
        ]
    );
    // Decided once: a second decision is refused.
    let again = p
        .desk
        .decide(&row, &approval, approve(), &"alice".into(), false)
        .await
        .unwrap_err();
    assert!(matches!(again, Refusal::Conflict { .. }), "{again}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dangerous_tool_needs_its_typed_name() {
    let shared = Shared::new();
    let model = Scripted::new(&[Say::call("call_1", "wipe", "{}"), Say::text("Wiped.")]);
    let p = shared.process("p1", model, fast()).await;
    let row = open(&p).await;
    p.desk
        .post(&row, "alice", &"default".into(), "wipe it")
        .await
        .unwrap();
    let approval = wait_for(&p.desk, &row.id, |e| match e {
        Event::Approval {
            approval_id,
            requires_confirmation: true,
            ..
        } => Some(approval_id.clone()),
        _ => None,
    })
    .await;
    let tap = p
        .desk
        .decide(&row, &approval, approve(), &"alice".into(), false)
        .await
        .unwrap_err();
    assert!(tap.to_string().contains("wipe"), "{tap}");
    let typed = Ask {
        confirm: Some("wipe".into()),
        ..approve()
    };
    p.desk
        .decide(&row, &approval, typed, &"alice".into(), false)
        .await
        .unwrap();
    assert_eq!(wait_for(&p.desk, &row.id, answer).await, "Wiped.");
    assert_eq!(WIPES.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stranger_and_a_request_made_outside_the_conversation_are_refused() {
    let shared = Shared::new();
    let model = Scripted::new(&[
        Say::call("call_1", "note", r#"{"text":"x"}"#),
        Say::text("done"),
    ]);
    let p = shared.process("p1", model, fast()).await;
    let row = open(&p).await;
    p.desk
        .post(&row, "alice", &"default".into(), "note x")
        .await
        .unwrap();
    let approval = wait_for(&p.desk, &row.id, card).await;
    let stranger = p
        .desk
        .decide(&row, &approval, approve(), &"bob".into(), false)
        .await
        .unwrap_err();
    assert!(matches!(stranger, Refusal::Forbidden(_)), "{stranger}");
    // The attack: alice files a call of her own under the conversation's id as its session
    // (as `/v1/calls` allows) and approves it from inside the conversation.
    let mut forged = CallRequest::new("note", Arguments::Json(json!({"text": "forged"})))
        .with_principal(Principal::from("alice"))
        .with_session(row.id.clone());
    forged.wait_for_approval = Some(false);
    let envelope = p.gateway.call(forged).await;
    let forged_id = envelope.error.as_ref().unwrap().details.as_ref().unwrap()["approval_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let refused = p
        .desk
        .decide(&row, &forged_id, approve(), &"alice".into(), false)
        .await
        .unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("not made in this conversation"),
        "{refused}"
    );
    // Both refusals are on the record.
    let records = p.audit().await;
    let refusals = records
        .iter()
        .filter(|r| r["source"] == "approvals:conversation:web" && r["outcome"] == "forbidden")
        .count();
    assert_eq!(refusals, 2, "{records:#?}");
    // An operator still decides it anywhere, recorded as an operator.
    p.desk
        .decide(&row, &approval, approve(), &"root".into(), true)
        .await
        .unwrap();
    let records = p.audit().await;
    assert!(
        records
            .iter()
            .any(|r| r["principal"] == "root" && r["role"] == "operator" && r["outcome"] == "ok"),
        "{records:#?}"
    );
    assert_eq!(wait_for(&p.desk, &row.id, answer).await, "done");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operators_only_when_configured() {
    let shared = Shared::new();
    let model = Scripted::new(&[Say::call("call_1", "note", r#"{"text":"y"}"#)]);
    let config = ConversationsConfig {
        approvals: toolgate_conversations::ApprovalRight::Operators,
        ..fast()
    };
    let p = shared.process("p1", model, config).await;
    let row = open(&p).await;
    p.desk
        .post(&row, "alice", &"default".into(), "note y")
        .await
        .unwrap();
    let approval = wait_for(&p.desk, &row.id, card).await;
    let own = p
        .desk
        .decide(&row, &approval, approve(), &"alice".into(), false)
        .await
        .unwrap_err();
    assert!(own.to_string().contains("operators"), "{own}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_killed_while_waiting_for_approval_continues_after_the_restart() {
    let shared = Shared::new();
    let first = Scripted::new(&[Say::call("call_1", "note", r#"{"text":"restart"}"#)]);
    let p1 = shared.process("p1", Arc::clone(&first), fast()).await;
    let row = open(&p1).await;
    p1.desk
        .post(&row, "alice", &"default".into(), "note restart")
        .await
        .unwrap();
    let approval = wait_for(&p1.desk, &row.id, card).await;
    p1.kill().await;
    // Decided while toolgate is down (by an operator, from the CLI).
    let decisions = toolgate_gateway::approve::Decisions::new(
        Arc::new(shared.store().await.approvals()),
        Arc::clone(p1.gateway.audit()),
    );
    decisions
        .decide(
            &approval,
            approve(),
            &toolgate_gateway::approve::Decider::new(
                "root",
                true,
                toolgate_gateway::approve::Via::Cli,
            ),
        )
        .await
        .unwrap();
    let before = NOTES.load(Ordering::SeqCst);
    let second = Scripted::new(&[Say::text("Noted after the restart.")]);
    let p2 = shared.process("p2", Arc::clone(&second), fast()).await;
    assert_eq!(
        wait_for(&p2.desk, &row.id, answer).await,
        "Noted after the restart."
    );
    assert_eq!(
        NOTES.load(Ordering::SeqCst),
        before + 1,
        "the tool ran once"
    );
    assert_eq!(first.asked(), 1);
    assert_eq!(
        second.asked(),
        1,
        "the model was not asked for the call again"
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    let all = entries(&p2.desk, &row.id).await;
    assert_eq!(
        kinds(&all),
        [
            "user",
            "assistant",
            "approval",
            "results",
            "assistant",
            "answer"
        ],
        "one answer; the resumed call found the decision without a new card"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_killed_while_waiting_for_the_model_continues_after_the_restart() {
    let shared = Shared::new();
    let first = Scripted::new(&[Say::Hang]);
    let p1 = shared.process("p1", Arc::clone(&first), fast()).await;
    let row = open(&p1).await;
    p1.desk
        .post(&row, "alice", &"default".into(), "are you there?")
        .await
        .unwrap();
    while first.asked() == 0 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    p1.kill().await;
    let second = Scripted::new(&[Say::text("Yes.")]);
    let p2 = shared.process("p2", Arc::clone(&second), fast()).await;
    assert_eq!(wait_for(&p2.desk, &row.id, answer).await, "Yes.");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        kinds(&entries(&p2.desk, &row.id).await),
        ["user", "assistant", "answer"]
    );
    assert_eq!(second.asked(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runner_that_died_is_taken_over_after_its_lease() {
    let shared = Shared::new();
    let model = Scripted::new(&[Say::text("Taken over.")]);
    let p = shared.process("p1", Arc::clone(&model), fast()).await;
    let row = open(&p).await;
    // Another replica took the conversation and died without letting go.
    let store = shared.store().await.conversations();
    assert!(
        store
            .claim(&row.id, "run_dead", Duration::from_secs(3))
            .await
            .unwrap()
    );
    p.desk
        .post(&row, "alice", &"default".into(), "anyone?")
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(model.asked(), 0, "not while the dead runner's lease holds");
    assert_eq!(wait_for(&p.desk, &row.id, answer).await, "Taken over.");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn messages_queue_and_commands_answer_at_once() {
    let shared = Shared::new();
    let model = Scripted::new(&[Say::text("one"), Say::text("two")]);
    let p = shared.process("p1", Arc::clone(&model), fast()).await;
    let row = open(&p).await;
    p.desk
        .post(&row, "alice", &"default".into(), "first")
        .await
        .unwrap();
    p.desk
        .post(&row, "alice", &"default".into(), "second")
        .await
        .unwrap();
    wait_for(&p.desk, &row.id, |e| match e {
        Event::Answer { text, .. } if text == "two" => Some(()),
        _ => None,
    })
    .await;
    let answers: Vec<String> = entries(&p.desk, &row.id)
        .await
        .iter()
        .filter_map(|e| answer(&e.event))
        .collect();
    assert_eq!(answers, ["one", "two"]);
    assert_eq!(
        model.histories(),
        [1, 3],
        "the second turn sees the first: user, answer, user"
    );
    let Posted::Command { reply, .. } = p
        .desk
        .post(&row, "alice", &"default".into(), "/tools")
        .await
        .unwrap()
    else {
        panic!()
    };
    assert!(reply.contains("echo") && reply.contains("note"), "{reply}");
    let Posted::Command { reply, .. } = p
        .desk
        .post(&row, "alice", &"default".into(), "/stop")
        .await
        .unwrap()
    else {
        panic!()
    };
    assert_eq!(reply, "Nothing is running.");
    let Posted::Command { opened, .. } = p
        .desk
        .post(&row, "alice", &"default".into(), "/new")
        .await
        .unwrap()
    else {
        panic!()
    };
    let next = opened.unwrap();
    assert_ne!(next.id, row.id);
    assert_eq!(
        p.desk.open(&alice()).await.unwrap().id,
        next.id,
        "the chat moved on"
    );
    let closed = p
        .desk
        .post(&row, "alice", &"default".into(), "hello?")
        .await
        .unwrap_err();
    assert!(matches!(closed, ConversationError::Closed(_)), "{closed}");
    assert!(matches!(
        p.desk
            .post(&next, "alice", &"default".into(), "   ")
            .await
            .unwrap_err(),
        ConversationError::Empty
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_ends_a_turn_and_a_full_queue_is_refused() {
    let shared = Shared::new();
    let model = Scripted::new(&[Say::Hang, Say::text("after the stop")]);
    let config = ConversationsConfig {
        max_queued: 1,
        ..fast()
    };
    let p = shared.process("p1", Arc::clone(&model), config).await;
    let row = open(&p).await;
    p.desk
        .post(&row, "alice", &"default".into(), "slow one")
        .await
        .unwrap();
    while model.asked() == 0 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    p.desk
        .post(&row, "alice", &"default".into(), "queued")
        .await
        .unwrap();
    let full = p
        .desk
        .post(&row, "alice", &"default".into(), "one too many")
        .await
        .unwrap_err();
    assert!(
        matches!(full, ConversationError::Busy { queued: 2 }),
        "{full}"
    );
    let Posted::Command { reply, .. } = p
        .desk
        .post(&row, "alice", &"default".into(), "/stop")
        .await
        .unwrap()
    else {
        panic!()
    };
    assert_eq!(reply, "Stopping the current turn.");
    wait_for(&p.desk, &row.id, |e| match e {
        Event::Failed { message, .. } => Some(message.clone()),
        _ => None,
    })
    .await;
    assert_eq!(wait_for(&p.desk, &row.id, answer).await, "after the stop");
}

/// Two replicas on PostgreSQL, messages posted through both at once: each turn runs once, on
/// one of them; then the replica running a turn stops and the other continues it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_on_postgres_run_each_turn_once_and_hand_over() {
    let shared = Shared::postgres().await;
    let script: Vec<Say> = (0..8).map(|_| Say::text("answered")).collect();
    let (m1, m2) = (Scripted::new(&script), Scripted::new(&script));
    let p1 = shared.process("p1", Arc::clone(&m1), fast()).await;
    let p2 = shared.process("p2", Arc::clone(&m2), fast()).await;
    let row = open(&p1).await;
    let mut posts = Vec::new();
    for i in 0..6 {
        let desk = if i % 2 == 0 {
            p1.desk.clone()
        } else {
            p2.desk.clone()
        };
        let row = row.clone();
        posts.push(tokio::spawn(async move {
            desk.post(&row, "alice", &"default".into(), &format!("message {i}"))
                .await
                .unwrap()
        }));
    }
    for p in posts {
        p.await.unwrap();
    }
    for _ in 0..500 {
        let answered = entries(&p1.desk, &row.id)
            .await
            .iter()
            .filter(|e| matches!(e.event, Event::Answer { .. }))
            .count();
        if answered == 6 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let all = entries(&p1.desk, &row.id).await;
    let mut answered: Vec<u64> = all
        .iter()
        .filter_map(|e| match e.event {
            Event::Answer { reply_to, .. } => Some(reply_to),
            _ => None,
        })
        .collect();
    answered.sort_unstable();
    let users: Vec<u64> = all
        .iter()
        .filter(|e| matches!(e.event, Event::User { .. }))
        .map(|e| e.seq)
        .collect();
    assert_eq!(answered, users, "each message answered exactly once");
    assert_eq!(
        m1.asked() + m2.asked(),
        6,
        "the model asked once per turn in all"
    );

    // The replica running a turn stops; the other continues it.
    let slow = Scripted::new(&[Say::Hang]);
    let p3 = shared.process("p3", Arc::clone(&slow), fast()).await;
    let chat = Speaker {
        chat: "chat-2".into(),
        ..alice()
    };
    let second = p3.desk.open(&chat).await.unwrap();
    p3.desk
        .post(&second, "alice", &"default".into(), "who answers?")
        .await
        .unwrap();
    while slow.asked() == 0 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let before = m1.asked() + m2.asked();
    p3.kill().await;
    assert_eq!(wait_for(&p1.desk, &second.id, answer).await, "answered");
    assert_eq!(m1.asked() + m2.asked(), before + 1);
}

/// The attack: a conversation started with a strong role, continued by the same principal
/// holding a weaker one now (another token, a changed mapping). The turn must run with the
/// role the message was sent with, not the one the conversation was started with.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_runs_with_the_role_its_message_was_sent_with() {
    let shared = Shared::new();
    let model = Scripted::new(&[
        Say::call("call_1", "note", r#"{"text":"sneaky"}"#),
        Say::text("could not"),
    ]);
    let p = shared.process("p1", Arc::clone(&model), fast()).await;
    let row = open(&p).await;
    assert_eq!(row.role, "default");
    p.desk
        .post(&row, "alice", &"reader".into(), "note sneaky")
        .await
        .unwrap();
    assert_eq!(wait_for(&p.desk, &row.id, answer).await, "could not");
    let all = entries(&p.desk, &row.id).await;
    assert!(
        all.iter().all(|e| card(&e.event).is_none()),
        "no card: the role may not use note"
    );
    let results = all
        .iter()
        .find_map(|e| match &e.event {
            Event::Results { results, .. } => Some(results[0].content.clone()),
            _ => None,
        })
        .unwrap();
    assert!(results.contains("\"forbidden\""), "{results}");
    let Posted::Command { reply, .. } = p
        .desk
        .post(&row, "alice", &"reader".into(), "/tools")
        .await
        .unwrap()
    else {
        panic!()
    };
    assert!(reply.contains("echo") && !reply.contains("note"), "{reply}");
}

/// A journal longer than one read (2,000 entries; 10,100 here, past what a single read once took)
/// is read whole: the newest message is the one
/// answered, with the whole history before it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_journal_is_read_whole() {
    let shared = Shared::new();
    let model = Scripted::new(&[Say::text("still here")]);
    let p = shared.process("p1", Arc::clone(&model), fast()).await;
    let row = open(&p).await;
    let store = shared.store().await.conversations();
    let body = Event::Notice {
        text: "filler".into(),
    }
    .to_json();
    for _ in 0..10_100 {
        store
            .append(
                &row.id,
                toolgate_store::conversations::Append {
                    kind: "notice",
                    body: &body,
                    runner: None,
                    marks_pending: false,
                    title: None,
                },
            )
            .await
            .unwrap();
    }
    p.desk
        .post(&row, "alice", &"default".into(), "after the filler")
        .await
        .unwrap();
    assert_eq!(wait_for(&p.desk, &row.id, answer).await, "still here");
    assert_eq!(model.histories(), [1], "the model saw the message");
}

/// One principal cannot keep more than `max_busy_per_principal` conversations working at once
/// (each a model spending on the same token); an answer frees a place.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_principal_keeps_a_bounded_number_of_conversations_busy() {
    let shared = Shared::new();
    let model = Scripted::new(&[Say::Hang, Say::Hang]);
    let config = ConversationsConfig {
        max_busy_per_principal: 2,
        ..fast()
    };
    let p = shared.process("p1", Arc::clone(&model), config).await;
    let mut rows = Vec::new();
    for i in 0..3 {
        let chat = Speaker {
            chat: format!("busy-{i}"),
            ..alice()
        };
        rows.push(p.desk.open(&chat).await.unwrap());
    }
    let role = toolgate_protocol::Role::from("default");
    p.desk.post(&rows[0], "alice", &role, "one").await.unwrap();
    p.desk.post(&rows[1], "alice", &role, "two").await.unwrap();
    let third = p
        .desk
        .post(&rows[2], "alice", &role, "three")
        .await
        .unwrap_err();
    assert!(
        matches!(third, ConversationError::TooManyBusy { busy: 2, max: 2 }),
        "{third}"
    );
    // A message behind a busy conversation's turn is not a new busy conversation.
    p.desk.post(&rows[0], "alice", &role, "more").await.unwrap();
    // Someone else is not counted against alice.
    let bob = Speaker {
        chat: "bob-chat".into(),
        user_ref: "bob".into(),
        principal: "bob".into(),
        ..alice()
    };
    let theirs = p.desk.open(&bob).await.unwrap();
    assert!(p.desk.post(&theirs, "bob", &role, "hi").await.is_ok());
    // /stop ends one; a place frees up.
    p.desk
        .post(&rows[1], "alice", &role, "/stop")
        .await
        .unwrap();
    wait_for(&p.desk, &rows[1].id, |e| match e {
        Event::Failed { .. } => Some(()),
        _ => None,
    })
    .await;
    for _ in 0..250 {
        if p.desk
            .post(&rows[2], "alice", &role, "three again")
            .await
            .is_ok()
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("no place freed after /stop");
}
