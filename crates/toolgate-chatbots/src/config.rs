//! `[[bots]]`: chat apps whose users talk to the agent. Each bot is its own entry point
//! (`telegram:<name>`): a chat user is mapped to a toolgate principal (`users`), or given
//! the `guest_role` when one is set, or refused — and the refusal audited. Secrets are never
//! in this table, only the names of the environment variables holding them.
//!
//! ```toml
//! [[bots]]
//! name = "assistant"
//! kind = "telegram"
//! token_env = "TOOLGATE_ASSISTANT_BOT_TOKEN"
//! [bots.users]
//! "123456789" = "alice"      # Telegram user id → toolgate principal
//! ```

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use toolgate_channels::UpdateMode;
use toolgate_channels::config::check_name_and_vars;
use toolgate_protocol::Role;

/// The chat service behind a bot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BotKind {
    Telegram,
    Slack,
    /// A WeCom (企业微信) self-built application in callback mode.
    Wecom,
}

impl BotKind {
    pub fn as_str(self) -> &'static str {
        match self {
            BotKind::Telegram => "telegram",
            BotKind::Slack => "slack",
            BotKind::Wecom => "wecom",
        }
    }

    /// The service's API when `api_url` is not set.
    pub fn default_api_url(self) -> &'static str {
        match self {
            BotKind::Telegram => "https://api.telegram.org",
            BotKind::Slack => "https://slack.com/api",
            BotKind::Wecom => "https://qyapi.weixin.qq.com/cgi-bin",
        }
    }
}

/// One `[[bots]]` entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BotConfig {
    /// Names the bot in its entry point (`telegram:assistant`), hook URLs and `doctor`.
    pub name: String,
    /// The chat service: `telegram`, `slack` or `wecom`.
    pub kind: BotKind,
    /// The environment variable holding the bot token (Telegram's `123:ABC…`, Slack's
    /// `xoxb-…`, a WeCom application's Secret).
    pub token_env: String,
    /// WeCom: the corp id (企业ID; not a secret). Decrypted callbacks must name it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corp_id: Option<String>,
    /// WeCom: the application's AgentId.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<i64>,
    /// WeCom: the environment variable holding the callback Token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callback_token_env: Option<String>,
    /// WeCom: the environment variable holding the callback EncodingAESKey.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encoding_aes_key_env: Option<String>,
    /// Slack: the environment variable holding the app's signing secret (required: it
    /// verifies every event and interaction).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signing_secret_env: Option<String>,
    /// Telegram: `getUpdates` long polling (default) or a webhook on `[server] public_url`.
    #[serde(default)]
    pub updates: UpdateMode,
    /// With `updates = "webhook"`: the environment variable holding the secret token
    /// Telegram sends back with every update.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook_secret_env: Option<String>,
    /// The service's API base (the official one when absent); reached under `[egress]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_url: Option<String>,
    /// Only these chats (Telegram chat ids, Slack channel ids) may talk to the bot; any chat
    /// when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chats: Vec<String>,
    /// Chat user id → toolgate principal. A mapped user talks with the role of their
    /// principal's active token, checked at every message.
    #[serde(default)]
    pub users: BTreeMap<String, String>,
    /// The role of chat users nobody mapped (principal `telegram://<bot>/<user id>`); without
    /// it they are refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guest_role: Option<Role>,
}

/// A bot table that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("[[bots]] {bot}: {problem}")]
pub struct BotConfigError {
    pub bot: String,
    pub problem: String,
}

impl BotConfig {
    fn problem(&self, problem: impl Into<String>) -> BotConfigError {
        BotConfigError {
            bot: if self.name.is_empty() {
                "(no name)".to_owned()
            } else {
                format!("`{}`", self.name)
            },
            problem: problem.into(),
        }
    }

    /// The conversations' entry point: `telegram:assistant`.
    pub fn entry(&self) -> String {
        format!("{}:{}", self.kind.as_str(), self.name)
    }

    /// The API root.
    pub fn api_base(&self) -> String {
        self.api_url
            .clone()
            .unwrap_or_else(|| self.kind.default_api_url().to_owned())
            .trim_end_matches('/')
            .to_owned()
    }

    /// Checks one entry on its own.
    pub fn check(&self) -> Result<(), BotConfigError> {
        check_name_and_vars(
            &self.name,
            &[
                ("token_env", Some(&self.token_env)),
                ("signing_secret_env", self.signing_secret_env.as_ref()),
                ("webhook_secret_env", self.webhook_secret_env.as_ref()),
                ("callback_token_env", self.callback_token_env.as_ref()),
                ("encoding_aes_key_env", self.encoding_aes_key_env.as_ref()),
            ],
        )
        .map_err(|problem| self.problem(problem))?;
        if self.kind != BotKind::Wecom
            && (self.corp_id.is_some()
                || self.agent_id.is_some()
                || self.callback_token_env.is_some()
                || self.encoding_aes_key_env.is_some())
        {
            return Err(self.problem(
                "corp_id, agent_id, callback_token_env and encoding_aes_key_env are for wecom bots",
            ));
        }
        match self.kind {
            BotKind::Telegram => {
                if self.signing_secret_env.is_some() {
                    return Err(self.problem("signing_secret_env is for slack bots"));
                }
                if self.updates == UpdateMode::Webhook && self.webhook_secret_env.is_none() {
                    return Err(self.problem(
                        "updates = \"webhook\" needs webhook_secret_env (Telegram sends it \
                         back with every update, so nobody else can post messages)",
                    ));
                }
                if let Some(chat) = self.chats.iter().find(|c| c.parse::<i64>().is_err()) {
                    return Err(self.problem(format!("chats: `{chat}` is not a numeric chat id")));
                }
            }
            BotKind::Wecom => {
                if self.corp_id.as_deref().is_none_or(str::is_empty)
                    || self.agent_id.is_none()
                    || self.callback_token_env.is_none()
                    || self.encoding_aes_key_env.is_none()
                {
                    return Err(self.problem(
                        "a wecom bot needs corp_id, agent_id, callback_token_env and \
                         encoding_aes_key_env (token_env holds the application's Secret)",
                    ));
                }
                if self.updates != UpdateMode::Polling
                    || self.webhook_secret_env.is_some()
                    || self.signing_secret_env.is_some()
                {
                    return Err(self.problem(
                        "updates, webhook_secret_env and signing_secret_env are not for wecom \
                         bots (WeCom posts callbacks to /hooks/bots/wecom/<name>)",
                    ));
                }
            }
            BotKind::Slack => {
                if self.signing_secret_env.is_none() {
                    return Err(self.problem(
                        "a slack bot needs signing_secret_env (the app's signing secret \
                         verifies every event and interaction)",
                    ));
                }
                if self.updates != UpdateMode::Polling || self.webhook_secret_env.is_some() {
                    return Err(self.problem(
                        "updates and webhook_secret_env are for telegram bots (Slack posts \
                         events to /hooks/bots/slack/<name>)",
                    ));
                }
            }
        }
        if self.users.is_empty() && self.guest_role.is_none() {
            return Err(self.problem(
                "nobody could talk to this bot: map chat user ids to principals in \
                 [bots.users], or set guest_role",
            ));
        }
        if self
            .users
            .iter()
            .any(|(user, principal)| user.trim().is_empty() || principal.trim().is_empty())
        {
            return Err(self.problem("users: user ids and principals must not be empty"));
        }
        Ok(())
    }
}

impl BotConfig {
    /// The environment variables this bot reads a secret from that `env` does not hold, as
    /// `toolgate serve` would find them: `(key, variable)`.
    pub fn unset_secrets(
        &self,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Vec<(&'static str, String)> {
        [
            ("token_env", Some(&self.token_env)),
            ("signing_secret_env", self.signing_secret_env.as_ref()),
            ("webhook_secret_env", self.webhook_secret_env.as_ref()),
            ("callback_token_env", self.callback_token_env.as_ref()),
            ("encoding_aes_key_env", self.encoding_aes_key_env.as_ref()),
        ]
        .into_iter()
        .filter_map(|(key, var)| {
            let var = var?;
            env(var)
                .is_none_or(|v| v.trim().is_empty())
                .then(|| (key, var.clone()))
        })
        .collect()
    }
}

/// Checks every entry, and that no two share a name or a token.
pub fn check_all(bots: &[BotConfig]) -> Result<(), BotConfigError> {
    for (i, bot) in bots.iter().enumerate() {
        bot.check()?;
        if bots[..i].iter().any(|b| b.name == bot.name) {
            return Err(bot.problem("two bots have this name"));
        }
        if bots[..i].iter().any(|b| b.token_env == bot.token_env) {
            return Err(bot.problem(
                "two bots read the same token_env: one bot token serves one entry point",
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bot() -> BotConfig {
        toml::from_str(
            r#"
            name = "assistant"
            kind = "telegram"
            token_env = "BOT_TOKEN"
            [users]
            "42" = "alice"
            "#,
        )
        .unwrap()
    }

    #[test]
    fn a_minimal_bot_is_valid_and_names_its_entry() {
        let b = bot();
        b.check().unwrap();
        assert_eq!(b.entry(), "telegram:assistant");
        assert_eq!(b.api_base(), "https://api.telegram.org");
    }

    #[test]
    fn unset_secrets_are_named() {
        let mut b = bot();
        b.kind = BotKind::Slack;
        b.signing_secret_env = Some("SLACK_SIGNING_SECRET".into());
        let none = |_: &str| None;
        assert_eq!(
            b.unset_secrets(&none),
            vec![
                ("token_env", "BOT_TOKEN".to_owned()),
                ("signing_secret_env", "SLACK_SIGNING_SECRET".to_owned())
            ]
        );
        let all = |_: &str| Some("x".to_owned());
        assert!(b.unset_secrets(&all).is_empty());
    }

    #[test]
    fn refusals_say_what_to_fix() {
        let mut b = bot();
        b.users.clear();
        assert!(b.check().unwrap_err().problem.contains("guest_role"));
        b.guest_role = Some(Role::from("guest"));
        b.check().unwrap();
        let mut b = bot();
        b.token_env = "123:ABC".into();
        assert!(
            b.check()
                .unwrap_err()
                .problem
                .contains("environment variable")
        );
        let mut b = bot();
        b.updates = UpdateMode::Webhook;
        assert!(
            b.check()
                .unwrap_err()
                .problem
                .contains("webhook_secret_env")
        );
        let mut b = bot();
        b.kind = BotKind::Slack;
        assert!(
            b.check()
                .unwrap_err()
                .problem
                .contains("signing_secret_env")
        );
        b.signing_secret_env = Some("SLACK_SIGNING_SECRET".into());
        b.check().unwrap();
        assert_eq!(b.entry(), "slack:assistant");
        let mut b = bot();
        b.kind = BotKind::Wecom;
        assert!(b.check().unwrap_err().problem.contains("corp_id"));
        b.corp_id = Some("ww1".into());
        b.agent_id = Some(1_000_002);
        b.callback_token_env = Some("WECOM_TOKEN".into());
        b.encoding_aes_key_env = Some("WECOM_AES_KEY".into());
        b.check().unwrap();
        assert_eq!(b.api_base(), "https://qyapi.weixin.qq.com/cgi-bin");
        let mut t = bot();
        t.corp_id = Some("ww1".into());
        assert!(t.check().unwrap_err().problem.contains("for wecom bots"));
        let mut b = bot();
        b.chats = vec!["@group".into()];
        assert!(b.check().is_err());
        let e = check_all(&[bot(), bot()]).unwrap_err();
        assert!(e.problem.contains("two bots"), "{e}");
    }
}
