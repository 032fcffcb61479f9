//! One configured channel: its settings, its service (Telegram or Slack) with the secrets
//! read from the environment, and how it hears back from the service.

use std::sync::Arc;

use toolgate_net::EgressPolicy;

use crate::config::{ChannelConfig, ChannelKind, UpdateMode};
use crate::error::ChannelsError;
use crate::secret::Secret;
use crate::select::Selector;
use crate::service::ChatService;
use crate::slack::SlackApi;
use crate::slack::verify::Verifier;
use crate::telegram::TelegramApi;

/// How a channel hears from its service.
pub(crate) enum Inbound {
    TelegramPolling(TelegramApi),
    TelegramWebhook { api: TelegramApi, secret: Secret },
    Slack(Box<Verifier>),
}

pub(crate) struct Channel {
    pub(crate) config: ChannelConfig,
    /// `telegram:oncall`: recorded with every decision taken here.
    pub(crate) via: String,
    pub(crate) selector: Selector,
    pub(crate) service: Arc<dyn ChatService>,
    pub(crate) inbound: Inbound,
}

/// The egress client for a channel: `[egress]`'s rules, no redirect, and room for a long
/// poll.
pub fn client(egress: &EgressPolicy) -> Result<reqwest::Client, toolgate_net::EgressError> {
    let policy = EgressPolicy {
        max_redirects: 0,
        request_timeout_secs: egress
            .request_timeout_secs
            .max(crate::telegram::poll::POLL_SECS + 15),
        ..egress.clone()
    };
    toolgate_net::client(&policy)
}

/// The service of one channel, its secrets read from the environment.
pub(crate) fn service_of(
    config: &ChannelConfig,
    client: reqwest::Client,
) -> Result<(Arc<dyn ChatService>, Inbound), ChannelsError> {
    let token = Secret::from_env(&config.name, &config.token_env, "the bot token")?;
    let base = config.api_base();
    Ok(match config.kind {
        ChannelKind::Telegram => {
            let api = TelegramApi::new(client, base, token);
            let inbound = match config.updates {
                UpdateMode::Polling => Inbound::TelegramPolling(api.clone()),
                UpdateMode::Webhook => Inbound::TelegramWebhook {
                    api: api.clone(),
                    secret: Secret::from_env(
                        &config.name,
                        config.webhook_secret_env.as_deref().unwrap_or_default(),
                        "the webhook secret token",
                    )?,
                },
            };
            (Arc::new(api) as Arc<dyn ChatService>, inbound)
        }
        ChannelKind::Slack => {
            let secret = Secret::from_env(
                &config.name,
                config.signing_secret_env.as_deref().unwrap_or_default(),
                "the signing secret",
            )?;
            (
                Arc::new(SlackApi::new(client, base, token)) as Arc<dyn ChatService>,
                Inbound::Slack(Box::new(Verifier::new(&secret))),
            )
        }
    })
}
