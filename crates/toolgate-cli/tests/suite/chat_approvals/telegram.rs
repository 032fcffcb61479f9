//! Telegram: taps, the typed name, paging and expiry, webhook mode.

use super::*;

/// A request is announced once with the console's preview; strangers' and non-operators'
/// taps are refused and audited; an operator's tap approves it, the waiting call resumes,
/// the card says who decided where, and the decision records the principal and channel.
#[test]
fn a_telegram_tap_approves_and_the_waiting_call_resumes() {
    let fake = Fake::telegram();
    let env = Env::with_config(&telegram_config(&fake));
    let log = env.root().join("serve.log");
    let _served = serve(&env, &log);
    let call = waiting_call(
        &env,
        "write_file",
        &json!({"path": "w.txt", "content": "from chat"}),
    );
    let id = pending_id(&env);
    let card = fake.messages_when("the card", |m| !m.is_empty())[0].clone();
    let text = card["text"].as_str().unwrap();
    for expected in ["write_file", &id, "\"from chat\"", "Caller: cli:tester"] {
        assert!(text.contains(expected), "{expected} not in {text}");
    }
    let buttons: Vec<&str> = card["reply_markup"]["inline_keyboard"][0]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["callback_data"].as_str().unwrap())
        .collect();
    let approve = format!("a.once.{id}");
    assert_eq!(
        buttons,
        [
            approve.as_str(),
            &format!("a.session.{id}"),
            &format!("a.always.{id}"),
            &format!("d.{id}")
        ]
    );

    for (who, reason) in [
        (STRANGER, "not mapped to a toolgate operator"),
        (MALLORY, "mallory does not hold the operator right"),
    ] {
        let q = tap(&fake, &card, who, &approve);
        let answer = answer_to(&fake, &q);
        assert!(
            answer.starts_with("Not allowed") && answer.contains(reason),
            "{answer}"
        );
    }
    assert_eq!(show(&env, &id)["status"], "pending");
    // A reply that is not the tool's name approves nothing, even from an operator.
    fake.post(
        "/_test/reply",
        &json!({"chat_id": CHAT.parse::<i64>().unwrap(), "reply_to_message_id": card["message_id"],
                "from_id": ALICE, "text": "no"}),
    );
    fake.messages_when("the answer to the reply", |m| {
        m.iter().any(|x| {
            x["text"]
                .as_str()
                .is_some_and(|t| t.starts_with("`no` is not `write_file`: a reply approves only"))
        })
    });
    assert_eq!(show(&env, &id)["status"], "pending");

    let q = tap(&fake, &card, ALICE, &approve);
    assert!(answer_to(&fake, &q).starts_with("✅ Approved once by alice via telegram:oncall"));
    let run = finished(call);
    run.assert_code(0);
    assert_eq!(env.read("w.txt"), "from chat");
    let decided = show(&env, &id);
    assert_eq!(
        (&decided["decided_by"], &decided["decided_via"]),
        (&json!("alice"), &json!("telegram:oncall"))
    );
    let card = fake.messages_when("the card closed", |m| {
        m[0]["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("✅ Approved once by alice via telegram:oncall"))
    })[0]
        .clone();
    assert!(card["reply_markup"].is_null(), "no buttons left: {card}");
    assert_eq!(
        fake.messages()
            .iter()
            .filter(|m| m["reply_markup"].is_object()
                || m["edits"].as_array().is_some_and(|e| !e.is_empty()))
            .count(),
        1,
        "announced exactly once (the other message is the answer to the reply)"
    );

    let records = chat_records(&env, "telegram:oncall");
    let outcomes: Vec<(&str, &str)> = records
        .iter()
        .map(|r| {
            (
                r["principal"].as_str().unwrap(),
                r["outcome"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        outcomes,
        [
            ("telegram:99", "forbidden"),
            ("mallory", "forbidden"),
            ("alice", "invalid_arguments"),
            ("alice", "ok")
        ]
    );
    assert_eq!(records[3]["approval_id"], json!(id));
    assert_eq!(records[3]["approver"], "alice");
    assert_eq!(
        records[3]["arguments"]["chat_user"],
        json!(ALICE.to_string())
    );

    let checked = validate_with_sdks(Some(&fake), None);
    assert!(
        checked["telegram_messages"].as_u64() >= Some(1),
        "{checked}"
    );
    assert_no_secret(&log);
}

/// A dangerous tool is never approved by a tap: only a reply with its exact name does.
#[test]
fn a_dangerous_tool_needs_the_typed_name_in_telegram() {
    let fake = Fake::telegram();
    let env = Env::with_config(&telegram_config(&fake));
    let log = env.root().join("serve.log");
    let _served = serve(&env, &log);
    let call = waiting_call(&env, "shell", &json!({"command": "echo typed > t.txt"}));
    let id = pending_id(&env);
    let card = fake.messages_when("the card", |m| !m.is_empty())[0].clone();
    assert!(
        card["text"]
            .as_str()
            .unwrap()
            .contains("Reply to this message with `shell`")
    );

    let q = tap(&fake, &card, ALICE, &format!("a.once.{id}"));
    let answer = answer_to(&fake, &q);
    assert!(answer.contains("a tap does not approve it"), "{answer}");
    assert_eq!(show(&env, &id)["status"], "pending");

    let reply = |text: &str| {
        fake.post(
            "/_test/reply",
            &json!({"chat_id": CHAT.parse::<i64>().unwrap(), "reply_to_message_id": card["message_id"],
                    "from_id": ALICE, "text": text}),
        )
    };
    reply("shel");
    let refused = fake.messages_when("the refusal", |m| {
        m.iter().any(|x| {
            x["text"]
                .as_str()
                .is_some_and(|t| t.contains("`shel` is not `shell`"))
        })
    });
    assert!(!refused.is_empty());
    assert_eq!(show(&env, &id)["status"], "pending");
    reply("shell");
    let run = finished(call);
    run.assert_code(0);
    assert_eq!(env.read("t.txt").trim(), "typed");
    assert_eq!(show(&env, &id)["decided_via"], "telegram:oncall");
    assert_no_secret(&log);
}

/// A long request is paged (anyone in the chat may page; nothing is decided by it), its
/// secrets are redacted on the card, and once it expires the card says so; a tap on the
/// expired card answers how it ended.
#[test]
fn long_requests_are_paged_redacted_and_expiry_updates_the_card() {
    let fake = Fake::telegram();
    let config = telegram_config(&fake).replace("wait = true", "wait = false\nttl_secs = 3");
    let env = Env::with_config(&config);
    let log = env.root().join("serve.log");
    let _served = serve(&env, &log);
    let secret = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB";
    let content: String =
        (0..300).map(|i| format!("line {i}\n")).collect::<String>() + &format!("token {secret}\n");
    let run = env.call(
        "write_file",
        &json!({"path": "long.txt", "content": content}),
    );
    assert_eq!(run.envelope()["error"]["code"], "approval_required");
    let id = pending_id(&env);
    let card = fake.messages_when("the card", |m| !m.is_empty())[0].clone();
    let text = card["text"].as_str().unwrap();
    assert!(text.contains("(page 1 of 2)"), "{text}");
    let rows = card["reply_markup"]["inline_keyboard"].as_array().unwrap();
    assert_eq!(rows[1][0]["callback_data"], json!(format!("p.1.{id}")));
    tap(&fake, &card, STRANGER, &format!("p.1.{id}"));
    let paged = fake.messages_when("page 2", |m| {
        m[0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("(page 2 of 2)"))
    })[0]
        .clone();
    let page2 = paged["text"].as_str().unwrap();
    assert!(
        page2.contains("line 299") && page2.contains("[REDACTED]"),
        "{page2}"
    );
    for m in fake.messages() {
        assert!(
            !m.to_string().contains(secret),
            "a secret reached the chat: {m}"
        );
    }
    assert_eq!(
        show(&env, &id)["status"],
        "pending",
        "paging decides nothing"
    );

    let expired = fake.messages_when("the card expired", |m| {
        m[0]["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("⌛ Expired"))
    })[0]
        .clone();
    assert!(expired["reply_markup"].is_null());
    let q = tap_stale(&fake, &card, ALICE, &format!("a.once.{id}"));
    let answer = answer_to(&fake, &q);
    assert!(
        answer.starts_with("Already decided: ⌛ Expired"),
        "{answer}"
    );
    assert_eq!(show(&env, &id)["status"], "expired");
    validate_with_sdks(Some(&fake), None);
}

/// Telegram in webhook mode: toolgate registers `<public_url>/hooks/telegram/<name>` with its
/// secret token at start; updates carrying the secret decide, anything else is refused.
#[test]
fn telegram_webhook_mode_takes_only_updates_with_the_secret() {
    let fake = Fake::telegram();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let config = telegram_config(&fake).replace(
        "token_env = \"TG_TOKEN\"",
        "token_env = \"TG_TOKEN\"\nupdates = \"webhook\"\nwebhook_secret_env = \"TG_WEBHOOK_SECRET\"",
    ) + &format!("\n[server]\npublic_url = \"http://127.0.0.1:{port}\"\n");
    let env = Env::with_config(&config);
    let log = env.root().join("serve.log");
    let served = serve_on(&env, &log, &format!("127.0.0.1:{port}"));
    let hook = format!("http://127.0.0.1:{port}/hooks/telegram/oncall");
    wait_for("the webhook registered", || {
        (fake.get(&format!("/bot{TG_TOKEN}/getWebhookInfo"))["result"]["url"] == json!(hook))
            .then_some(())
    });
    let call = waiting_call(
        &env,
        "write_file",
        &json!({"path": "h.txt", "content": "hooked"}),
    );
    let id = pending_id(&env);
    let card = fake.messages_when("the card", |m| !m.is_empty())[0].clone();

    let update = json!({"update_id": 1, "callback_query": {
        "id": "forged", "from": {"id": ALICE, "is_bot": false, "first_name": "A"},
        "message": {"message_id": card["message_id"], "date": 0, "chat": {"id": CHAT.parse::<i64>().unwrap(), "type": "group"}},
        "chat_instance": "x", "data": format!("a.once.{id}")}});
    for secret in [None, Some("guess")] {
        let headers: Vec<(&str, &str)> = secret
            .map(|s| vec![("X-Telegram-Bot-Api-Secret-Token", s)])
            .unwrap_or_default();
        let answer = super::super::harness::http_with(
            &served.addr,
            "POST",
            "/hooks/telegram/oncall",
            &headers,
            Some(&update),
        );
        assert_eq!(answer.status, 401, "{}", answer.text);
    }
    assert_eq!(show(&env, &id)["status"], "pending");

    let q = tap(&fake, &card, ALICE, &format!("a.once.{id}"));
    assert!(answer_to(&fake, &q).starts_with("✅ Approved once by alice"));
    finished(call).assert_code(0);
    assert_eq!(env.read("h.txt"), "hooked");
    let delivered = fake.get("/_test/deliveries");
    assert!(
        delivered
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["status"] == 200),
        "{delivered}"
    );
    assert_no_secret(&log);
}

/// The pending requests' ids, once there are `n`.
fn pending_ids(env: &Env, n: usize) -> Vec<String> {
    wait_for("the approval requests", || {
        let listed = env.run(&["approvals", "list", "--json"]).json();
        let ids: Vec<String> = listed
            .as_array()?
            .iter()
            .filter_map(|r| r["id"].as_str().map(str::to_owned))
            .collect();
        (ids.len() >= n).then_some(ids)
    })
}

/// Issue 30 (attack 3): a tap acts on the request its card announced, never on the id in the
/// button's data. Forged data naming a `shell` call that no channel shows (deny, approve,
/// page) is refused and audited; neither request is decided and the tapped card is not
/// rewritten. The genuine button then still decides its own request.
#[test]
fn forged_button_data_naming_another_request_is_refused() {
    let fake = Fake::telegram();
    let config = telegram_config(&fake).replace(
        "[approvals.channels.operators]",
        "tools = [\"write_file\"]\n[approvals.channels.operators]",
    );
    let env = Env::with_config(&config);
    let log = env.root().join("serve.log");
    let _served = serve(&env, &log);
    let mut shell = waiting_call(&env, "shell", &json!({"command": "echo forged > f.txt"}));
    let shell_id = pending_ids(&env, 1).remove(0);
    let write = waiting_call(
        &env,
        "write_file",
        &json!({"path": "w.txt", "content": "genuine"}),
    );
    let write_id = pending_ids(&env, 2)
        .into_iter()
        .find(|id| *id != shell_id)
        .unwrap();
    let card = fake.messages_when("the write_file card", |m| !m.is_empty())[0].clone();
    assert!(card["text"].as_str().unwrap().contains(&write_id), "{card}");

    let forged = [
        format!("d.{shell_id}"),
        format!("a.once.{shell_id}"),
        format!("a.always.{shell_id}"),
        format!("p.1.{shell_id}"),
    ];
    for data in &forged {
        let q = tap_stale(&fake, &card, ALICE, data);
        let answer = answer_to(&fake, &q);
        assert!(
            answer.starts_with("Not allowed") && answer.contains(&shell_id),
            "{data}: {answer}"
        );
    }
    assert_eq!(show(&env, &shell_id)["status"], "pending");
    assert_eq!(show(&env, &write_id)["status"], "pending");
    let now = &fake.messages()[0];
    assert_eq!(now["text"], card["text"], "the tapped card was rewritten");
    assert!(
        now["edits"].as_array().is_none_or(Vec::is_empty),
        "the tapped card was edited: {now}"
    );
    let records = chat_records(&env, "telegram:oncall");
    assert_eq!(records.len(), forged.len(), "{records:?}");
    for r in &records {
        assert_eq!(
            (&r["principal"], &r["outcome"], &r["approval_id"]),
            (&json!("alice"), &json!("forbidden"), &json!(write_id))
        );
        assert_eq!(r["arguments"]["button_approval_id"], json!(shell_id));
    }

    let q = tap(&fake, &card, ALICE, &format!("a.once.{write_id}"));
    assert!(answer_to(&fake, &q).starts_with("✅ Approved once by alice"));
    finished(write).assert_code(0);
    assert_eq!(env.read("w.txt"), "genuine");
    assert_eq!(show(&env, &shell_id)["status"], "pending");
    assert!(!env.root().join("f.txt").exists());
    let _ = shell.kill();
    let _ = shell.wait();
}
