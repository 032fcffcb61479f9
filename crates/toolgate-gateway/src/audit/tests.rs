//! The two audit layers against a probe standing for the rest of the pipeline, on a real
//! durable log read back line by line (the index is fed asynchronously; the file is the
//! source of truth and holds every acknowledged record).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use serde_json::{Value, json};
use toolgate_audit::{AuditLog, Durability};
use toolgate_protocol::{CallError, ErrorCode, Risk, ToolOutput};

use super::{AuditLayer, IntentLayer};
use crate::call::{Call, Outcome};
use crate::layer::{Layer, Next};
use crate::testing::{call_for, echo_tool, run_layer_on};

fn open_log(dir: &Path) -> (Arc<AuditLog>, PathBuf) {
    let jsonl = dir.join("audit.jsonl");
    let log = AuditLog::open(&jsonl, &dir.join("index.db"), Durability::Durable).unwrap();
    (Arc::new(log), jsonl)
}

fn lines(jsonl: &Path) -> Vec<Value> {
    std::fs::read_to_string(jsonl)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// An inner layer that refuses every call, as a policy layer would.
struct Refuses;

#[async_trait]
impl Layer for Refuses {
    fn name(&self) -> &'static str {
        "refuses"
    }
    async fn handle(&self, _call: &mut Call, _next: Next<'_>) -> Outcome {
        Err(CallError::new(ErrorCode::PolicyDenied, "not here"))
    }
}

/// An inner layer that counts the log's lines when the call reaches it: what was on disk
/// before the tool would have run.
struct CountsLines {
    jsonl: PathBuf,
    seen: AtomicUsize,
}

#[async_trait]
impl Layer for CountsLines {
    fn name(&self) -> &'static str {
        "counts_lines"
    }
    async fn handle(&self, _call: &mut Call, _next: Next<'_>) -> Outcome {
        self.seen.store(lines(&self.jsonl).len(), Ordering::SeqCst);
        Ok(ToolOutput::json(json!({"done": true})))
    }
}

#[tokio::test]
async fn the_outcome_of_a_success_is_recorded_with_its_arguments_and_data() {
    let dir = tempfile::tempdir().unwrap();
    let (log, jsonl) = open_log(dir.path());
    let mut call = call_for(echo_tool("echo", Risk::Read), json!({"x": 1}));
    let out = run_layer_on(&AuditLayer::new(log), &mut call)
        .await
        .unwrap();
    assert_eq!(out.data, json!({"reached": "echo"}));
    let recs = lines(&jsonl);
    assert_eq!(recs.len(), 1);
    let rec = &recs[0];
    assert_eq!(
        (&rec["kind"], &rec["outcome"], &rec["tool"]),
        (&json!("outcome"), &json!("ok"), &json!("echo"))
    );
    assert_eq!(rec["arguments"], json!({"x": 1}));
    assert_eq!(rec["result"]["data"], json!({"reached": "echo"}));
    assert_eq!(rec["call_id"], json!(call.request.call_id));
    assert!(rec["duration_us"].is_u64());
}

#[tokio::test]
async fn a_refusal_is_recorded_with_its_code_and_message() {
    let dir = tempfile::tempdir().unwrap();
    let (log, jsonl) = open_log(dir.path());
    let mut call = call_for(echo_tool("echo", Risk::Read), json!({}));
    let inner: [Arc<dyn Layer>; 1] = [Arc::new(Refuses)];
    let err = AuditLayer::new(log)
        .handle(&mut call, Next::new(&inner))
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::PolicyDenied);
    let recs = lines(&jsonl);
    assert_eq!(recs.len(), 1);
    assert_eq!(
        (&recs[0]["outcome"], &recs[0]["error"]),
        (&json!("policy_denied"), &json!("not here"))
    );
}

#[tokio::test]
async fn a_secret_in_the_arguments_never_reaches_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let (log, jsonl) = open_log(dir.path());
    let token = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB";
    let mut call = call_for(echo_tool("echo", Risk::Read), json!({"note": token}));
    run_layer_on(&AuditLayer::new(log), &mut call)
        .await
        .unwrap();
    let text = std::fs::read_to_string(&jsonl).unwrap();
    assert!(!text.contains(token), "{text}");
}

#[tokio::test]
async fn a_write_tools_attempt_is_on_disk_before_the_inner_layers_run() {
    let dir = tempfile::tempdir().unwrap();
    let (log, jsonl) = open_log(dir.path());
    let probe = Arc::new(CountsLines {
        jsonl: jsonl.clone(),
        seen: AtomicUsize::new(usize::MAX),
    });
    let inner: [Arc<dyn Layer>; 1] = [Arc::clone(&probe) as Arc<dyn Layer>];
    let mut call = call_for(echo_tool("write_it", Risk::Write), json!({"path": "a"}));
    IntentLayer::new(log)
        .handle(&mut call, Next::new(&inner))
        .await
        .unwrap();
    assert_eq!(probe.seen.load(Ordering::SeqCst), 1);
    let recs = lines(&jsonl);
    assert_eq!(
        (&recs[0]["kind"], &recs[0]["outcome"], &recs[0]["arguments"]),
        (&json!("attempt"), &json!("started"), &json!({"path": "a"}))
    );
}

#[tokio::test]
async fn a_read_tool_runs_without_an_attempt_record() {
    let dir = tempfile::tempdir().unwrap();
    let (log, jsonl) = open_log(dir.path());
    let mut call = call_for(echo_tool("read_it", Risk::Read), json!({}));
    run_layer_on(&IntentLayer::new(log), &mut call)
        .await
        .unwrap();
    assert!(lines(&jsonl).is_empty());
}

/// The calling client: answers every question with `answer`.
struct Client {
    answer: Value,
}

#[async_trait]
impl toolgate_core::CallerChannel for Client {
    fn answers(&self, _request: toolgate_core::CallerRequest) -> bool {
        true
    }
    async fn log(&self, _params: Value) {}
    async fn ask(
        &self,
        _question: toolgate_core::CallerQuestion,
    ) -> Result<Value, toolgate_core::CallerError> {
        Ok(self.answer.clone())
    }
}

/// An inner layer standing for a federated tool that asks its client once (sampling) with
/// `params`, through the caller the layers above handed it.
struct AsksOnce {
    params: Value,
}

#[async_trait]
impl Layer for AsksOnce {
    fn name(&self) -> &'static str {
        "asks_once"
    }
    async fn handle(&self, call: &mut Call, _next: Next<'_>) -> Outcome {
        let request = toolgate_core::CallerRequest::Sampling;
        let channel = call.request.caller.answering(request).expect("a client");
        let question = toolgate_core::CallerQuestion::new(request, self.params.clone())
            .named("capital_question");
        let answer = channel.ask(question).await.expect("an answer");
        Ok(ToolOutput::json(answer))
    }
}

#[tokio::test]
async fn each_question_to_the_client_is_a_redacted_record_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let (log, jsonl) = open_log(dir.path());
    let token = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB";
    let inner: [Arc<dyn Layer>; 1] = [Arc::new(AsksOnce {
        params: json!({"messages": [{"role": "user", "content": {"type": "text", "text": token}}]}),
    })];
    let mut call = call_for(echo_tool("mcp__s__ask", Risk::Read), json!({}));
    call.request.caller = toolgate_core::CallerLink::new(Arc::new(Client {
        answer: json!({"role": "assistant", "content": {"type": "text", "text": "Paris"}}),
    }));
    IntentLayer::new(log)
        .handle(&mut call, Next::new(&inner))
        .await
        .unwrap();
    let recs = lines(&jsonl);
    assert_eq!(recs.len(), 1, "{recs:?}");
    let rec = &recs[0];
    assert_eq!(
        (&rec["tool"], &rec["outcome"], &rec["arguments"]["asked_by"]),
        (
            &json!("sampling/createMessage"),
            &json!("ok"),
            &json!("mcp__s__ask")
        )
    );
    assert_eq!(rec["arguments"]["key"], json!("capital_question"));
    assert_eq!(
        rec["call_id"],
        json!(format!("{}.ask1", call.request.call_id))
    );
    assert_eq!(rec["result"]["content"]["text"], json!("Paris"));
    let text = std::fs::read_to_string(&jsonl).unwrap();
    assert!(!text.contains(token), "{text}");
}

/// The answer of the inner pipeline: a tool that ran.
struct Ran;

#[async_trait]
impl Layer for Ran {
    fn name(&self) -> &'static str {
        "ran"
    }
    async fn handle(&self, _call: &mut Call, _next: Next<'_>) -> Outcome {
        Ok(ToolOutput::json(json!({"secret_plan": "data"})))
    }
}

/// The cluster's audit log, its records table gone: every append fails. A read's data is
/// not released without its record; a write that already acted still answers (a retry
/// would act twice) and says so in the log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_whose_record_cannot_be_written_is_withheld() {
    let scratch = toolgate_testkit::pg::Scratch::new().await;
    let url: toolgate_store::pg::PgUrl = scratch.url().parse().unwrap();
    let backend = toolgate_store::PgBackend::open(&url, tokio_util::sync::CancellationToken::new())
        .await
        .unwrap();
    let log = AuditLog::open_postgres(backend.pool.clone(), Durability::Durable, None)
        .await
        .unwrap();
    let (client, conn) = tokio_postgres::connect(scratch.url(), tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    client
        .batch_execute("DROP TABLE audit_records")
        .await
        .unwrap();
    let layer = AuditLayer::new(Arc::new(log));
    let inner: [Arc<dyn Layer>; 1] = [Arc::new(Ran)];

    let mut read = call_for(echo_tool("read_it", Risk::Read), json!({}));
    let e = layer
        .handle(&mut read, Next::new(&inner))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::Unavailable, "{e:?}");
    assert!(e.message.contains("withheld"), "{e:?}");
    assert!(!e.message.contains("secret_plan"));

    let mut write = call_for(echo_tool("write_it", Risk::Write), json!({}));
    assert!(layer.handle(&mut write, Next::new(&inner)).await.is_ok());
}
