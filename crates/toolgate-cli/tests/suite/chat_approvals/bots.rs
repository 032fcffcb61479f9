//! The agent in Telegram (`[[bots]]`), end to end: `toolgate serve` with the scripted model
//! behind `[model]` and the fake Bot API (checked by python-telegram-bot). A user's message →
//! a write that needs approval → the card in the same chat → approved there by its user → the
//! tool runs once → the answer arrives once; an unmapped user is refused and audited; a
//! dangerous tool is refused on a tap and approved by its typed name; in a group the bot
//! answers only when mentioned.

use toolgate_agent::fake::{FakeServer, FakeTurn, Reply};

use super::super::harness::http_with;
use super::*;

const KEY_VAR: &str = "TOOLGATE_TEST_MODEL_KEY";
/// alice's private chat with the bot (a private chat's id is its user's).
const ALICE_CHAT: i64 = ALICE;
const STRANGER_CHAT: i64 = STRANGER;
const WECOM_CORP: &str = "ww0123456789abcdef";
const WECOM_SECRET: &str = "wecom-app-secret-do-not-log";
const WECOM_TOKEN: &str = "wecomCallbackTokenDoNotLog";
/// 43 characters of base64, as WeCom shows an EncodingAESKey.
const WECOM_AES_KEY: &str = "jWmYm7qr5nMoAUwZRjGtBxmz3KA1tkAj3ykkR6q2B2C";

struct Bot {
    _rt: tokio::runtime::Runtime,
    _model: FakeServer,
    fake: Fake,
    env: Env,
    log: std::path::PathBuf,
}

impl Drop for Bot {
    /// A failing test shows what the server logged.
    #[allow(clippy::print_stderr)]
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!(
                "--- toolgate serve's log ---\n{}",
                std::fs::read_to_string(&self.log).unwrap_or_default()
            );
        }
    }
}

impl Bot {
    fn new(script: Vec<Reply>) -> Bot {
        let fake = Fake::start(
            "fake_telegram.py",
            &[
                "--token",
                TG_TOKEN,
                "--chat",
                CHAT,
                "--chat",
                &ALICE_CHAT.to_string(),
                "--chat",
                &STRANGER_CHAT.to_string(),
            ],
        );
        let bot = format!(
            "[[bots]]\nname = \"assistant\"\nkind = \"telegram\"\ntoken_env = \"TG_TOKEN\"\n\
             api_url = \"http://{addr}\"\n[bots.users]\n\"{ALICE}\" = \"alice\"\n",
            addr = fake.addr
        );
        Bot::with(script, fake, &bot)
    }

    /// A Slack bot: alice is `U0ALICE`; the fake knows channel `C0OPS` and alice's DM.
    fn slack(script: Vec<Reply>) -> Bot {
        let fake = Fake::start(
            "fake_slack.py",
            &[
                "--token",
                SLACK_TOKEN,
                "--signing-secret",
                SLACK_SECRET,
                "--channel",
                &format!("{SLACK_CHAT}:ops"),
                "--channel",
                "D0ALICE:alice",
            ],
        );
        let bot = format!(
            "[[bots]]\nname = \"assistant\"\nkind = \"slack\"\ntoken_env = \"SLACK_TOKEN\"\n\
             signing_secret_env = \"SLACK_SIGNING_SECRET\"\napi_url = \"http://{addr}/api\"\n\
             [bots.users]\n\"U0ALICE\" = \"alice\"\n",
            addr = fake.addr
        );
        Bot::with(script, fake, &bot)
    }

    /// A WeCom application: alice is the member `alice`; `bob` is a member nobody mapped.
    fn wecom(script: Vec<Reply>) -> Bot {
        let fake = Fake::start(
            "fake_wecom.py",
            &[
                "--corp-id",
                WECOM_CORP,
                "--secret",
                WECOM_SECRET,
                "--agent-id",
                "1000002",
                "--token",
                WECOM_TOKEN,
                "--aes-key",
                WECOM_AES_KEY,
                "--user",
                "alice",
                "--user",
                "bob",
            ],
        );
        let bot = format!(
            "[[bots]]\nname = \"assistant\"\nkind = \"wecom\"\ntoken_env = \"WECOM_SECRET\"\n\
             corp_id = \"{WECOM_CORP}\"\nagent_id = 1000002\n\
             callback_token_env = \"WECOM_TOKEN\"\nencoding_aes_key_env = \"WECOM_AES_KEY\"\n\
             api_url = \"http://{addr}/cgi-bin\"\n[bots.users]\n\"alice\" = \"alice\"\n",
            addr = fake.addr
        );
        Bot::with(script, fake, &bot)
    }

    fn with(script: Vec<Reply>, fake: Fake, bot: &str) -> Bot {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let model = rt.block_on(FakeServer::start(script)).unwrap();
        let env = Env::with_config(&format!(
            r#"
[model]
provider = "openai-chat"
model = "fake-model"
base_url = "{model}"
api_key_env = "{KEY_VAR}"
retry_base_ms = 5

[conversations]
lease_secs = 3
sweep_secs = 1

[egress]
allow_hosts = ["127.0.0.1"]
allow_http = ["127.0.0.1"]

{bot}"#,
            model = model.base_url(),
        ));
        // alice talks with the role of her token.
        env.run(&[
            "token",
            "create",
            "--principal",
            "alice",
            "--role",
            "default",
        ])
        .assert_code(0);
        let log = env.root().join("serve.log");
        Bot {
            _rt: rt,
            _model: model,
            fake,
            env,
            log,
        }
    }

    fn serve(&self) -> Served {
        let stderr = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .unwrap();
        let mut child = self
            .env
            .command()
            .env("TG_TOKEN", TG_TOKEN)
            .env("SLACK_TOKEN", SLACK_TOKEN)
            .env("SLACK_SIGNING_SECRET", SLACK_SECRET)
            .env("WECOM_SECRET", WECOM_SECRET)
            .env("WECOM_TOKEN", WECOM_TOKEN)
            .env("WECOM_AES_KEY", WECOM_AES_KEY)
            .env(KEY_VAR, "sk-test-model-key")
            .env("TOOLGATE_LOG", "info")
            .args(["serve", "--listen", "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("spawn toolgate serve");
        let addr = serving_address(&mut child);
        Served { child, addr }
    }

    fn say(&self, chat: i64, from: i64, text: &str) -> Value {
        self.fake.post(
            "/_test/say",
            &json!({"chat_id": chat, "from_id": from, "text": text}),
        )
    }

    /// The bot's messages in `chat`.
    fn sent_in(&self, chat: i64) -> Vec<Value> {
        self.fake
            .messages()
            .into_iter()
            .filter(|m| m["chat_id"] == chat && m["message"]["from"]["is_bot"] == true)
            .collect()
    }

    fn sent_when(&self, chat: i64, what: &str, ready: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        wait_for(what, || {
            let m = self.sent_in(chat);
            ready(&m).then_some(m)
        })
    }

    fn card(&self, chat: i64) -> Value {
        self.sent_when(chat, "the approval card", |m| {
            m.iter().any(|x| !x["reply_markup"].is_null())
        })
        .into_iter()
        .find(|x| !x["reply_markup"].is_null())
        .unwrap()
    }

    fn tap(&self, chat: i64, card: &Value, from: i64, data: &str) -> String {
        let q = self.fake.post(
            "/_test/tap",
            &json!({"chat_id": chat, "message_id": card["message_id"], "from_id": from,
                    "data": data}),
        );
        answer_to(&self.fake, &q)
    }
}

fn texts(messages: &[Value]) -> Vec<String> {
    messages
        .iter()
        .filter(|m| m["deleted"] != true)
        .map(|m| m["text"].as_str().unwrap_or_default().to_owned())
        .collect()
}

fn write_outcomes(env: &Env) -> usize {
    env.audit_records()
        .iter()
        .filter(|r| {
            r["tool"] == "write_file"
                && r["outcome"] == "ok"
                && !r["source"].as_str().unwrap_or("").starts_with("approvals")
        })
        .count()
}

fn card_data(card: &Value, n: usize) -> String {
    card["reply_markup"]["inline_keyboard"][0][n]["callback_data"]
        .as_str()
        .unwrap()
        .to_owned()
}

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
            r["principal"] == "telegram:assistant:99"
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
            ("telegram:assistant:99".to_owned(), "forbidden".to_owned()),
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
    // The write a killed process had reserved continues once its reservation lapses (30 s).
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
            && r["principal"] == "wecom:assistant:bob"
            && r["outcome"] == "forbidden"),
        "the stranger's message is not audited as refused"
    );
    let log = std::fs::read_to_string(&bot.log).unwrap_or_default();
    for secret in [WECOM_SECRET, WECOM_TOKEN, WECOM_AES_KEY] {
        assert!(!log.contains(secret), "a secret reached the log");
    }
    assert_no_secret(&bot.log);
}
