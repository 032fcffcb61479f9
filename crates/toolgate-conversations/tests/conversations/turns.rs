//! Turns in order: the queue, commands, `/stop`, a long journal, the per-principal bound.

use super::fixture::*;

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
