//! Slack: verified interactions, the typed name in the card's box.

use super::*;

/// Slack: forged interactions (bad signature, a stale timestamp, a replay) are refused
/// before anything is read; a dangerous tool needs its name typed in the card's box; the
/// operator's click with it approves, and the card is replaced.
#[test]
fn slack_interactions_are_verified_and_decide() {
    let fake = Fake::slack();
    let env = Env::with_config(&slack_config(&fake));
    let log = env.root().join("serve.log");
    let served = serve(&env, &log);
    let hook = format!("http://{}/hooks/slack/ops", served.addr);
    let call = waiting_call(&env, "shell", &json!({"command": "echo slack > s.txt"}));
    let id = pending_id(&env);
    let card = fake.messages_when("the card", |m| !m.is_empty())[0].clone();
    let blocks = card["blocks"].as_array().unwrap();
    assert!(
        blocks
            .iter()
            .any(|b| b["type"] == "input" && b["block_id"] == "confirm")
    );
    let approve = format!("a.once.{id}");

    for (forgery, why) in [
        (json!({"bad_signature": true}), "signature does not match"),
        (json!({"timestamp_offset": -600}), "more than 5 minutes"),
    ] {
        let answer = click(&fake, &hook, &card, "U0ALICE", &approve, forgery);
        assert_eq!(answer["status"], 401, "{answer}");
        assert!(answer["body"].as_str().unwrap().contains(why), "{answer}");
    }
    // A genuine click without the typed name, then the same request replayed.
    let genuine = click(&fake, &hook, &card, "U0ALICE", &approve, json!({}));
    assert_eq!(genuine["status"], 200, "{genuine}");
    let replayed = click(
        &fake,
        &hook,
        &card,
        "U0ALICE",
        &approve,
        json!({"replay": true}),
    );
    assert_eq!(replayed["status"], 401, "{replayed}");
    assert!(replayed["body"].as_str().unwrap().contains("replay"));
    let told = ephemeral_to(&fake, "U0ALICE", 1);
    assert!(told[0].contains("a tap does not approve it"), "{told:?}");
    assert_eq!(show(&env, &id)["status"], "pending");

    let mallory = click(
        &fake,
        &hook,
        &card,
        "U0MALLORY",
        &approve,
        json!({"state": {"confirm": {"confirm_name": {"type": "plain_text_input", "value": "shell"}}}}),
    );
    assert_eq!(mallory["status"], 200);
    assert!(ephemeral_to(&fake, "U0MALLORY", 1)[0].starts_with("Not allowed"));
    assert_eq!(show(&env, &id)["status"], "pending");

    let typed = click(
        &fake,
        &hook,
        &card,
        "U0ALICE",
        &approve,
        json!({"state": {"confirm": {"confirm_name": {"type": "plain_text_input", "value": "shell"}}}}),
    );
    assert_eq!(typed["status"], 200, "{typed}");
    finished(call).assert_code(0);
    assert_eq!(env.read("s.txt").trim(), "slack");
    let decided = show(&env, &id);
    assert_eq!(
        (&decided["decided_by"], &decided["decided_via"]),
        (&json!("alice"), &json!("slack:ops"))
    );
    let closed = fake.messages_when("the card replaced", |m| {
        m[0]["updates"].as_array().is_some_and(|u| !u.is_empty())
    })[0]
        .clone();
    let last = &closed["blocks"];
    assert!(
        last.to_string()
            .contains("Approved once by alice via slack:ops"),
        "{last}"
    );
    assert!(
        !last.to_string().contains("\"actions\""),
        "no buttons left: {last}"
    );
    let outcomes: Vec<String> = chat_records(&env, "slack:ops")
        .iter()
        .map(|r| {
            format!(
                "{} {}",
                r["principal"].as_str().unwrap(),
                r["outcome"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        outcomes,
        ["alice invalid_arguments", "mallory forbidden", "alice ok"]
    );
    validate_with_sdks(None, Some(&fake));
    assert_no_secret(&log);
}

/// Issue 30 (attack 3), Slack: a verified click whose value names another request than the
/// card's is refused and audited; neither request is decided and the card is not replaced.
#[test]
fn a_slack_click_naming_another_request_is_refused() {
    let fake = Fake::slack();
    let env = Env::with_config(&slack_config(&fake));
    let log = env.root().join("serve.log");
    let served = serve(&env, &log);
    let hook = format!("http://{}/hooks/slack/ops", served.addr);
    let mut first = waiting_call(
        &env,
        "write_file",
        &json!({"path": "a.txt", "content": "a"}),
    );
    let first_id = pending_id(&env);
    let card = fake.messages_when("the first card", |m| !m.is_empty())[0].clone();
    assert!(card.to_string().contains(&first_id));
    let mut second = waiting_call(
        &env,
        "write_file",
        &json!({"path": "b.txt", "content": "b"}),
    );
    let second_id = wait_for("the second request", || {
        let listed = env.run(&["approvals", "list", "--json"]).json();
        listed
            .as_array()?
            .iter()
            .filter_map(|r| r["id"].as_str())
            .find(|id| *id != first_id)
            .map(str::to_owned)
    });
    let forged = format!("d.{second_id}");
    let answer = click(
        &fake,
        &hook,
        &card,
        "U0ALICE",
        &forged,
        json!({"force": true}),
    );
    assert_eq!(answer["status"], 200, "{answer}");
    let told = ephemeral_to(&fake, "U0ALICE", 1);
    assert!(
        told[0].starts_with("Not allowed") && told[0].contains(&second_id),
        "{told:?}"
    );
    assert_eq!(show(&env, &first_id)["status"], "pending");
    assert_eq!(show(&env, &second_id)["status"], "pending");
    let first_card = fake
        .messages()
        .into_iter()
        .find(|m| m["ts"] == card["ts"])
        .unwrap();
    assert!(
        first_card["updates"].as_array().is_none_or(Vec::is_empty),
        "the card was replaced: {first_card}"
    );
    let outcomes: Vec<(Value, Value, Value)> = chat_records(&env, "slack:ops")
        .iter()
        .map(|r| {
            (
                r["principal"].clone(),
                r["outcome"].clone(),
                r["arguments"]["button_approval_id"].clone(),
            )
        })
        .collect();
    assert_eq!(
        outcomes,
        [(json!("alice"), json!("forbidden"), json!(second_id))]
    );
    for child in [&mut first, &mut second] {
        let _ = child.kill();
        let _ = child.wait();
    }
}
