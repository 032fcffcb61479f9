//! The agent in chat apps (`[[bots]]`), end to end: `toolgate serve` with the scripted model
//! behind `[model]` and the fakes of Telegram's Bot API (checked by python-telegram-bot),
//! Slack's Web and Events APIs (slack_sdk) and WeCom's API and callbacks (wechatpy). For each:
//! a user's message → a write that needs approval → the card in the same conversation →
//! approved there by its user → the tool runs once → the answer arrives once; an unmapped
//! user refused and audited; a dangerous tool refused on a tap and approved by its typed name.
//! This file holds the fixture; the tests are in `telegram`, `slack`, `wecom`.

use toolgate_agent::fake::{FakeServer, Reply};

use super::*;

mod cluster;
mod slack;
mod telegram;
mod wecom;

pub(super) const KEY_VAR: &str = "TOOLGATE_TEST_MODEL_KEY";
/// alice's private chat with the bot (a private chat's id is its user's).
pub(super) const ALICE_CHAT: i64 = ALICE;
pub(super) const STRANGER_CHAT: i64 = STRANGER;
pub(super) const WECOM_CORP: &str = "ww0123456789abcdef";
pub(super) const WECOM_SECRET: &str = "wecom-app-secret-do-not-log";
pub(super) const WECOM_TOKEN: &str = "wecomCallbackTokenDoNotLog";
/// 43 characters of base64, as WeCom shows an EncodingAESKey.
pub(super) const WECOM_AES_KEY: &str = "jWmYm7qr5nMoAUwZRjGtBxmz3KA1tkAj3ykkR6q2B2C";

pub(super) struct Bot {
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
    pub(super) fn new(script: Vec<Reply>) -> Bot {
        Bot::telegram_with(script, "", "")
    }

    /// A Telegram bot with `more` in its table and `extra` configuration after it.
    pub(super) fn telegram_with(script: Vec<Reply>, more: &str, extra: &str) -> Bot {
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
             api_url = \"http://{addr}\"\n{more}\n[bots.users]\n\"{ALICE}\" = \"alice\"\n{extra}\n",
            addr = fake.addr
        );
        Bot::with(script, fake, &bot)
    }

    /// A Slack bot: alice is `U0ALICE`; the fake knows channel `C0OPS` and alice's DM.
    pub(super) fn slack(script: Vec<Reply>) -> Bot {
        Bot::slack_with(script, "")
    }

    /// A Slack bot with `extra` configuration (a shared store).
    pub(super) fn slack_with(script: Vec<Reply>, extra: &str) -> Bot {
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
             [bots.users]\n\"U0ALICE\" = \"alice\"\n{extra}\n",
            addr = fake.addr
        );
        Bot::with(script, fake, &bot)
    }

    /// A WeCom application: alice is the member `alice`; `bob` is a member nobody mapped.
    pub(super) fn wecom(script: Vec<Reply>) -> Bot {
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

    pub(super) fn with(script: Vec<Reply>, fake: Fake, bot: &str) -> Bot {
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

[limits]
reservation_lease_secs = 3

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

    pub(super) fn serve(&self) -> Served {
        self.serve_at(&self.env.data)
    }

    /// `toolgate serve` on `listen` (a port the configuration names).
    pub(super) fn serve_on(&self, listen: &str) -> Served {
        self.serve_as(&self.env.data, listen)
    }

    /// `toolgate serve` with its own data dir `data` (a replica, when the store is shared).
    pub(super) fn serve_at(&self, data: &std::path::Path) -> Served {
        self.serve_as(data, "127.0.0.1:0")
    }

    fn serve_as(&self, data: &std::path::Path, listen: &str) -> Served {
        let stderr = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .unwrap();
        let mut child = self
            .env
            .command_for(data)
            .env("TG_TOKEN", TG_TOKEN)
            .env("SLACK_TOKEN", SLACK_TOKEN)
            .env("SLACK_SIGNING_SECRET", SLACK_SECRET)
            .env("WECOM_SECRET", WECOM_SECRET)
            .env("WECOM_TOKEN", WECOM_TOKEN)
            .env("WECOM_AES_KEY", WECOM_AES_KEY)
            .env(KEY_VAR, "sk-test-model-key")
            .env("TOOLGATE_LOG", "info")
            .env("TG_WEBHOOK_SECRET", TG_WEBHOOK_SECRET)
            .args(["serve", "--listen", listen])
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("spawn toolgate serve");
        let addr = serving_address(&mut child);
        Served { child, addr }
    }

    pub(super) fn say(&self, chat: i64, from: i64, text: &str) -> Value {
        self.fake.post(
            "/_test/say",
            &json!({"chat_id": chat, "from_id": from, "text": text}),
        )
    }

    /// The bot's messages in `chat`.
    pub(super) fn sent_in(&self, chat: i64) -> Vec<Value> {
        self.fake
            .messages()
            .into_iter()
            .filter(|m| m["chat_id"] == chat && m["message"]["from"]["is_bot"] == true)
            .collect()
    }

    pub(super) fn sent_when(
        &self,
        chat: i64,
        what: &str,
        ready: impl Fn(&[Value]) -> bool,
    ) -> Vec<Value> {
        wait_for(what, || {
            let m = self.sent_in(chat);
            ready(&m).then_some(m)
        })
    }

    pub(super) fn card(&self, chat: i64) -> Value {
        self.sent_when(chat, "the approval card", |m| {
            m.iter().any(|x| !x["reply_markup"].is_null())
        })
        .into_iter()
        .find(|x| !x["reply_markup"].is_null())
        .unwrap()
    }

    pub(super) fn tap(&self, chat: i64, card: &Value, from: i64, data: &str) -> String {
        let q = self.fake.post(
            "/_test/tap",
            &json!({"chat_id": chat, "message_id": card["message_id"], "from_id": from,
                    "data": data}),
        );
        answer_to(&self.fake, &q)
    }
}

pub(super) fn texts(messages: &[Value]) -> Vec<String> {
    messages
        .iter()
        .filter(|m| m["deleted"] != true)
        .map(|m| m["text"].as_str().unwrap_or_default().to_owned())
        .collect()
}

pub(super) fn write_outcomes(env: &Env) -> usize {
    env.audit_records()
        .iter()
        .filter(|r| {
            r["tool"] == "write_file"
                && r["outcome"] == "ok"
                && !r["source"].as_str().unwrap_or("").starts_with("approvals")
        })
        .count()
}

pub(super) fn card_data(card: &Value, n: usize) -> String {
    card["reply_markup"]["inline_keyboard"][0][n]["callback_data"]
        .as_str()
        .unwrap()
        .to_owned()
}
