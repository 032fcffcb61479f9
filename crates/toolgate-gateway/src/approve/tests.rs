//! The approval layer against a real store (temp SQLite) with an injected clock.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolgate_protocol::{ErrorCode, Risk};
use toolgate_store::approvals::{
    ApprovalRequest, ApprovalStatus, ApprovalStore, Decision as StoreDecision, DecisionScope,
};
use toolgate_store::redact::Redactor;

use super::{ApprovalDesk, ApproveLayer, Approver, ApproverAnswer, WaitMode};
use crate::call::Call;
use crate::policy::Decision;
use crate::testing::{call_for, echo_tool, run_layer_on};

struct Fixture {
    _dir: tempfile::TempDir,
    store: Arc<ApprovalStore>,
    audit: Arc<toolgate_audit::AuditLog>,
    now: Arc<AtomicU64>,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let now = Arc::new(AtomicU64::new(1_000_000));
    let clock_now = Arc::clone(&now);
    let store = ApprovalStore::open(&dir.path().join("t.db"))
        .unwrap()
        .with_clock(Arc::new(move || clock_now.load(Ordering::SeqCst)));
    let audit = toolgate_audit::AuditLog::open(
        &dir.path().join("logs/tool-audit.jsonl"),
        &dir.path().join("t.db"),
        toolgate_audit::Durability::Durable,
    )
    .unwrap();
    Fixture {
        _dir: dir,
        store: Arc::new(store),
        audit: Arc::new(audit),
        now,
    }
}

fn layer(f: &Fixture, mode: WaitMode) -> ApproveLayer {
    ApproveLayer::new(
        Arc::new(ApprovalDesk::new(
            Arc::clone(&f.store),
            Arc::new(Redactor::default()),
            Duration::from_secs(600),
        )),
        Arc::new(super::Decisions::new(
            Arc::clone(&f.store),
            Arc::clone(&f.audit),
        )),
        mode,
    )
}

fn asking(tool: &str, risk: Risk, args: serde_json::Value, session: &str) -> Call {
    let mut call = call_for(echo_tool(tool, risk), args);
    call.decision = Some(Decision::Ask {
        confirm: risk == Risk::Dangerous,
    });
    call.request.session_id = session.into();
    call
}

/// An approval by `by` with `scope`, no pattern or reason.
fn approval_by(by: &str, scope: DecisionScope) -> StoreDecision {
    StoreDecision {
        approve: true,
        scope,
        pattern: None,
        decided_by: by.into(),
        reason: None,
        confirm: None,
        via: None,
    }
}

async fn approve(
    f: &Fixture,
    id: &str,
    scope: DecisionScope,
    confirm: Option<&str>,
) -> ApprovalRequest {
    let d = StoreDecision {
        confirm: confirm.map(str::to_owned),
        ..approval_by("alice", scope)
    };
    f.store.decide(id, d).await.unwrap()
}

fn approval_id(err: &toolgate_protocol::CallError) -> String {
    err.details.as_ref().unwrap()["approval_id"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn allow_passes_without_a_request() {
    let f = fixture();
    let mut call = call_for(echo_tool("r", Risk::Read), json!({}));
    call.decision = Some(Decision::Allow);
    run_layer_on(&layer(&f, WaitMode::Return), &mut call)
        .await
        .unwrap();
    assert!(f.store.list(None, 10).await.unwrap().is_empty());
}

#[tokio::test]
async fn identical_call_proceeds_once_after_approval() {
    let f = fixture();
    let l = layer(&f, WaitMode::Return);
    let args = json!({"path": "a.txt", "api_key": "sk-proj-abcdefghijklmnopqrstuvwx"});
    let err = run_layer_on(&l, &mut asking("w", Risk::Write, args.clone(), "s"))
        .await
        .unwrap_err();
    assert_eq!(
        (err.code, err.retryable),
        (ErrorCode::ApprovalRequired, true)
    );
    let id = approval_id(&err);
    // Asking again does not pile up requests.
    let again = run_layer_on(&l, &mut asking("w", Risk::Write, args.clone(), "s"))
        .await
        .unwrap_err();
    assert_eq!(approval_id(&again), id);
    assert_eq!(f.store.list(None, 10).await.unwrap().len(), 1);
    // The stored preview is redacted.
    assert_eq!(
        f.store.get(&id).await.unwrap().unwrap().arguments["api_key"],
        "[REDACTED]"
    );

    approve(&f, &id, DecisionScope::Once, None).await;
    let mut call = asking("w", Risk::Write, args.clone(), "s");
    run_layer_on(&l, &mut call).await.unwrap();
    let info = call.approval.unwrap();
    assert_eq!(
        (info.approval_id.as_str(), info.approver.as_str()),
        (id.as_str(), "alice")
    );

    // Once means once: the next identical call asks afresh.
    let third = run_layer_on(&l, &mut asking("w", Risk::Write, args, "s"))
        .await
        .unwrap_err();
    assert_eq!(third.code, ErrorCode::ApprovalRequired);
    assert_ne!(approval_id(&third), id);
}

#[tokio::test]
async fn different_arguments_are_a_different_call() {
    let f = fixture();
    let l = layer(&f, WaitMode::Return);
    let e1 = run_layer_on(&l, &mut asking("w", Risk::Write, json!({"p": 1}), "s"))
        .await
        .unwrap_err();
    approve(&f, &approval_id(&e1), DecisionScope::Once, None).await;
    let e2 = run_layer_on(&l, &mut asking("w", Risk::Write, json!({"p": 2}), "s"))
        .await
        .unwrap_err();
    assert_eq!(e2.code, ErrorCode::ApprovalRequired);
}

#[tokio::test]
async fn denied_is_reported_once_then_asked_again() {
    let f = fixture();
    let l = layer(&f, WaitMode::Return);
    let e = run_layer_on(&l, &mut asking("w", Risk::Write, json!({}), "s"))
        .await
        .unwrap_err();
    let id = approval_id(&e);
    let d = StoreDecision {
        approve: false,
        scope: DecisionScope::Once,
        pattern: None,
        decided_by: "bob".into(),
        reason: Some("not today".into()),
        confirm: None,
        via: None,
    };
    f.store.decide(&id, d).await.unwrap();
    let denied = run_layer_on(&l, &mut asking("w", Risk::Write, json!({}), "s"))
        .await
        .unwrap_err();
    assert_eq!(
        (denied.code, denied.retryable),
        (ErrorCode::ApprovalDenied, false)
    );
    assert_eq!(denied.message, format!("{id} was denied by bob: not today"));
    let next = run_layer_on(&l, &mut asking("w", Risk::Write, json!({}), "s"))
        .await
        .unwrap_err();
    assert_eq!(next.code, ErrorCode::ApprovalRequired);
    assert_ne!(approval_id(&next), id);
}

#[tokio::test]
async fn expired_is_reported_once_then_asked_again() {
    let f = fixture();
    let l = layer(&f, WaitMode::Return);
    let e = run_layer_on(&l, &mut asking("w", Risk::Write, json!({}), "s"))
        .await
        .unwrap_err();
    let id = approval_id(&e);
    f.now.fetch_add(601_000, Ordering::SeqCst);
    let expired = run_layer_on(&l, &mut asking("w", Risk::Write, json!({}), "s"))
        .await
        .unwrap_err();
    assert_eq!(
        (expired.code, expired.retryable),
        (ErrorCode::ApprovalExpired, true)
    );
    assert_eq!(
        f.store.get(&id).await.unwrap().unwrap().status,
        ApprovalStatus::Expired
    );
    let next = run_layer_on(&l, &mut asking("w", Risk::Write, json!({}), "s"))
        .await
        .unwrap_err();
    assert_eq!(next.code, ErrorCode::ApprovalRequired);
}

#[tokio::test]
async fn session_grant_covers_the_session_only() {
    let f = fixture();
    let l = layer(&f, WaitMode::Return);
    let e = run_layer_on(&l, &mut asking("w", Risk::Write, json!({"n": 0}), "s1"))
        .await
        .unwrap_err();
    approve(&f, &approval_id(&e), DecisionScope::Session, None).await;
    for n in 1..4 {
        let mut call = asking("w", Risk::Write, json!({"n": n}), "s1");
        run_layer_on(&l, &mut call).await.unwrap();
        assert_eq!(call.approval.unwrap().approver, "alice");
    }
    let other = run_layer_on(&l, &mut asking("w", Risk::Write, json!({"n": 9}), "s2"))
        .await
        .unwrap_err();
    assert_eq!(other.code, ErrorCode::ApprovalRequired);
}

#[tokio::test]
async fn dangerous_needs_the_typed_confirmation() {
    let f = fixture();
    let l = layer(&f, WaitMode::Return);
    let e = run_layer_on(&l, &mut asking("shell", Risk::Dangerous, json!({}), "s"))
        .await
        .unwrap_err();
    assert_eq!(e.details.as_ref().unwrap()["requires_confirmation"], true);
    assert!(e.hint.as_deref().unwrap().contains("--confirm shell"));
    let id = approval_id(&e);
    let d = StoreDecision {
        approve: true,
        scope: DecisionScope::Once,
        pattern: None,
        decided_by: "alice".into(),
        reason: None,
        confirm: Some("shel".into()),
        via: None,
    };
    assert!(f.store.decide(&id, d).await.is_err());
    approve(&f, &id, DecisionScope::Once, Some("shell")).await;
    run_layer_on(&l, &mut asking("shell", Risk::Dangerous, json!({}), "s"))
        .await
        .unwrap();
}

/// A channel that answers from a script and records what it was asked.
struct Scripted {
    answer: Option<ApproverAnswer>,
    asked: Mutex<Vec<String>>,
}

#[async_trait]
impl Approver for Scripted {
    async fn ask(&self, request: &ApprovalRequest) -> Option<ApproverAnswer> {
        self.asked.lock().unwrap().push(request.id.clone());
        self.answer.clone()
    }
}

fn answer(approve: bool, confirm: Option<&str>) -> ApproverAnswer {
    ApproverAnswer {
        approve,
        scope: DecisionScope::Once,
        confirm: confirm.map(str::to_owned),
        approver: "tty:carol".into(),
        reason: None,
    }
}

#[tokio::test]
async fn a_live_channel_decides_while_the_call_waits() {
    let f = fixture();
    let yes = Arc::new(Scripted {
        answer: Some(answer(true, Some("shell"))),
        asked: Mutex::default(),
    });
    let l = layer(&f, WaitMode::Return).with_approver(yes.clone());
    let mut call = asking("shell", Risk::Dangerous, json!({"c": 1}), "s");
    run_layer_on(&l, &mut call).await.unwrap();
    assert_eq!(call.approval.unwrap().approver, "tty:carol");
    assert_eq!(yes.asked.lock().unwrap().len(), 1);

    let no = Arc::new(Scripted {
        answer: Some(answer(false, None)),
        asked: Mutex::default(),
    });
    let l = layer(&f, WaitMode::Return).with_approver(no);
    let err = run_layer_on(
        &l,
        &mut asking("shell", Risk::Dangerous, json!({"c": 2}), "s"),
    )
    .await
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::ApprovalDenied);

    // A wrong confirmation is not an approval.
    let sloppy = Arc::new(Scripted {
        answer: Some(answer(true, Some("sh"))),
        asked: Mutex::default(),
    });
    let l = layer(&f, WaitMode::Return).with_approver(sloppy);
    let err = run_layer_on(
        &l,
        &mut asking("shell", Risk::Dangerous, json!({"c": 3}), "s"),
    )
    .await
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::ApprovalDenied);
    assert!(
        err.message.contains("type its name `shell`"),
        "{}",
        err.message
    );
}

#[tokio::test]
async fn wait_mode_resumes_when_decided_elsewhere_and_stops_on_cancel() {
    let f = fixture();
    let l = layer(
        &f,
        WaitMode::Wait {
            poll: Duration::from_millis(5),
        },
    );
    let store = Arc::clone(&f.store);
    let decider = tokio::spawn(async move {
        loop {
            if let Some(r) = store
                .list(Some(ApprovalStatus::Pending), 1)
                .await
                .unwrap()
                .pop()
            {
                store
                    .decide(&r.id, approval_by("http:dave", DecisionScope::Once))
                    .await
                    .unwrap();
                return;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    });
    let mut call = asking("w", Risk::Write, json!({}), "s");
    run_layer_on(&l, &mut call).await.unwrap();
    decider.await.unwrap();
    assert_eq!(call.approval.unwrap().approver, "http:dave");

    let mut call = asking("w", Risk::Write, json!({"other": 1}), "s");
    let cancel = call.request.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(30)).await;
        cancel.cancel();
    });
    let err = run_layer_on(&l, &mut call).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::Cancelled);
}

#[tokio::test]
async fn a_request_can_ask_to_wait_and_hears_that_it_is_waiting() {
    let f = fixture();
    let l = layer(&f, WaitMode::Return);
    let mut call = asking("w", Risk::Write, json!({"wait": 1}), "s");
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    call.request.wait_for_approval = Some(true);
    call.request.events = Some(tx);
    let store = Arc::clone(&f.store);
    let decider = tokio::spawn(async move {
        let Some(crate::call::CallEvent::AwaitingApproval {
            approval_id, tool, ..
        }) = rx.recv().await
        else {
            panic!("the first event is not the approval wait");
        };
        assert_eq!(tool, "w");
        approve_in(&store, &approval_id).await;
    });
    run_layer_on(&l, &mut call).await.unwrap();
    decider.await.unwrap();

    // And a caller of a waiting gateway may ask not to wait.
    let l = layer(
        &f,
        WaitMode::Wait {
            poll: Duration::from_millis(5),
        },
    );
    let mut call = asking("w", Risk::Write, json!({"wait": 2}), "s");
    call.request.wait_for_approval = Some(false);
    let err = run_layer_on(&l, &mut call).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::ApprovalRequired);
}

async fn approve_in(store: &ApprovalStore, id: &str) {
    store
        .decide(id, approval_by("mcp-host", DecisionScope::Once))
        .await
        .unwrap();
}

fn waiting_layer(f: &Fixture) -> ApproveLayer {
    layer(
        f,
        WaitMode::Wait {
            poll: Duration::from_millis(5),
        },
    )
}

/// Runs `call` until it waits on a pending request, then gives up the way `give_up` says;
/// returns the request as the store then holds it.
async fn give_up_waiting(
    f: &Fixture,
    mut call: Call,
    give_up: impl FnOnce(tokio::task::JoinHandle<crate::call::Outcome>, CancellationToken),
) -> ApprovalRequest {
    let cancel = call.request.cancel.clone();
    let l = waiting_layer(f);
    let task = tokio::spawn(async move { run_layer_on(&l, &mut call).await });
    let pending = loop {
        if let Some(r) = f
            .store
            .list(Some(ApprovalStatus::Pending), 1)
            .await
            .unwrap()
            .pop()
        {
            break r;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    give_up(task, cancel);
    for _ in 0..200 {
        let now = f.store.get(&pending.id).await.unwrap().unwrap();
        if now.status != ApprovalStatus::Pending {
            return now;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    f.store.get(&pending.id).await.unwrap().unwrap()
}

#[tokio::test]
async fn a_cancelled_wait_abandons_the_request_and_nobody_can_approve_it() {
    let f = fixture();
    let call = asking("w", Risk::Write, json!({"n": 1}), "s");
    let (tx, rx) = tokio::sync::oneshot::channel();
    let abandoned = give_up_waiting(&f, call, |task, cancel| {
        cancel.cancel();
        tokio::spawn(async move { tx.send(task.await.unwrap()).ok() });
    })
    .await;
    assert_eq!(abandoned.status, ApprovalStatus::Abandoned);
    assert!(abandoned.consumed);
    let err = rx.await.unwrap().unwrap_err();
    assert_eq!(err.code, ErrorCode::Cancelled);
    assert!(err.message.contains("abandoned"), "{}", err.message);
    // An operator arriving late is told, not allowed.
    let late = approval_by("alice", DecisionScope::Always);
    let refused = f
        .store
        .decide(&abandoned.id, late)
        .await
        .unwrap_err()
        .to_string();
    assert!(refused.contains("abandoned"), "{refused}");
    assert!(f.store.list_grants().await.unwrap().is_empty());
    // The identical call asks afresh.
    let err = run_layer_on(
        &layer(&f, WaitMode::Return),
        &mut asking("w", Risk::Write, json!({"n": 1}), "s"),
    )
    .await
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::ApprovalRequired);
    assert_ne!(approval_id(&err), abandoned.id);
}

#[tokio::test]
async fn a_wait_dropped_mid_await_abandons_the_request() {
    let f = fixture();
    let call = asking("w", Risk::Write, json!({"n": 2}), "s");
    let abandoned = give_up_waiting(&f, call, |task, _| task.abort()).await;
    assert_eq!(abandoned.status, ApprovalStatus::Abandoned);
}

#[tokio::test]
async fn a_caller_may_keep_its_request_for_the_next_identical_call() {
    let f = fixture();
    let mut call = asking("w", Risk::Write, json!({"n": 3}), "s");
    call.request.on_give_up = super::OnGiveUp::Keep;
    let (tx, rx) = tokio::sync::oneshot::channel();
    let kept = give_up_waiting(&f, call, |task, cancel| {
        cancel.cancel();
        tx.send(task).ok();
    })
    .await;
    // The waiter is done (cancelled), and the request is still open.
    let err = rx.await.unwrap().await.unwrap().unwrap_err();
    assert_eq!(err.code, ErrorCode::Cancelled);
    let kept = f.store.get(&kept.id).await.unwrap().unwrap();
    assert_eq!(kept.status, ApprovalStatus::Pending);
    approve(&f, &kept.id, DecisionScope::Once, None).await;
    let mut again = asking("w", Risk::Write, json!({"n": 3}), "s");
    run_layer_on(&layer(&f, WaitMode::Return), &mut again)
        .await
        .unwrap();
    assert_eq!(again.approval.unwrap().approval_id, kept.id);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn of_an_approval_and_an_abandonment_racing_exactly_one_wins() {
    for round in 0..50 {
        let f = fixture();
        let desk = ApprovalDesk::new(
            Arc::clone(&f.store),
            Arc::new(Redactor::default()),
            Duration::from_secs(600),
        );
        let args = json!({"round": round});
        let request = desk
            .open(&super::Question {
                principal: "p",
                session: "s",
                role: "default",
                tool: "w",
                risk: Risk::Write,
                arguments: &args,
                requires_confirmation: false,
                identity: None,
            })
            .await
            .unwrap();
        let barrier = Arc::new(tokio::sync::Barrier::new(2));
        let (s1, b1, id1) = (
            Arc::clone(&f.store),
            Arc::clone(&barrier),
            request.id.clone(),
        );
        let approver = tokio::spawn(async move {
            b1.wait().await;
            s1.decide(&id1, approval_by("alice", DecisionScope::Once))
                .await
                .is_ok()
        });
        let (s2, id2) = (Arc::clone(&f.store), request.id.clone());
        let abandoner = tokio::spawn(async move {
            barrier.wait().await;
            s2.abandon(&id2, "gone").await.unwrap()
        });
        let (approved, abandoned) = (approver.await.unwrap(), abandoner.await.unwrap());
        assert!(
            approved ^ abandoned,
            "round {round}: approved {approved}, abandoned {abandoned}"
        );
        let status = f.store.get(&request.id).await.unwrap().unwrap().status;
        let expected = if approved {
            ApprovalStatus::Approved
        } else {
            ApprovalStatus::Abandoned
        };
        assert_eq!(status, expected);
    }
}
