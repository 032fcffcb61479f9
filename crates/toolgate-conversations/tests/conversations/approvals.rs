//! Answers and approval cards: audited both ways, decided in the conversation by its user,
//! typed names, strangers and forged requests refused, operators only when configured, the
//! role of the message's sender.

use super::fixture::*;

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
