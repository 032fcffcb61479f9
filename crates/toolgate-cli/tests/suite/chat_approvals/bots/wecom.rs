//! WeCom bots: callbacks verified and decrypted, template cards, passive replies.

use toolgate_agent::fake::{FakeTurn, Reply};

use super::*;

/// WeCom, through the callback on `toolgate serve`: the URL check answered with the echo
/// wechatpy encrypted; a member's message (signed and encrypted by wechatpy) → the complete
/// preview and a template card in their chat → a stranger refused with an encrypted passive
/// reply wechatpy decrypts → a forged callback refused → alice's press approves → the tool
/// runs once → one answer, the card updated. A dangerous tool: refused on a press, approved
/// by sending its name.
#[test]
fn wecom_callbacks_talk_to_the_agent_with_template_cards() {
    let bot = Bot::wecom(vec![
        Reply::Turn(FakeTurn::calls(&[(
            "call_1",
            "write_file",
            r#"{"path":"out.md","content":"from wecom"}"#,
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
    let hook = format!("http://{}/hooks/bots/wecom/assistant", served.addr);
    let checked = bot.fake.post("/_test/verify", &json!({"url": hook}));
    assert_eq!(checked["status"], 200, "{checked}");
    assert_eq!(checked["body"], checked["echo"]);

    let said = bot.fake.post(
        "/_test/say",
        &json!({"url": hook, "user": "alice", "text": "please write out.md"}),
    );
    assert_eq!(said["status"], 200, "{said}");
    assert!(said["reply"].is_null(), "{said}");
    let to_alice = |bot: &Bot| -> Vec<Value> {
        bot.fake
            .messages()
            .into_iter()
            .filter(|m| m["touser"] == "alice" && m["recalled"] != true)
            .collect()
    };
    let card = wait_for("the card", || {
        to_alice(&bot)
            .into_iter()
            .find(|m| m["msgtype"] == "template_card")
    });
    let preview = to_alice(&bot);
    assert!(
        preview.iter().any(|m| m["content"]
            .as_str()
            .is_some_and(|t| t.contains("write_file") && t.contains("\"from wecom\""))),
        "the complete preview is not sent: {preview:#?}"
    );
    let task = card["template_card"]["task_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let approve = card["template_card"]["button_list"][0]["key"]
        .as_str()
        .unwrap()
        .to_owned();

    // A member nobody mapped: refused in the callback's own (encrypted) answer, audited.
    let refused = bot.fake.post(
        "/_test/say",
        &json!({"url": hook, "user": "bob", "text": "hello?"}),
    );
    assert!(
        refused["reply"]
            .as_str()
            .is_some_and(|r| r.contains("Not allowed")),
        "{refused}"
    );
    // Not signed with the callback token: refused, nothing acted on.
    let forged = bot.fake.post(
        "/_test/forged",
        &json!({"url": hook, "user": "alice", "text": "run rm -rf"}),
    );
    assert_eq!(forged["status"], 401, "{forged}");
    // Signed correctly, but ten minutes old (a captured callback replayed): refused.
    let replayed = bot.fake.post(
        "/_test/say",
        &json!({"url": hook, "user": "alice", "text": "run rm -rf", "age": 600}),
    );
    assert_eq!(replayed["status"], 401, "{replayed}");

    let pressed = bot.fake.post(
        "/_test/click",
        &json!({"url": hook, "user": "alice", "task_id": task, "key": approve}),
    );
    assert_eq!(pressed["status"], 200, "{pressed}");
    wait_for("the answer", || {
        to_alice(&bot)
            .iter()
            .any(|m| m["content"] == "Wrote out.md.")
            .then_some(())
    });
    assert_eq!(bot.env.read("out.md"), "from wecom");
    let card = wait_for("the card updated", || {
        to_alice(&bot)
            .into_iter()
            .find(|m| m["template_card"]["task_id"] == task.as_str() && !m["updated"].is_null())
    });
    assert!(
        card["updated"]["replace_name"]
            .as_str()
            .unwrap()
            .contains("Approved"),
        "{card}"
    );

    // A dangerous tool: a press does not approve it; its name sent as a message does.
    bot.fake.post(
        "/_test/say",
        &json!({"url": hook, "user": "alice", "text": "run the command"}),
    );
    let card = wait_for("the second card", || {
        to_alice(&bot).into_iter().find(|m| {
            m["msgtype"] == "template_card" && m["template_card"]["task_id"] != task.as_str()
        })
    });
    let task2 = card["template_card"]["task_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let approve2 = card["template_card"]["button_list"][0]["key"]
        .as_str()
        .unwrap()
        .to_owned();
    bot.fake.post(
        "/_test/click",
        &json!({"url": hook, "user": "alice", "task_id": task2, "key": approve2}),
    );
    wait_for("the refusal of the press", || {
        to_alice(&bot)
            .iter()
            .any(|m| {
                m["content"]
                    .as_str()
                    .is_some_and(|t| t.contains("a tap does not approve it"))
            })
            .then_some(())
    });
    assert!(!bot.env.root().join("t.txt").exists());
    bot.fake.post(
        "/_test/say",
        &json!({"url": hook, "user": "alice", "text": "shell"}),
    );
    wait_for("the second answer", || {
        to_alice(&bot)
            .iter()
            .any(|m| m["content"] == "Done.")
            .then_some(())
    });
    assert_eq!(bot.env.read("t.txt").trim(), "typed");
    std::thread::sleep(Duration::from_millis(2_500));
    let answers = to_alice(&bot)
        .iter()
        .filter(|m| m["content"] == "Wrote out.md.")
        .count();
    assert_eq!(answers, 1);
    drop(served);
    assert_eq!(write_outcomes(&bot.env), 1);
    let audit = bot.env.audit_records();
    assert!(
        audit.iter().any(|r| r["tool"] == "conversation.message"
            && r["principal"] == "wecom://assistant/bob"
            && r["outcome"] == "forbidden"),
        "the stranger's message is not audited as refused"
    );
    let log = std::fs::read_to_string(&bot.log).unwrap_or_default();
    for secret in [WECOM_SECRET, WECOM_TOKEN, WECOM_AES_KEY] {
        assert!(!log.contains(secret), "a secret reached the log");
    }
    assert_no_secret(&bot.log);
}

/// `toolgate doctor` checks each bot: the WeCom Secret accepted by `gettoken` (or the
/// answer that refuses it), the Telegram token by `getMe` and its webhook.
#[test]
fn doctor_checks_each_bot() {
    let bot = Bot::wecom(Vec::new());
    let doctor = |secret: &str| {
        let run = Run::from_output(
            bot.env
                .command()
                .env("WECOM_SECRET", secret)
                .env("WECOM_TOKEN", WECOM_TOKEN)
                .env("WECOM_AES_KEY", WECOM_AES_KEY)
                .args(["doctor", "--json"])
                .output()
                .expect("doctor"),
        );
        run.json()["checks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["name"].as_str().unwrap().starts_with("bots:"))
            .map(|c| {
                format!(
                    "{} {} {}",
                    c["status"].as_str().unwrap(),
                    c["name"].as_str().unwrap(),
                    c["detail"].as_str().unwrap()
                )
            })
            .collect::<Vec<_>>()
    };
    let good = doctor(WECOM_SECRET);
    assert_eq!(good.len(), 1, "{good:?}");
    assert!(
        good[0].starts_with("ok bots: wecom:assistant secret accepted"),
        "{good:?}"
    );
    let bad = doctor("wrong-secret");
    assert!(
        bad[0].starts_with("fail bots: wecom:assistant") && bad[0].contains("40001"),
        "{bad:?}"
    );
    let tg = Bot::new(Vec::new());
    let run = Run::from_output(
        tg.env
            .command()
            .env("TG_TOKEN", TG_TOKEN)
            .args(["doctor", "--json"])
            .output()
            .expect("doctor"),
    );
    let line = run.json()["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "bots: telegram:assistant")
        .cloned()
        .unwrap_or_default();
    assert_eq!(line["status"], "ok", "{line}");
    assert!(
        line["detail"]
            .as_str()
            .unwrap()
            .contains("@toolgate_test_bot"),
        "{line}"
    );
}
