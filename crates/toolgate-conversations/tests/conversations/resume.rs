//! Interruptions: a restart while waiting for an approval or the model, a dead runner taken
//! over after its lease, two replicas on PostgreSQL.

use super::fixture::*;

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
