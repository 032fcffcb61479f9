//! Slack bots: mentions in threads, DMs, signatures, redeliveries.

use toolgate_agent::fake::{FakeTurn, Reply};

use super::super::super::harness::http_with;
use super::*;

/// Slack, through the Events API on `toolgate serve`: the Request URL's handshake, a mention
/// → the card in the mention's thread → a stranger's click refused → the same event sent
/// again handled once → alice approves → one answer in the thread; an unsigned event is
/// refused. In alice's DM a dangerous tool's card needs its name typed in the card's box.
#[test]
fn slack_mentions_and_dms_talk_to_the_agent_with_cards_in_the_thread() {
    let bot = Bot::slack(vec![
        Reply::Turn(FakeTurn::calls(&[(
            "call_1",
            "write_file",
            r#"{"path":"out.md","content":"from slack"}"#,
        )])),
        Reply::Turn(FakeTurn::text("Wrote out.md.")),
        Reply::Turn(FakeTurn::calls(&[(
            "call_2",
            "shell",
            r#"{"command":"echo typed > t.txt"}"#,
        )])),
        Reply::Turn(FakeTurn::text("Done.")),
    ]);
    let served = bot.serve();
    let hook = format!("http://{}/hooks/bots/slack/assistant", served.addr);
    // The bot knows its own user id once auth.test answered.
    wait_for("the bot to know itself", || {
        std::fs::read_to_string(&bot.log)
            .unwrap_or_default()
            .contains("bot: talking to the agent")
            .then_some(())
    });
    let handshake = bot
        .fake
        .post("/_test/url_verification", &json!({"url": hook}));
    assert_eq!(handshake["status"], 200, "{handshake}");
    let answered: Value = serde_json::from_str(handshake["body"].as_str().unwrap()).unwrap();
    assert_eq!(answered["challenge"], handshake["challenge"]);

    let said = bot.fake.post(
        "/_test/event",
        &json!({"url": hook, "type": "app_mention", "channel": SLACK_CHAT, "user": "U0ALICE",
                "text": "<@U0TGBOT01> please write out.md"}),
    );
    assert_eq!(said["status"], 200, "{said}");
    let thread = said["ts"].as_str().unwrap().to_owned();
    // Slack sends the same event again (no answer within 3 s, say): handled once.
    let again = bot.fake.post(
        "/_test/event",
        &json!({"url": hook, "type": "app_mention", "channel": SLACK_CHAT, "user": "U0ALICE",
                "text": "<@U0TGBOT01> please write out.md", "event_id": said["event_id"],
                "retry": 1}),
    );
    assert_eq!(again["status"], 200, "{again}");
    let bot_messages = |channel: &str| -> Vec<Value> {
        bot.fake
            .messages()
            .into_iter()
            .filter(|m| m["channel"] == channel && m["user"].is_null() && m["deleted"] != true)
            .collect()
    };
    let card = wait_for("the card in the thread", || {
        bot_messages(SLACK_CHAT)
            .into_iter()
            .find(|m| m["blocks"].is_array() && m["thread_ts"] == thread.as_str())
    });
    let approve = card["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "actions")
        .unwrap()["elements"][0]["action_id"]
        .as_str()
        .unwrap()
        .to_owned();
    click(&bot.fake, &hook, &card, "U0MALLORY", &approve, json!({}));
    let told = ephemeral_to(&bot.fake, "U0MALLORY", 1);
    assert!(told[0].starts_with("Not allowed"), "{told:?}");
    click(&bot.fake, &hook, &card, "U0ALICE", &approve, json!({}));
    let told = ephemeral_to(&bot.fake, "U0ALICE", 1);
    assert!(told[0].contains("Approved"), "{told:?}");
    wait_for("the answer in the thread", || {
        bot_messages(SLACK_CHAT)
            .iter()
            .any(|m| m["text"] == "Wrote out.md." && m["thread_ts"] == thread.as_str())
            .then_some(())
    });
    assert_eq!(bot.env.read("out.md"), "from slack");

    // An event without the app's signature does nothing.
    let forged = http_with(
        &served.addr,
        "POST",
        "/hooks/bots/slack/assistant",
        &[
            ("X-Slack-Request-Timestamp", "1700000000"),
            ("X-Slack-Signature", "v0=00"),
        ],
        Some(&json!({"type": "event_callback", "event_id": "EvFORGED",
                     "event": {"type": "message", "channel_type": "im", "user": "U0ALICE",
                               "channel": "D0ALICE", "ts": "1.0", "text": "run rm -rf"}})),
    );
    assert_eq!(forged.status, 401, "{}", forged.text);

    // A DM: every message is for the bot; a dangerous tool needs its name in the box.
    bot.fake.post(
        "/_test/event",
        &json!({"url": hook, "type": "message", "channel_type": "im", "channel": "D0ALICE",
                "user": "U0ALICE", "text": "run the command"}),
    );
    let card = wait_for("the DM card", || {
        bot_messages("D0ALICE")
            .into_iter()
            .find(|m| m["blocks"].is_array())
    });
    let approve = card["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "actions")
        .unwrap()["elements"][0]["action_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let dm_click = |typed: Option<&str>| {
        let mut extra = json!({"channel": "D0ALICE"});
        if let Some(typed) = typed {
            extra["state"] = json!({"confirm": {"confirm_name":
                {"type": "plain_text_input", "value": typed}}});
        }
        click(&bot.fake, &hook, &card, "U0ALICE", &approve, extra)
    };
    dm_click(None);
    let told = ephemeral_to(&bot.fake, "U0ALICE", 2);
    assert!(told[1].contains("a tap does not approve it"), "{told:?}");
    assert!(!bot.env.root().join("t.txt").exists());
    dm_click(Some("shell"));
    wait_for("the DM answer", || {
        bot_messages("D0ALICE")
            .iter()
            .any(|m| m["text"] == "Done.")
            .then_some(())
    });
    assert_eq!(bot.env.read("t.txt").trim(), "typed");
    drop(served);
    assert_eq!(write_outcomes(&bot.env), 1);
    let inbound = bot
        .env
        .audit_records()
        .iter()
        .filter(|r| r["tool"] == "conversation.message" && r["arguments"]["direction"] == "in")
        .count();
    assert_eq!(inbound, 2, "the event sent again was handled twice");
    let checked = validate_with_sdks(None, Some(&bot.fake));
    assert!(
        checked["slack_messages"].as_u64().unwrap() >= 2,
        "{checked}"
    );
    assert_no_secret(&bot.log);
}
