//! Telegram bots: a private chat, a group, a restart while a card waits.

use toolgate_agent::fake::{FakeTurn, Reply};

use super::*;

#[test]
fn a_telegram_message_asks_inline_is_approved_there_and_answers_once() {
    let bot = Bot::new(vec![
        Reply::Turn(FakeTurn::calls(&[(
            "call_1",
            "write_file",
            r#"{"path":"out.md","content":"from telegram"}"#,
        )])),
        Reply::Turn(FakeTurn::text("Wrote out.md.")),
    ]);
    let served = bot.serve();
    bot.say(ALICE_CHAT, ALICE, "please write out.md");
    let card = bot.card(ALICE_CHAT);
    let text = card["text"].as_str().unwrap();
    for expected in ["write_file", "\"from telegram\"", "out.md"] {
        assert!(text.contains(expected), "{expected} not in {text}");
    }
    let approve = card_data(&card, 0);

    // Somebody else's tap on alice's card (a forged update): refused and recorded.
    let answer = bot.tap(ALICE_CHAT, &card, STRANGER, &approve);
    assert!(answer.starts_with("Not allowed"), "{answer}");
    assert!(!bot.env.root().join("out.md").exists());
    // A stranger's own message: refused, answered, audited.
    bot.say(STRANGER_CHAT, STRANGER, "hello?");
    let refused = bot.sent_when(STRANGER_CHAT, "the refusal", |m| !m.is_empty());
    assert!(texts(&refused)[0].contains("not mapped"), "{refused:?}");
    // Insisting is audited again but answered once a minute (no flood through the bot).
    bot.say(STRANGER_CHAT, STRANGER, "hello again?");

    // alice approves in her chat: the tool runs once, the answer arrives once.
    let answer = bot.tap(ALICE_CHAT, &card, ALICE, &approve);
    assert!(answer.contains("Approved"), "{answer}");
    let sent = bot.sent_when(ALICE_CHAT, "the answer", |m| {
        texts(m).iter().any(|t| t == "Wrote out.md.")
    });
    assert_eq!(bot.env.read("out.md"), "from telegram");
    // A few passes later nothing was sent twice.
    std::thread::sleep(Duration::from_millis(2_500));
    let sent_after = bot.sent_in(ALICE_CHAT);
    let answers = texts(&sent_after)
        .into_iter()
        .filter(|t| t == "Wrote out.md.")
        .count();
    assert_eq!(answers, 1, "{sent:?}");
    let card_now = sent_after
        .iter()
        .find(|m| m["message_id"] == card["message_id"])
        .unwrap();
    assert!(
        card_now["reply_markup"].is_null(),
        "the card keeps its buttons: {card_now}"
    );
    assert!(card_now["text"].as_str().unwrap().contains("Approved"));
    // The turn was shown as it went in one draft (first: the tool waiting for its approval),
    // deleted when the answer came.
    let drafts: Vec<&Value> = sent_after.iter().filter(|m| m["deleted"] == true).collect();
    assert_eq!(drafts.len(), 1, "{sent_after:#?}");
    // What the draft showed, in order: its sending and each edit.
    let requests = bot.fake.get("/_test/requests");
    let shown: Vec<String> = requests
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| {
            let draft = drafts[0]["message_id"].to_string();
            r["method"] == "sendMessage"
                || (r["method"] == "editMessageText"
                    && r["params"]["message_id"].to_string().trim_matches('"') == draft)
        })
        .filter_map(|r| r["params"]["text"].as_str().map(str::to_owned))
        .filter(|t| t.ends_with('▍') || t == "…")
        .collect();
    assert_eq!(
        shown.first().map(String::as_str),
        Some("⚙ write_file … ▍"),
        "{shown:?}"
    );
    drop(served);
    assert_eq!(write_outcomes(&bot.env), 1);

    let audit = bot.env.audit_records();
    let messages: Vec<&Value> = audit
        .iter()
        .filter(|r| r["tool"] == "conversation.message")
        .collect();
    assert!(
        messages.iter().any(|r| r["principal"] == "alice"
            && r["arguments"]["direction"] == "in"
            && r["arguments"]["entry"] == "telegram:assistant"),
        "{messages:#?}"
    );
    let refusals = messages
        .iter()
        .filter(|r| {
            r["principal"] == "telegram://assistant/99"
                && r["outcome"] == "forbidden"
                && r["error"]
                    .as_str()
                    .is_some_and(|w| w.contains("not mapped"))
        })
        .count();
    assert_eq!(
        refusals, 2,
        "the stranger's messages are not audited as refused: {messages:#?}"
    );
    assert_eq!(
        bot.sent_in(STRANGER_CHAT).len(),
        1,
        "the refusal was repeated"
    );
    // The decisions taken from the chat: the stranger's tap refused, alice's approval.
    let decisions: Vec<(String, String)> =
        chat_records(&bot.env, "conversation:telegram:assistant")
            .iter()
            .map(|r| {
                (
                    r["principal"].as_str().unwrap_or_default().to_owned(),
                    r["outcome"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect();
    assert_eq!(
        decisions,
        [
            ("telegram://assistant/99".to_owned(), "forbidden".to_owned()),
            ("alice".to_owned(), "ok".to_owned())
        ]
    );
    let checked = validate_with_sdks(Some(&bot.fake), None);
    assert!(
        checked["telegram_messages"].as_u64().unwrap() >= 3,
        "{checked}"
    );
    assert_no_secret(&bot.log);
}

#[test]
fn in_a_group_the_bot_answers_when_mentioned_and_a_dangerous_tool_needs_its_name() {
    let bot = Bot::new(vec![
        Reply::Turn(FakeTurn::calls(&[(
            "call_1",
            "shell",
            r#"{"command":"echo typed > t.txt"}"#,
        )])),
        Reply::Turn(FakeTurn::text("Done.")),
    ]);
    let _served = bot.serve();
    let group: i64 = CHAT.parse().unwrap();
    bot.say(group, ALICE, "nobody asked the bot");
    bot.say(group, ALICE, "@toolgate_test_bot run the command");
    let card = bot.card(group);
    assert!(
        card["text"]
            .as_str()
            .unwrap()
            .contains("Reply to this message with `shell`")
    );
    let answer = bot.tap(group, &card, ALICE, &card_data(&card, 0));
    assert!(answer.contains("a tap does not approve it"), "{answer}");
    assert!(!bot.env.root().join("t.txt").exists());
    bot.fake.post(
        "/_test/reply",
        &json!({"chat_id": group, "reply_to_message_id": card["message_id"],
                "from_id": ALICE, "text": "shell"}),
    );
    bot.sent_when(group, "the answer", |m| {
        texts(m).iter().any(|t| t == "Done.")
    });
    assert_eq!(bot.env.read("t.txt").trim(), "typed");
    // The first message (no mention) opened nothing: one user message reached the model.
    let inbound = bot
        .env
        .audit_records()
        .iter()
        .filter(|r| r["tool"] == "conversation.message" && r["arguments"]["direction"] == "in")
        .count();
    assert_eq!(inbound, 1);
    assert_no_secret(&bot.log);
}

/// SIGKILL while the card waits, decided from the CLI during the outage: after the restart
/// the card is not posted again, it says how it ended, the tool runs once and the answer
/// arrives once (the delivery cursor and the claims survive the process).
#[test]
fn sigkill_while_the_card_waits_delivers_the_answer_once_after_the_restart() {
    let bot = Bot::new(vec![
        Reply::Turn(FakeTurn::calls(&[(
            "call_1",
            "write_file",
            r#"{"path":"out.md","content":"after the outage"}"#,
        )])),
        Reply::Turn(FakeTurn::text("Wrote it after all.")),
    ]);
    let mut served = bot.serve();
    bot.say(ALICE_CHAT, ALICE, "please write out.md");
    let card = bot.card(ALICE_CHAT);
    let approval = card["reply_markup"]["inline_keyboard"][0][0]["callback_data"]
        .as_str()
        .unwrap()
        .rsplit('.')
        .next()
        .unwrap()
        .to_owned();
    // Killed once the card is recorded (within milliseconds of Telegram's answer; a kill in
    // between would leave a claim that lapses after 30 s and one late duplicate card).
    std::thread::sleep(Duration::from_millis(500));
    served.child.kill().unwrap(); // SIGKILL
    served.child.wait().unwrap();
    bot.env.approve(&approval, &[]).assert_code(0);
    let _served = bot.serve();
    // The write a killed process had reserved continues once its reservation lapses (3 s here).
    wait_within(Duration::from_secs(60), "the answer", || {
        texts(&bot.sent_in(ALICE_CHAT))
            .iter()
            .any(|t| t == "Wrote it after all.")
            .then_some(())
    });
    wait_for("the card closed", || {
        bot.sent_in(ALICE_CHAT)
            .iter()
            .any(|m| m["message_id"] == card["message_id"] && m["reply_markup"].is_null())
            .then_some(())
    });
    std::thread::sleep(Duration::from_millis(2_500));
    let sent = bot.sent_in(ALICE_CHAT);
    let cards = sent
        .iter()
        .filter(|m| {
            m["text"]
                .as_str()
                .unwrap_or_default()
                .contains("write_file")
                && m["deleted"] != true
                && !m["text"].as_str().unwrap_or_default().starts_with('⚙')
        })
        .count();
    assert_eq!(cards, 1, "the card was posted again: {sent:#?}");
    let answers = texts(&sent)
        .into_iter()
        .filter(|t| t == "Wrote it after all.")
        .count();
    assert_eq!(answers, 1, "{sent:#?}");
    assert_eq!(bot.env.read("out.md"), "after the outage");
    drop(_served);
    assert_eq!(write_outcomes(&bot.env), 1);
}

/// Webhook mode: toolgate registers `/hooks/bots/telegram/<name>` with its secret token;
/// Telegram's deliveries carry it and are answered; an update without it is refused (401)
/// and acts on nothing.
#[test]
fn a_telegram_bot_in_webhook_mode_takes_only_updates_with_the_secret() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let bot = Bot::telegram_with(
        vec![Reply::Turn(FakeTurn::text("Hello through the webhook."))],
        "updates = \"webhook\"\nwebhook_secret_env = \"TG_WEBHOOK_SECRET\"",
        &format!("\n[server]\npublic_url = \"http://127.0.0.1:{port}\"\n"),
    );
    let served = bot.serve_on(&format!("127.0.0.1:{port}"));
    let hook = format!("http://127.0.0.1:{port}/hooks/bots/telegram/assistant");
    wait_for("the webhook registered", || {
        (bot.fake.get(&format!("/bot{TG_TOKEN}/getWebhookInfo"))["result"]["url"] == json!(hook))
            .then_some(())
    });
    let forged = json!({"update_id": 5, "message": {
        "message_id": 77, "date": 0, "chat": {"id": ALICE_CHAT, "type": "private"},
        "from": {"id": ALICE, "is_bot": false, "first_name": "A"}, "text": "run rm -rf"}});
    for secret in [None, Some("guess")] {
        let headers: Vec<(&str, &str)> = secret
            .map(|s| vec![("X-Telegram-Bot-Api-Secret-Token", s)])
            .unwrap_or_default();
        let answer = super::super::super::harness::http_with(
            &served.addr,
            "POST",
            "/hooks/bots/telegram/assistant",
            &headers,
            Some(&forged),
        );
        assert_eq!(answer.status, 401, "{}", answer.text);
    }
    bot.say(ALICE_CHAT, ALICE, "hello?");
    bot.sent_when(ALICE_CHAT, "the answer", |m| {
        texts(m).iter().any(|t| t == "Hello through the webhook.")
    });
    let delivered = bot.fake.get("/_test/deliveries");
    assert!(
        delivered
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["status"] == 200),
        "{delivered}"
    );
    let inbound = bot
        .env
        .audit_records()
        .iter()
        .filter(|r| r["tool"] == "conversation.message" && r["arguments"]["direction"] == "in")
        .count();
    assert_eq!(inbound, 1, "the forged update reached the conversation");
    assert_no_secret(&bot.log);
}
