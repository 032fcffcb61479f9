//! `toolgate doctor`'s view of each bot: its secrets set, its token accepted, for a Telegram
//! bot in webhook mode the webhook Telegram holds (this server's hook, and Telegram's last delivery error), each
//! listed chat reachable — or why not.

use serde_json::json;
use toolgate_channels::ChatService;
use toolgate_channels::UpdateMode;
use toolgate_channels::doctor::{Finding, chat_findings, why};
use toolgate_channels::secret::Secret;
use toolgate_channels::slack::SlackApi;
use toolgate_channels::telegram::TelegramApi;
use toolgate_net::EgressPolicy;

use crate::config::{BotConfig, BotKind};
use crate::wecom::api::WecomApi;

/// Checks every bot; `public_url` is `[server] public_url` (webhooks live under it).
pub async fn check(
    bots: &[BotConfig],
    egress: &EgressPolicy,
    public_url: Option<&str>,
) -> Vec<Finding> {
    let mut findings = Vec::new();
    let client = match toolgate_channels::approval_channels::client(egress) {
        Ok(c) => c,
        Err(e) => {
            findings.push(Finding {
                name: "bots".into(),
                ok: false,
                detail: e.to_string(),
            });
            return findings;
        }
    };
    for config in bots {
        let name = format!("bots: {}", config.entry());
        let mut fail = |detail: String| {
            findings.push(Finding {
                name: name.clone(),
                ok: false,
                detail,
            });
        };
        if let Err(e) = config.check() {
            fail(e.to_string());
            continue;
        }
        let token = match Secret::from_env(&config.name, &config.token_env, "the bot token") {
            Ok(t) => t,
            Err(e) => {
                fail(e.to_string());
                continue;
            }
        };
        let (service, telegram): (Box<dyn ChatService>, Option<TelegramApi>) = match config.kind {
            BotKind::Telegram => {
                let api = TelegramApi::new(client.clone(), config.api_base(), token);
                (Box::new(api.clone()), Some(api))
            }
            BotKind::Wecom => {
                for (var, what) in [
                    (&config.callback_token_env, "the callback Token"),
                    (&config.encoding_aes_key_env, "the EncodingAESKey"),
                ] {
                    if let Err(e) =
                        Secret::from_env(&config.name, var.as_deref().unwrap_or_default(), what)
                    {
                        fail(e.to_string());
                    }
                }
                let api = WecomApi::new(
                    client.clone(),
                    config.api_base(),
                    config.corp_id.clone().unwrap_or_default(),
                    config.agent_id.unwrap_or_default(),
                    token,
                );
                match api.whoami().await {
                    Ok(me) => findings.push(Finding {
                        name: name.clone(),
                        ok: true,
                        detail: format!("secret accepted (gettoken): {me}"),
                    }),
                    Err(e) => findings.push(Finding {
                        name: name.clone(),
                        ok: false,
                        detail: why(&e),
                    }),
                }
                continue;
            }
            BotKind::Slack => {
                let var = config.signing_secret_env.as_deref().unwrap_or_default();
                if let Err(e) = Secret::from_env(&config.name, var, "the signing secret") {
                    fail(e.to_string());
                    continue;
                }
                (
                    Box::new(SlackApi::new(client.clone(), config.api_base(), token)),
                    None,
                )
            }
        };
        match service.whoami().await {
            Ok(me) => findings.push(Finding {
                name: name.clone(),
                ok: true,
                detail: format!("token accepted: {me}"),
            }),
            Err(e) => {
                findings.push(Finding {
                    name,
                    ok: false,
                    detail: why(&e),
                });
                continue;
            }
        }
        if let Some(api) = &telegram
            && config.updates == UpdateMode::Webhook
        {
            findings.push(webhook(api, config, &name, public_url).await);
        }
        findings.extend(chat_findings(service.as_ref(), &name, &config.chats).await);
    }
    findings
}

/// The webhook Telegram holds for the bot: this server's hook, delivered without error.
async fn webhook(
    api: &TelegramApi,
    config: &BotConfig,
    name: &str,
    public_url: Option<&str>,
) -> Finding {
    let name = format!("{name} webhook");
    let Some(public_url) = public_url else {
        return Finding {
            name,
            ok: false,
            detail: "updates = \"webhook\" needs [server] public_url".into(),
        };
    };
    let expected = format!(
        "{}/hooks/bots/telegram/{}",
        public_url.trim_end_matches('/'),
        config.name
    );
    match api.call("getWebhookInfo", json!({})).await {
        Ok(info) => {
            let url = info["url"].as_str().unwrap_or_default();
            let error = info["last_error_message"].as_str();
            if url != expected {
                Finding {
                    name,
                    ok: false,
                    detail: format!(
                        "Telegram holds `{url}`, not {expected} (toolgate serve registers it \
                         at start)"
                    ),
                }
            } else if let Some(error) = error {
                Finding {
                    name,
                    ok: false,
                    detail: format!("{expected}: Telegram's last delivery failed: {error}"),
                }
            } else {
                Finding {
                    name,
                    ok: true,
                    detail: format!("{expected} registered"),
                }
            }
        }
        Err(e) => Finding {
            name,
            ok: false,
            detail: why(&e),
        },
    }
}
