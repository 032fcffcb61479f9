//! [`ApprovalChannels`]: every configured channel, one reconciling loop, and the entry points for what
//! the services send back (long polling, the Slack and Telegram hooks).
//!
//! # Exactly once
//! - **Announcing**: a card is posted for a (request, channel, chat) only by whoever wins
//!   [`ChatPosts::claim`] — one row per card in the shared store — so a restart, a second
//!   loop or another replica never posts it twice. A post that fails releases its claim
//!   and is tried again on the next pass; a poster that died mid-post leaves a claim that
//!   lapses after [`LEASE`].
//! - **Deciding**: [`ApprovalStore::decide`] decides a pending request once, whatever
//!   decides it (a tap here, the console, another replica); the loser is told who won.
//! - **Closing**: a card whose request is no longer pending is updated by whoever wins
//!   [`ChatPosts::close`] to say how it ended, and loses its buttons.
//!
//! The loop runs on every change of the approval store (with PostgreSQL, any replica's) and
//! every [`PASS_EVERY`], which also catches expiry and retries what failed.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use toolgate_gateway::approve::Decisions;
use toolgate_net::EgressPolicy;
use toolgate_store::approvals::{ApprovalRequest, ApprovalStatus};
use toolgate_store::{ApprovalStore, ChatPosts, Clock, StoreResult, millis};

use crate::card::{closed_card, open_card};
pub use crate::channel::client;
pub(crate) use crate::channel::{Channel, Inbound, service_of};
use crate::config::{ChannelConfig, UpdateMode};
pub use crate::error::ChannelsError;
use crate::operators::OperatorCheck;
use crate::select::Selector;
use crate::service::ServiceError;

/// How long an unfinished post's claim holds before another may post the card.
pub const LEASE: Duration = Duration::from_secs(30);
/// The loop's pace when nothing changes.
pub const PASS_EVERY: Duration = Duration::from_secs(2);
/// Requests looked at per pass (the newest pending ones).
const PENDING_WINDOW: usize = 500;
/// Closed cards are forgotten after this.
const KEEP_CLOSED: Duration = Duration::from_secs(7 * 24 * 3600);

/// What the hub needs from the running system.
pub struct ChannelsDeps {
    pub approvals: Arc<ApprovalStore>,
    pub posts: ChatPosts,
    /// Where taps decide (and refusals are recorded), as every front end decides.
    pub decisions: Arc<Decisions>,
    pub egress: EgressPolicy,
    pub operators: Arc<dyn OperatorCheck>,
    /// `[server] public_url` (Telegram webhooks are registered under it).
    pub public_url: Option<String>,
    /// The wall clock the leases and pauses are measured on (the one `posts` reads).
    pub clock: Clock,
}

pub struct ApprovalChannels {
    pub(crate) channels: Vec<Channel>,
    pub(crate) approvals: Arc<ApprovalStore>,
    pub(crate) posts: ChatPosts,
    pub(crate) decisions: Arc<Decisions>,
    pub(crate) operators: Arc<dyn OperatorCheck>,
    public_url: Option<String>,
    clock: Clock,
    wake: Notify,
    /// Cards known to be claimed (by anyone) recently, with when (ms): not claimed again
    /// until the lease could have lapsed.
    claimed: Mutex<HashMap<ClaimKey, u64>>,
    /// Channels the service asked to slow down: no card is posted there before this (ms).
    paused: Mutex<HashMap<usize, u64>>,
}

/// One card: (request, channel index, chat).
type ClaimKey = (String, usize, String);

impl std::fmt::Debug for ApprovalChannels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApprovalChannels")
            .field(
                "channels",
                &self.channels.iter().map(|c| &c.via).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl ApprovalChannels {
    /// Builds every channel: secrets from the environment (a missing one is an error naming
    /// its variable), API URLs checked against `[egress]`.
    pub fn new(
        configs: &[ChannelConfig],
        deps: ChannelsDeps,
    ) -> Result<Arc<ApprovalChannels>, ChannelsError> {
        crate::config::check_all(configs)
            .map_err(|e| ChannelsError::Channel(e.channel.clone(), e.problem))?;
        let client =
            client(&deps.egress).map_err(|e| ChannelsError::Channel("*".into(), e.to_string()))?;
        let mut channels = Vec::new();
        for config in configs {
            let api = url::Url::parse(&config.api_base())
                .map_err(|e| ChannelsError::Channel(config.name.clone(), e.to_string()))?;
            toolgate_net::check_url(&deps.egress, &api).map_err(|e| {
                ChannelsError::Channel(
                    config.name.clone(),
                    format!("api_url {}: refused by [egress]: {e}", config.api_base()),
                )
            })?;
            if config.updates == UpdateMode::Webhook && deps.public_url.is_none() {
                return Err(ChannelsError::Channel(
                    config.name.clone(),
                    "updates = \"webhook\" needs [server] public_url (the address Telegram \
                     posts updates to)"
                        .into(),
                ));
            }
            let (service, inbound) = service_of(config, client.clone())?;
            channels.push(Channel {
                via: config.via(),
                selector: Selector::new(config),
                config: config.clone(),
                service,
                inbound,
            });
        }
        Ok(ApprovalChannels::assemble(channels, deps))
    }

    /// The hub over channels already built.
    pub(crate) fn assemble(channels: Vec<Channel>, deps: ChannelsDeps) -> Arc<ApprovalChannels> {
        Arc::new(ApprovalChannels {
            channels,
            approvals: deps.approvals,
            posts: deps.posts,
            decisions: deps.decisions,
            operators: deps.operators,
            public_url: deps.public_url,
            clock: deps.clock,
            wake: Notify::new(),
            claimed: Mutex::new(HashMap::new()),
            paused: Mutex::new(HashMap::new()),
        })
    }

    /// Starts the loop and each channel's listener; everything stops with `shutdown`.
    pub fn start(self: &Arc<Self>, shutdown: &CancellationToken) {
        let hub = Arc::clone(self);
        let stop = shutdown.clone();
        tokio::spawn(async move { hub.run(stop).await });
        for (index, channel) in self.channels.iter().enumerate() {
            match &channel.inbound {
                Inbound::TelegramPolling(api) => {
                    let hub = Arc::clone(self);
                    let chats = channel.config.chats.clone();
                    tokio::spawn(crate::telegram::poll::run(
                        api.clone(),
                        channel.config.name.clone(),
                        move |update| {
                            let hub = Arc::clone(&hub);
                            let tap = crate::telegram::updates::tap_of(&update, &chats);
                            async move {
                                if let Some(tap) = tap {
                                    hub.on_tap(index, tap).await;
                                }
                            }
                        },
                        shutdown.clone(),
                    ));
                }
                Inbound::TelegramWebhook { api, secret } => {
                    let url = format!(
                        "{}/hooks/telegram/{}",
                        self.public_url
                            .as_deref()
                            .unwrap_or_default()
                            .trim_end_matches('/'),
                        channel.config.name
                    );
                    let (api, secret, name) =
                        (api.clone(), secret.clone(), channel.config.name.clone());
                    let stop = shutdown.clone();
                    tokio::spawn(async move {
                        // Until Telegram accepts it: without it no tap reaches this server.
                        while let Err(e) = api.set_webhook(&url, &secret).await {
                            tracing::error!(channel = %name, "telegram: registering the webhook {url} failed, retrying in 30 s: {e}");
                            tokio::select! {
                                () = stop.cancelled() => return,
                                () = tokio::time::sleep(Duration::from_secs(30)) => {}
                            }
                        }
                    });
                }
                Inbound::Slack(_) => {}
            }
        }
    }

    /// Runs a pass soon (something changed).
    pub fn wake(&self) {
        self.wake.notify_one();
    }

    async fn run(self: Arc<Self>, shutdown: CancellationToken) {
        let mut changes = self.approvals.changes();
        let mut tick = tokio::time::interval(PASS_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut passes: u64 = 0;
        loop {
            tokio::select! {
                () = shutdown.cancelled() => return,
                _ = tick.tick() => {}
                Some(_) = changes.recv() => {}
                () = self.wake.notified() => {}
            }
            if let Err(e) = self.pass().await {
                tracing::warn!("approval channels: reading the store failed: {e}");
            }
            passes += 1;
            if passes % 1800 == 1
                && let Err(e) = self.posts.prune(KEEP_CLOSED).await
            {
                tracing::warn!("approval channels: pruning old cards failed: {e}");
            }
        }
    }

    /// One reconciling pass: announce what is pending and not yet posted, close what is
    /// posted and no longer pending.
    pub async fn pass(&self) -> StoreResult<()> {
        let pending = self
            .approvals
            .list(Some(ApprovalStatus::Pending), PENDING_WINDOW)
            .await?;
        // Oldest first, as they were asked.
        for request in pending.iter().rev() {
            for (index, channel) in self.channels.iter().enumerate() {
                if !channel.selector.selects(request) {
                    continue;
                }
                for chat in &channel.config.chats {
                    self.announce(index, chat, request).await?;
                }
            }
        }
        // A card whose request was just listed as pending stays open without another read.
        let still_pending: HashSet<&str> = pending.iter().map(|r| r.id.as_str()).collect();
        for channel in &self.channels {
            for post in self.posts.open_posts(&channel.config.name).await? {
                let Some(message) = &post.message_ref else {
                    continue;
                };
                if still_pending.contains(post.approval_id.as_str()) {
                    continue;
                }
                let request = self.approvals.get(&post.approval_id).await?;
                match &request {
                    Some(r) if r.status == ApprovalStatus::Pending => {}
                    Some(r) => self.close_card(channel, &post.chat, message, r).await,
                    None => {
                        self.posts
                            .close(&post.approval_id, &channel.config.name, &post.chat, "gone")
                            .await?;
                    }
                }
            }
        }
        Ok(())
    }

    async fn announce(
        &self,
        index: usize,
        chat: &str,
        request: &ApprovalRequest,
    ) -> StoreResult<()> {
        let channel = &self.channels[index];
        if self.paused_until(index).is_some() {
            return Ok(());
        }
        let key = (request.id.clone(), index, chat.to_owned());
        {
            let claimed = self
                .claimed
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if claimed.get(&key).is_some_and(|at| !self.lapsed(*at)) {
                return Ok(());
            }
        }
        let name = &channel.config.name;
        let won = self.posts.claim(&request.id, name, chat, LEASE).await?;
        self.remember_claim(key);
        if !won {
            return Ok(());
        }
        match channel.service.post(chat, &open_card(request, 0)).await {
            Ok(message) => {
                self.posts.attach(&request.id, name, chat, &message).await?;
                tracing::info!(channel = %channel.via, approval = %request.id, "approval announced");
            }
            // No answer: the card may have been posted. The claim is kept and lapses after
            // the lease, so a lost answer costs at most one late duplicate, not one per pass.
            Err(e @ ServiceError::Transport(_)) => {
                tracing::warn!(channel = %channel.via, approval = %request.id, "announcing got no answer, will retry after {LEASE:?}: {e}");
            }
            // Nothing was posted: release the claim, and post nothing there until the
            // service's pause is over (every pass would otherwise deepen its flood control).
            Err(
                e @ ServiceError::RateLimited {
                    retry_after_secs, ..
                },
            ) => {
                tracing::warn!(channel = %channel.via, approval = %request.id, "announcing paused: {e}");
                self.pause(index, Duration::from_secs(retry_after_secs.clamp(1, 3600)));
                self.posts.release(&request.id, name, chat).await?;
                self.forget_claim(&(request.id.clone(), index, chat.to_owned()));
            }
            Err(e) => {
                tracing::warn!(channel = %channel.via, approval = %request.id, "announcing failed, will retry: {e}");
                self.posts.release(&request.id, name, chat).await?;
                self.forget_claim(&(request.id.clone(), index, chat.to_owned()));
            }
        }
        Ok(())
    }

    fn now_ms(&self) -> u64 {
        (self.clock)()
    }

    /// Whether a claim made at `at` (ms) could have lapsed by now.
    fn lapsed(&self, at: u64) -> bool {
        self.now_ms().saturating_sub(at) >= millis(LEASE)
    }

    fn pause(&self, index: usize, wait: Duration) {
        let until = self.now_ms().saturating_add(millis(wait));
        self.paused
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(index, until);
    }

    /// When the channel's pause ends (ms), if it is paused now.
    fn paused_until(&self, index: usize) -> Option<u64> {
        let now = self.now_ms();
        let mut paused = self
            .paused
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match paused.get(&index) {
            Some(until) if *until > now => Some(*until),
            Some(_) => {
                paused.remove(&index);
                None
            }
            None => None,
        }
    }

    fn remember_claim(&self, key: ClaimKey) {
        let now = self.now_ms();
        let mut claimed = self
            .claimed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        claimed.retain(|_, at| !self.lapsed(*at));
        claimed.insert(key, now);
    }

    fn forget_claim(&self, key: &ClaimKey) {
        self.claimed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(key);
    }

    /// Replaces a card with how its request ended, then marks it closed. A card whose update
    /// failed stays open and is tried again on the next pass; two processes updating the
    /// same card write the same text, so an update may happen twice but never disagrees.
    pub(crate) async fn close_card(
        &self,
        channel: &Channel,
        chat: &str,
        message: &str,
        r: &ApprovalRequest,
    ) {
        match channel.service.update(chat, message, &closed_card(r)).await {
            Ok(()) => {
                if let Err(e) = self
                    .posts
                    .close(&r.id, &channel.config.name, chat, r.status.as_str())
                    .await
                {
                    tracing::warn!(channel = %channel.via, approval = %r.id, "marking the card closed failed: {e}");
                }
            }
            Err(e) => {
                tracing::warn!(channel = %channel.via, approval = %r.id, "updating the card failed, will retry: {e}");
            }
        }
    }

    pub(crate) fn channel_index(&self, name: &str) -> Option<usize> {
        self.channels.iter().position(|c| c.config.name == name)
    }
}

#[cfg(test)]
mod tests;
