//! [`Bots`]: every `[[bots]]` entry, how each hears from its service (long polling or a
//! webhook on `toolgate serve`), and the loop that hands each conversation's journal to its
//! chat (`deliver`).

use std::collections::HashSet;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;
use toolgate_channels::UpdateMode;
use toolgate_channels::secret::Secret;
use toolgate_channels::slack::SlackApi;
use toolgate_channels::slack::verify::Verifier;
use toolgate_channels::telegram::TelegramApi;
use toolgate_conversations::Conversations;
use toolgate_net::EgressPolicy;
use toolgate_store::{ChatPosts, Clock, millis};

use crate::config::{BotConfig, BotKind, check_all};
use crate::directory::Directory;
use crate::incoming::Incoming;
use crate::outbound::Outbound;
use crate::telegram::inbound::{Me, incoming};
use crate::wecom::api::WecomApi;
use crate::wecom::crypto::WecomCrypto;

/// The delivery loop's pace when nothing happens here (another replica's turns, decisions
/// taken elsewhere, retries).
pub const PASS_EVERY: Duration = Duration::from_secs(2);
/// How long a claimed message may stay unsent before another process sends it.
pub const LEASE: Duration = Duration::from_secs(30);
/// A refused chat user is told so at most this often.
pub const REFUSAL_EVERY: Duration = Duration::from_secs(60);
/// Conversations looked at per pass and bot.
const PASS_WINDOW: usize = 64;
/// Sent messages' records are kept this long (a tap on an older card is not recognised).
pub(crate) const KEEP_SENT: Duration = Duration::from_secs(7 * 24 * 3600);

/// Why the bots cannot start.
#[derive(Debug, thiserror::Error)]
pub enum BotsError {
    #[error("[[bots]] `{0}`: {1}")]
    Bot(String, String),
}

/// What the bots need from the running system.
pub struct BotsDeps {
    pub conversations: Conversations,
    /// The record of what was sent where (shared with the approval channels' cards).
    pub posts: ChatPosts,
    pub directory: Arc<dyn Directory>,
    pub egress: EgressPolicy,
    /// `[server] public_url` (webhooks are registered under it).
    pub public_url: Option<String>,
    /// The wall clock leases and pauses are measured on (the one `posts` reads).
    pub clock: Clock,
}

/// How a bot hears from its service.
pub(crate) enum Inbound {
    TelegramPolling(TelegramApi),
    TelegramWebhook {
        api: TelegramApi,
        secret: Secret,
    },
    /// Events and interactions POSTed to the hook, signed with the app's signing secret.
    Slack {
        api: SlackApi,
        verifier: Box<Verifier>,
    },
    /// Callbacks POSTed to the hook, signed and encrypted with the callback Token and
    /// EncodingAESKey.
    Wecom {
        api: Arc<WecomApi>,
        crypto: Box<WecomCrypto>,
    },
}

/// One bot.
pub(crate) struct Bot {
    pub(crate) config: BotConfig,
    /// `telegram:<name>`, `slack:<name>`: the conversations' entry and the sent messages'
    /// channel.
    pub(crate) entry: String,
    pub(crate) out: Arc<dyn Outbound>,
    pub(crate) inbound: Inbound,
    /// Who the bot is (Telegram's `getMe`, Slack's `auth.test`), once the service answered.
    pub(crate) me: OnceLock<Me>,
    /// Nothing is sent before this (ms): the service asked to slow down.
    paused_until: Mutex<u64>,
}

/// The bots of one process.
pub struct Bots {
    pub(crate) bots: Vec<Bot>,
    pub(crate) conversations: Conversations,
    pub(crate) posts: ChatPosts,
    pub(crate) directory: Arc<dyn Directory>,
    public_url: Option<String>,
    clock: Clock,
    /// Conversations this process is sending now (one sender per conversation here).
    pub(crate) sending: Mutex<HashSet<String>>,
    /// Conversations whose live events this process relays (the answer as it is written).
    pub(crate) watching: Mutex<HashSet<String>>,
    /// When each refused chat user was last told so (ms): a flood of refused messages is
    /// audited message by message but answered once per [`REFUSAL_EVERY`].
    pub(crate) refused: Mutex<std::collections::HashMap<(usize, String), u64>>,
    pub(crate) stop: CancellationToken,
}

impl std::fmt::Debug for Bots {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bots")
            .field(
                "bots",
                &self.bots.iter().map(|b| &b.entry).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl Bots {
    /// Builds every bot: secrets from the environment (a missing one is an error naming its
    /// variable), API URLs checked against `[egress]`.
    pub fn new(configs: &[BotConfig], deps: BotsDeps) -> Result<Arc<Bots>, BotsError> {
        check_all(configs).map_err(|e| BotsError::Bot(e.bot.clone(), e.problem))?;
        let client = toolgate_channels::approval_channels::client(&deps.egress)
            .map_err(|e| BotsError::Bot("*".into(), e.to_string()))?;
        let mut bots = Vec::new();
        for config in configs {
            let fail = |problem: String| BotsError::Bot(config.name.clone(), problem);
            let api_url = url::Url::parse(&config.api_base()).map_err(|e| fail(e.to_string()))?;
            toolgate_net::check_url(&deps.egress, &api_url).map_err(|e| {
                fail(format!(
                    "api_url {}: refused by [egress]: {e}",
                    config.api_base()
                ))
            })?;
            let token = Secret::from_env(&config.name, &config.token_env, "the bot token")
                .map_err(|e| fail(e.to_string()))?;
            let (out, inbound): (Arc<dyn Outbound>, Inbound) = match (config.kind, config.updates) {
                (BotKind::Slack, _) => {
                    let secret = Secret::from_env(
                        &config.name,
                        config.signing_secret_env.as_deref().unwrap_or_default(),
                        "the signing secret",
                    )
                    .map_err(|e| fail(e.to_string()))?;
                    let api = SlackApi::new(client.clone(), config.api_base(), token);
                    (
                        Arc::new(api.clone()),
                        Inbound::Slack {
                            api,
                            verifier: Box::new(Verifier::new(&secret)),
                        },
                    )
                }
                (BotKind::Wecom, _) => {
                    let secret = |var: &Option<String>, what| {
                        Secret::from_env(&config.name, var.as_deref().unwrap_or_default(), what)
                            .map_err(|e| fail(e.to_string()))
                    };
                    let callback = secret(&config.callback_token_env, "the callback Token")?;
                    let aes = secret(&config.encoding_aes_key_env, "the EncodingAESKey")?;
                    let corp = config.corp_id.clone().unwrap_or_default();
                    let crypto = WecomCrypto::new(callback.expose(), aes.expose(), &corp)
                        .map_err(|e| fail(format!("encoding_aes_key_env: {e}")))?;
                    let api = Arc::new(WecomApi::new(
                        client.clone(),
                        config.api_base(),
                        corp,
                        config.agent_id.unwrap_or_default(),
                        token,
                    ));
                    (
                        Arc::clone(&api) as Arc<dyn Outbound>,
                        Inbound::Wecom {
                            api,
                            crypto: Box::new(crypto),
                        },
                    )
                }
                (BotKind::Telegram, UpdateMode::Polling) => {
                    let api = TelegramApi::new(client.clone(), config.api_base(), token);
                    (Arc::new(api.clone()), Inbound::TelegramPolling(api))
                }
                (BotKind::Telegram, UpdateMode::Webhook) => {
                    if deps.public_url.is_none() {
                        return Err(fail(
                            "updates = \"webhook\" needs [server] public_url (the address \
                             Telegram posts updates to)"
                                .into(),
                        ));
                    }
                    let secret = Secret::from_env(
                        &config.name,
                        config.webhook_secret_env.as_deref().unwrap_or_default(),
                        "the webhook secret token",
                    )
                    .map_err(|e| fail(e.to_string()))?;
                    let api = TelegramApi::new(client.clone(), config.api_base(), token);
                    (
                        Arc::new(api.clone()),
                        Inbound::TelegramWebhook { api, secret },
                    )
                }
            };
            bots.push(Bot {
                entry: config.entry(),
                out,
                inbound,
                config: config.clone(),
                me: OnceLock::new(),
                paused_until: Mutex::new(0),
            });
        }
        Ok(Arc::new(Bots {
            bots,
            conversations: deps.conversations,
            posts: deps.posts,
            directory: deps.directory,
            public_url: deps.public_url,
            clock: deps.clock,
            sending: Mutex::new(HashSet::new()),
            watching: Mutex::new(HashSet::new()),
            refused: Mutex::new(std::collections::HashMap::new()),
            stop: CancellationToken::new(),
        }))
    }

    /// Starts each bot's listener and the delivery loop; everything stops with `shutdown`.
    pub fn start(self: &Arc<Self>, shutdown: &CancellationToken) {
        {
            let stop = self.stop.clone();
            let shutdown = shutdown.clone();
            tokio::spawn(async move {
                shutdown.cancelled().await;
                stop.cancel();
            });
        }
        let hub = Arc::clone(self);
        tokio::spawn(async move { hub.run().await });
        for index in 0..self.bots.len() {
            let hub = Arc::clone(self);
            tokio::spawn(async move { hub.listen(index).await });
        }
    }

    /// Learns who the bot is, then hears from its service until shutdown.
    async fn listen(self: Arc<Self>, index: usize) {
        let bot = &self.bots[index];
        let mut pause = Duration::from_secs(1);
        while bot.me.get().is_none() {
            let asked = match &bot.inbound {
                Inbound::TelegramPolling(api) | Inbound::TelegramWebhook { api, .. } => {
                    api.call("getMe", serde_json::json!({})).await.map(|me| Me {
                        id: me["id"].as_i64().unwrap_or_default(),
                        username: me["username"].as_str().unwrap_or_default().to_owned(),
                    })
                }
                Inbound::Slack { api, .. } => api
                    .call("auth.test", serde_json::json!({}))
                    .await
                    .map(|me| Me {
                        id: 0,
                        username: me["user_id"].as_str().unwrap_or_default().to_owned(),
                    }),
                Inbound::Wecom { api, .. } => api.whoami().await.map(|me| Me {
                    id: 0,
                    username: me,
                }),
            };
            match asked {
                Ok(me) => {
                    tracing::info!(bot = %bot.entry, username = %me.username, "bot: talking to the agent");
                    let _ = bot.me.set(me);
                }
                Err(e) => {
                    tracing::warn!(bot = %bot.entry, "bot: the service does not know the bot yet, retrying in {pause:?}: {e}");
                    tokio::select! {
                        () = self.stop.cancelled() => return,
                        () = tokio::time::sleep(pause) => {}
                    }
                    pause = (pause * 2).min(Duration::from_secs(30));
                }
            }
        }
        match &bot.inbound {
            Inbound::TelegramPolling(api) => {
                let hub = Arc::clone(&self);
                toolgate_channels::telegram::poll::run(
                    api.clone(),
                    bot.entry.clone(),
                    move |update| {
                        let hub = Arc::clone(&hub);
                        async move { hub.on_update(index, update).await }
                    },
                    self.stop.clone(),
                )
                .await;
            }
            Inbound::TelegramWebhook { api, secret } => {
                let url = format!(
                    "{}/hooks/bots/telegram/{}",
                    self.public_url
                        .as_deref()
                        .unwrap_or_default()
                        .trim_end_matches('/'),
                    bot.config.name
                );
                while let Err(e) = api.set_webhook(&url, secret).await {
                    tracing::error!(bot = %bot.entry, "telegram: registering the webhook {url} failed, retrying in 30 s: {e}");
                    tokio::select! {
                        () = self.stop.cancelled() => return,
                        () = tokio::time::sleep(Duration::from_secs(30)) => {}
                    }
                }
            }
            // Slack and WeCom post to the hook.
            Inbound::Slack { .. } | Inbound::Wecom { .. } => {}
        }
    }

    /// One update from bot `index`'s service.
    pub(crate) async fn on_update(self: &Arc<Self>, index: usize, update: Value) {
        let bot = &self.bots[index];
        match incoming(&update, bot.me.get()) {
            Some(Incoming::Message(message)) => self.on_message(index, message).await,
            Some(Incoming::Button(press)) => self.on_button(index, press).await,
            None => {}
        }
    }

    pub(crate) fn index(&self, kind: BotKind, name: &str) -> Option<usize> {
        self.bots
            .iter()
            .position(|b| b.config.kind == kind && b.config.name == name)
    }

    /// The delivery loop: every pass sends what each bot's conversations have not yet sent
    /// and refreshes cards decided elsewhere.
    async fn run(self: Arc<Self>) {
        let mut tick = tokio::time::interval(PASS_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut passes: u64 = 0;
        loop {
            tokio::select! {
                () = self.stop.cancelled() => return,
                _ = tick.tick() => {}
            }
            for index in 0..self.bots.len() {
                let entry = &self.bots[index].entry;
                match self.conversations.undelivered(entry, PASS_WINDOW).await {
                    Ok(ids) => {
                        for (id, _) in ids {
                            self.deliver(index, &id).await;
                        }
                    }
                    Err(e) => {
                        tracing::warn!(bot = %entry, "bots: reading the conversations failed: {e}")
                    }
                }
                self.refresh_cards(index).await;
            }
            passes += 1;
            if passes % 1800 == 1
                && let Err(e) = self.posts.prune(KEEP_SENT).await
            {
                tracing::warn!("bots: pruning old sent messages failed: {e}");
            }
        }
    }

    pub(crate) fn now_ms(&self) -> u64 {
        (self.clock)()
    }

    /// Whether refused `user` of bot `index` is to be told now (and then not again before
    /// [`REFUSAL_EVERY`]).
    pub(crate) fn tell_refused(&self, index: usize, user: &str) -> bool {
        let now = self.now_ms();
        let every = millis(REFUSAL_EVERY);
        let mut refused = self.refused.lock().unwrap_or_else(PoisonError::into_inner);
        refused.retain(|_, at| now.saturating_sub(*at) < every);
        match refused.entry((index, user.to_owned())) {
            std::collections::hash_map::Entry::Occupied(_) => false,
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(now);
                true
            }
        }
    }

    /// When bot `index` may send again (ms), if it is paused now.
    pub(crate) fn paused(&self, index: usize) -> bool {
        let until = *self.bots[index]
            .paused_until
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        until > self.now_ms()
    }

    pub(crate) fn pause(&self, index: usize, secs: u64) {
        let until = self
            .now_ms()
            .saturating_add(millis(Duration::from_secs(secs.clamp(1, 3600))));
        *self.bots[index]
            .paused_until
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = until;
    }
}
