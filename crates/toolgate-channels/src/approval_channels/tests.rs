//! The exactly-once promises of [`ApprovalChannels`] on a real embedded store, a fake chat
//! service and a clock the tests move: lost answers, flood control, restarts and two loops
//! on one store — no sleeps, no network.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::json;
use toolgate_audit::{AuditLog, Durability};
use toolgate_gateway::approve::Decisions;
use toolgate_protocol::Risk;
use toolgate_store::approvals::{ApprovalRequest, ApprovalStatus, NewApproval};
use toolgate_store::redact::Redactor;
use toolgate_store::{Clock, Store};

use super::*;
use crate::action::{Action, ButtonData};
use crate::card::Card;
use crate::config::{ChannelConfig, ChannelKind, UpdateMode};
use crate::secret::Secret;
use crate::select::Selector;
use crate::service::Tap;
use crate::service::{ChatService, ReplyTo, TapInput};
use crate::telegram::TelegramApi;

const CHAT: &str = "-100";
const ALICE: &str = "42";

/// A clock the test moves by hand (ms since the epoch).
#[derive(Clone)]
struct TestClock(Arc<AtomicU64>);

impl TestClock {
    fn new() -> Self {
        TestClock(Arc::new(AtomicU64::new(1_800_000_000_000)))
    }
    fn clock(&self) -> Clock {
        let now = Arc::clone(&self.0);
        Arc::new(move || now.load(Ordering::SeqCst))
    }
    fn advance(&self, by: Duration) {
        self.0
            .fetch_add(u64::try_from(by.as_millis()).unwrap(), Ordering::SeqCst);
    }
}

/// What the fake service saw, and what it answers next.
#[derive(Default)]
struct FakeChat {
    /// Post attempts, in order (whether or not they got through).
    attempts: AtomicU64,
    /// Cards that reached the chat, by message id.
    posted: Mutex<Vec<(String, Card)>>,
    /// Updates of a card: (message, new text).
    updates: Mutex<Vec<(String, String)>>,
    told: Mutex<Vec<String>>,
    /// Answers for the next posts (success when empty). A `Transport` error posts the card
    /// and loses the answer, as a connection dropped after the service acted does.
    next: Mutex<VecDeque<ServiceError>>,
    /// When set, a post puts its card in the chat, then holds its answer until notified.
    hold: Mutex<Option<Arc<tokio::sync::Notify>>>,
}

impl FakeChat {
    fn fail_next(&self, e: ServiceError) {
        self.next.lock().unwrap().push_back(e);
    }
    fn attempts(&self) -> u64 {
        self.attempts.load(Ordering::SeqCst)
    }
    fn posted(&self) -> Vec<(String, Card)> {
        self.posted.lock().unwrap().clone()
    }
    fn updated(&self) -> Vec<(String, String)> {
        self.updates.lock().unwrap().clone()
    }
    fn told(&self) -> Vec<String> {
        self.told.lock().unwrap().clone()
    }
}

#[async_trait]
impl ChatService for FakeChat {
    async fn post(&self, _chat: &str, card: &Card) -> Result<String, ServiceError> {
        let n = self.attempts.fetch_add(1, Ordering::SeqCst) + 1;
        let failure = self.next.lock().unwrap().pop_front();
        let message = format!("m{n}");
        let hold = self.hold.lock().unwrap().clone();
        if let Some(hold) = hold {
            self.posted
                .lock()
                .unwrap()
                .push((message.clone(), card.clone()));
            hold.notified().await;
            return Ok(message);
        }
        match failure {
            None => {
                self.posted
                    .lock()
                    .unwrap()
                    .push((message.clone(), card.clone()));
                Ok(message)
            }
            Some(e @ ServiceError::Transport(_)) => {
                self.posted.lock().unwrap().push((message, card.clone()));
                Err(e)
            }
            Some(e) => Err(e),
        }
    }
    async fn update(&self, _chat: &str, message: &str, card: &Card) -> Result<(), ServiceError> {
        self.updates
            .lock()
            .unwrap()
            .push((message.to_owned(), card.text.clone()));
        Ok(())
    }
    async fn tell(&self, _to: &ReplyTo, text: &str) -> Result<(), ServiceError> {
        self.told.lock().unwrap().push(text.to_owned());
        Ok(())
    }
    async fn whoami(&self) -> Result<String, ServiceError> {
        Ok("fake_bot".into())
    }
    async fn chat_title(&self, _chat: &str) -> Result<String, ServiceError> {
        Ok("ops".into())
    }
}

/// Everyone mapped is an operator.
struct AllOperators;

impl OperatorCheck for AllOperators {
    fn is_operator(&self, _principal: &str) -> bool {
        true
    }
}

/// One process's view: the store opened from `dir`, and its channels over `chat`.
struct Process {
    store: Store,
    hub: Arc<ApprovalChannels>,
}

fn config() -> ChannelConfig {
    ChannelConfig {
        name: "oncall".into(),
        kind: ChannelKind::Telegram,
        token_env: "TG_TOKEN".into(),
        signing_secret_env: None,
        webhook_secret_env: None,
        updates: UpdateMode::Polling,
        api_url: Some("http://127.0.0.1:9".into()),
        chats: vec![CHAT.into()],
        roles: Vec::new(),
        tools: Vec::new(),
        risks: Vec::new(),
        operators: [(ALICE.to_owned(), "alice".to_owned())].into(),
    }
}

/// Opens the store in `dir` and the hub over `chat`, both on `clock` (a process start).
fn start(dir: &Path, chat: &Arc<FakeChat>, clock: &TestClock) -> Process {
    let store = Store::open_embedded(&dir.join("toolgate.db"), &dir.join("results")).unwrap();
    let approvals = Arc::new(store.approvals().with_clock(clock.clock()));
    let audit = Arc::new(
        AuditLog::open(
            &dir.join("audit.jsonl"),
            &dir.join("toolgate.db"),
            Durability::Durable,
        )
        .unwrap(),
    );
    let config = config();
    // Never started: the test hands taps to `on_tap` itself.
    let inbound = Inbound::TelegramPolling(TelegramApi::new(
        reqwest::Client::new(),
        config.api_base(),
        Secret::new("1:unused"),
    ));
    let channel = Channel {
        via: config.via(),
        selector: Selector::new(&config),
        config,
        service: Arc::clone(chat) as Arc<dyn ChatService>,
        inbound,
    };
    let hub = ApprovalChannels::assemble(
        vec![channel],
        ChannelsDeps {
            approvals: Arc::clone(&approvals),
            posts: store.chat_posts().with_clock(clock.clock()),
            decisions: Arc::new(Decisions::new(approvals, audit)),
            egress: EgressPolicy::default(),
            operators: Arc::new(AllOperators),
            public_url: None,
            clock: clock.clock(),
        },
    );
    Process { store, hub }
}

async fn ask(p: &Process, tool: &str) -> ApprovalRequest {
    p.hub
        .approvals
        .create(NewApproval {
            principal: "agent".into(),
            session: "s1".into(),
            role: "default".into(),
            tool: tool.into(),
            risk: Risk::Write,
            args_hash: format!("hash-{tool}"),
            arguments: Redactor::default().seal(&json!({"path": "k.txt"})),
            requires_confirmation: false,
            ttl: Duration::from_secs(600),
            issuer: None,
            subject: None,
        })
        .await
        .unwrap()
}

fn tap_on(message: &str, data: &ButtonData) -> Tap {
    Tap {
        chat: CHAT.into(),
        message: message.into(),
        user: ALICE.into(),
        user_name: Some("alice".into()),
        input: TapInput::Button {
            data: data.encode(),
            typed: None,
        },
        reply: ReplyTo::Callback("q1".into()),
    }
}

fn approve(id: &str) -> ButtonData {
    ButtonData::new(
        id,
        Action::Approve(toolgate_store::approvals::DecisionScope::Once),
    )
}

async fn status(p: &Process, id: &str) -> ApprovalStatus {
    p.hub.approvals.get(id).await.unwrap().unwrap().status
}

#[tokio::test]
async fn a_lost_answer_keeps_the_claim_for_the_lease_then_posts_once_more() {
    let dir = tempfile::tempdir().unwrap();
    let (chat, clock) = (Arc::new(FakeChat::default()), TestClock::new());
    let p = start(dir.path(), &chat, &clock);
    let request = ask(&p, "write_file").await;
    chat.fail_next(ServiceError::Transport("connection reset".into()));

    p.hub.pass().await.unwrap();
    assert_eq!(chat.attempts(), 1);
    // Inside the lease, no pass posts again: the card may be in the chat already.
    for _ in 0..5 {
        clock.advance(LEASE / 6);
        p.hub.pass().await.unwrap();
    }
    assert_eq!(chat.attempts(), 1, "posted again inside the lease");
    clock.advance(LEASE / 6 + Duration::from_millis(1));
    p.hub.pass().await.unwrap();
    assert_eq!(chat.attempts(), 2, "posted again once the lease lapsed");
    for _ in 0..3 {
        clock.advance(LEASE);
        p.hub.pass().await.unwrap();
    }
    assert_eq!(chat.attempts(), 2, "a recorded card is never posted again");

    // The card whose answer was lost is not one toolgate knows: a tap on it is refused and
    // decides nothing; the card recorded decides.
    let (lost, _) = chat.posted()[0].clone();
    let (kept, _) = chat.posted()[1].clone();
    p.hub.on_tap(0, tap_on(&lost, &approve(&request.id))).await;
    assert_eq!(status(&p, &request.id).await, ApprovalStatus::Pending);
    assert!(
        chat.told()[0].contains("not an approval card"),
        "{:?}",
        chat.told()
    );
    p.hub.on_tap(0, tap_on(&kept, &approve(&request.id))).await;
    assert_eq!(status(&p, &request.id).await, ApprovalStatus::Approved);
    assert_eq!(chat.updated().len(), 1, "{:?}", chat.updated());
    assert_eq!(chat.updated()[0].0, kept);
}

#[tokio::test]
async fn flood_control_pauses_the_channel_for_as_long_as_asked_then_posts_once() {
    let dir = tempfile::tempdir().unwrap();
    let (chat, clock) = (Arc::new(FakeChat::default()), TestClock::new());
    let p = start(dir.path(), &chat, &clock);
    ask(&p, "write_file").await;
    chat.fail_next(ServiceError::RateLimited {
        service: "telegram",
        retry_after_secs: 6,
    });
    p.hub.pass().await.unwrap();
    assert_eq!(chat.attempts(), 1);
    // Another request during the pause is not posted either.
    ask(&p, "delete_file").await;
    for _ in 0..5 {
        clock.advance(Duration::from_millis(1_190));
        p.hub.pass().await.unwrap();
    }
    assert_eq!(chat.attempts(), 1, "posted inside the 6 s pause");
    clock.advance(Duration::from_millis(100));
    p.hub.pass().await.unwrap();
    assert_eq!(chat.attempts(), 3, "both cards once the pause is over");
    assert_eq!(chat.posted().len(), 2);
    p.hub.pass().await.unwrap();
    assert_eq!(chat.attempts(), 3);
}

#[tokio::test]
async fn a_refused_post_is_released_and_tried_again_on_the_next_pass() {
    let dir = tempfile::tempdir().unwrap();
    let (chat, clock) = (Arc::new(FakeChat::default()), TestClock::new());
    let p = start(dir.path(), &chat, &clock);
    ask(&p, "write_file").await;
    chat.fail_next(ServiceError::Api {
        service: "telegram",
        code: "400".into(),
        description: "Bad Request: chat not found".into(),
    });
    p.hub.pass().await.unwrap();
    assert!(chat.posted().is_empty());
    p.hub.pass().await.unwrap();
    assert_eq!(
        chat.posted().len(),
        1,
        "nothing was posted: no lease to wait out"
    );
}

#[tokio::test]
async fn after_a_restart_a_tap_on_the_card_decides_and_nothing_is_posted_again() {
    let dir = tempfile::tempdir().unwrap();
    let (chat, clock) = (Arc::new(FakeChat::default()), TestClock::new());
    let before = start(dir.path(), &chat, &clock);
    let request = ask(&before, "write_file").await;
    before.hub.pass().await.unwrap();
    let (card, _) = chat.posted()[0].clone();
    drop(before);

    let after = start(dir.path(), &chat, &clock);
    for _ in 0..3 {
        clock.advance(LEASE);
        after.hub.pass().await.unwrap();
    }
    assert_eq!(chat.attempts(), 1, "not posted again after the restart");
    after
        .hub
        .on_tap(0, tap_on(&card, &approve(&request.id)))
        .await;
    assert_eq!(status(&after, &request.id).await, ApprovalStatus::Approved);
    let decided = after.hub.approvals.get(&request.id).await.unwrap().unwrap();
    assert_eq!(decided.decided_via.as_deref(), Some("telegram:oncall"));
    assert_eq!(chat.updated().len(), 1);
    assert!(
        chat.updated()[0].1.starts_with('✅'),
        "{:?}",
        chat.updated()
    );
    // The next pass finds the card closed: no second update.
    after.hub.pass().await.unwrap();
    assert_eq!(chat.updated().len(), 1);
    drop(after.store);
}

#[tokio::test]
async fn a_request_decided_elsewhere_closes_its_card_once() {
    let dir = tempfile::tempdir().unwrap();
    let (chat, clock) = (Arc::new(FakeChat::default()), TestClock::new());
    let p = start(dir.path(), &chat, &clock);
    let request = ask(&p, "write_file").await;
    p.hub.pass().await.unwrap();
    let by =
        toolgate_gateway::approve::Decider::new("bob", true, toolgate_gateway::approve::Via::Api);
    p.hub
        .decisions
        .decide(&request.id, toolgate_gateway::approve::Ask::deny(), &by)
        .await
        .unwrap();
    p.hub.pass().await.unwrap();
    p.hub.pass().await.unwrap();
    let updates = chat.updated();
    assert_eq!(updates.len(), 1, "{updates:?}");
    assert!(updates[0].1.contains("Denied"), "{updates:?}");
}

/// Two loops on one store (two replicas, or a restart racing the old process) pass at the
/// same time, again and again: one card.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_loops_passing_at_once_post_one_card() {
    let dir = tempfile::tempdir().unwrap();
    let (chat, clock) = (Arc::new(FakeChat::default()), TestClock::new());
    let a = start(dir.path(), &chat, &clock);
    let b = start(dir.path(), &chat, &clock);
    for round in 0..8 {
        ask(&a, &format!("tool_{round}")).await;
        let (x, y) = (Arc::clone(&a.hub), Arc::clone(&b.hub));
        let (rx, ry) = tokio::join!(
            tokio::spawn(async move { x.pass().await }),
            tokio::spawn(async move { y.pass().await })
        );
        rx.unwrap().unwrap();
        ry.unwrap().unwrap();
    }
    assert_eq!(chat.posted().len(), 8, "one card per request");
    assert_eq!(chat.attempts(), 8);
}

/// A tap on a card that reached the chat before its message was recorded (the announcing
/// pass between the service's answer and its write) waits for the record and decides: it
/// is not refused as a stranger's message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tap_while_the_card_is_being_recorded_waits_for_the_record_and_decides() {
    let dir = tempfile::tempdir().unwrap();
    let (chat, clock) = (Arc::new(FakeChat::default()), TestClock::new());
    let p = start(dir.path(), &chat, &clock);
    let request = ask(&p, "write_file").await;
    let gate = Arc::new(tokio::sync::Notify::new());
    *chat.hold.lock().unwrap() = Some(Arc::clone(&gate));
    let hub = Arc::clone(&p.hub);
    let announcing = tokio::spawn(async move { hub.pass().await });
    while chat.posted().is_empty() {
        tokio::task::yield_now().await;
    }
    let (card, _) = chat.posted()[0].clone();
    let hub = Arc::clone(&p.hub);
    let id = request.id.clone();
    let tapped = tokio::spawn(async move { hub.on_tap(0, tap_on(&card, &approve(&id))).await });
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(
        !tapped.is_finished(),
        "answered before the card was recorded: {:?}",
        chat.told()
    );
    gate.notify_one();
    announcing.await.unwrap().unwrap();
    tapped.await.unwrap();
    assert_eq!(
        status(&p, &request.id).await,
        ApprovalStatus::Approved,
        "{:?}",
        chat.told()
    );
}

/// A tap on a message that is no card, while no card is being recorded, is answered at once.
#[tokio::test]
async fn a_tap_on_another_message_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let (chat, clock) = (Arc::new(FakeChat::default()), TestClock::new());
    let p = start(dir.path(), &chat, &clock);
    let request = ask(&p, "write_file").await;
    p.hub.pass().await.unwrap();
    let started = std::time::Instant::now();
    p.hub.on_tap(0, tap_on("m999", &approve(&request.id))).await;
    assert!(
        chat.told()[0].contains("not an approval card"),
        "{:?}",
        chat.told()
    );
    assert!(
        started.elapsed() < Duration::from_millis(40),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(status(&p, &request.id).await, ApprovalStatus::Pending);
}
