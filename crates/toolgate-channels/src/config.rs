//! `[[approvals.channels]]`: where approval requests are announced and who may decide them
//! there. Secrets are never in this table, only the names of the environment variables that
//! hold them (`token_env`, `signing_secret_env`, `webhook_secret_env`).
//!
//! ```toml
//! [[approvals.channels]]
//! name = "oncall"
//! kind = "telegram"
//! token_env = "TOOLGATE_TELEGRAM_TOKEN"
//! chats = ["-1001234567890"]
//! risks = ["write", "dangerous"]
//! [approvals.channels.operators]
//! "123456789" = "alice"          # Telegram user id → toolgate principal
//! ```

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use toolgate_protocol::Risk;

/// The chat service behind a channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChannelKind {
    Telegram,
    Slack,
}

impl ChannelKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ChannelKind::Telegram => "telegram",
            ChannelKind::Slack => "slack",
        }
    }

    /// The service's API when `api_url` is not set.
    pub fn default_api_url(self) -> &'static str {
        match self {
            ChannelKind::Telegram => "https://api.telegram.org",
            ChannelKind::Slack => "https://slack.com/api",
        }
    }
}

/// How a Telegram bot receives taps and replies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UpdateMode {
    /// `getUpdates` long polling: no inbound connection needed.
    #[default]
    Polling,
    /// Telegram POSTs updates to `<public_url>/hooks/telegram/<name>`, with the secret token
    /// from `webhook_secret_env`; toolgate registers the webhook at start.
    Webhook,
}

/// One `[[approvals.channels]]` entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChannelConfig {
    /// Names the channel in decisions (`slack:ops`), the audit, hooks and `doctor`.
    pub name: String,
    pub kind: ChannelKind,
    /// The environment variable holding the bot token (Telegram's `123:ABC…`, Slack's
    /// `xoxb-…`).
    pub token_env: String,
    /// Slack: the environment variable holding the app's signing secret (required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signing_secret_env: Option<String>,
    /// Telegram with `updates = "webhook"`: the environment variable holding the secret token
    /// Telegram sends back in `X-Telegram-Bot-Api-Secret-Token` (required there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook_secret_env: Option<String>,
    /// Telegram only.
    #[serde(default)]
    pub updates: UpdateMode,
    /// The service's API base (the official one when absent); reached under `[egress]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_url: Option<String>,
    /// Where requests are posted: Telegram chat ids, Slack channel ids.
    pub chats: Vec<String>,
    /// Only requests of callers in these roles (all when empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub roles: Vec<String>,
    /// Only requests for tools matching these globs (all when empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
    /// Only requests of these risks (all when empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub risks: Vec<Risk>,
    /// Chat user id → toolgate principal. Only mapped users whose principal holds the
    /// operator right may decide; every other tap is refused and audited.
    #[serde(default)]
    pub operators: BTreeMap<String, String>,
}

/// A channel table that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("[[approvals.channels]] {channel}: {problem}")]
pub struct ConfigError {
    pub channel: String,
    pub problem: String,
}

impl ChannelConfig {
    fn problem(&self, problem: impl Into<String>) -> ConfigError {
        ConfigError {
            channel: if self.name.is_empty() {
                "(no name)".to_owned()
            } else {
                format!("`{}`", self.name)
            },
            problem: problem.into(),
        }
    }

    /// What the service calls the channel in a decision: `telegram:oncall`.
    pub fn via(&self) -> String {
        format!("{}:{}", self.kind.as_str(), self.name)
    }

    /// Checks one entry on its own (names, variables, filters, the API URL).
    pub fn check(&self) -> Result<(), ConfigError> {
        check_name_and_vars(
            &self.name,
            &[
                ("token_env", Some(&self.token_env)),
                ("signing_secret_env", self.signing_secret_env.as_ref()),
                ("webhook_secret_env", self.webhook_secret_env.as_ref()),
            ],
        )
        .map_err(|problem| self.problem(problem))?;
        match self.kind {
            ChannelKind::Slack => {
                if self.signing_secret_env.is_none() {
                    return Err(self.problem(
                        "a slack channel needs signing_secret_env (the app's signing secret \
                         verifies every interaction)",
                    ));
                }
                if self.updates != UpdateMode::Polling || self.webhook_secret_env.is_some() {
                    return Err(
                        self.problem("updates and webhook_secret_env are for telegram channels")
                    );
                }
            }
            ChannelKind::Telegram => {
                if self.signing_secret_env.is_some() {
                    return Err(self.problem("signing_secret_env is for slack channels"));
                }
                if self.updates == UpdateMode::Webhook && self.webhook_secret_env.is_none() {
                    return Err(self.problem(
                        "updates = \"webhook\" needs webhook_secret_env (Telegram sends it back \
                         with every update, so nobody else can post taps)",
                    ));
                }
            }
        }
        if self.chats.is_empty() || self.chats.iter().any(|c| c.trim().is_empty()) {
            return Err(self.problem("chats must list at least one chat (non-empty ids)"));
        }
        if self.kind == ChannelKind::Telegram
            && let Some(chat) = self.chats.iter().find(|c| c.parse::<i64>().is_err())
        {
            return Err(self.problem(format!(
                "chats: `{chat}` is not a numeric chat id (taps arrive with the numeric id; \
                 @names cannot be matched — read the id with getUpdates or a bot like @RawDataBot)"
            )));
        }
        if self.operators.is_empty() {
            return Err(self.problem(
                "operators must map at least one chat user id to a toolgate principal \
                 (nobody could decide otherwise)",
            ));
        }
        if self
            .operators
            .iter()
            .any(|(user, principal)| user.trim().is_empty() || principal.trim().is_empty())
        {
            return Err(self.problem("operators: user ids and principals must not be empty"));
        }
        for glob in &self.tools {
            globset::Glob::new(glob)
                .map_err(|e| self.problem(format!("tools: `{glob}` is not a glob: {e}")))?;
        }
        if let Some(url) = &self.api_url {
            let parsed = url::Url::parse(url)
                .map_err(|e| self.problem(format!("api_url `{url}` is not a URL: {e}")))?;
            if !matches!(parsed.scheme(), "http" | "https") {
                return Err(self.problem(format!("api_url `{url}` must use http or https")));
            }
        }
        Ok(())
    }

    /// The API base as a URL without a trailing slash.
    pub fn api_base(&self) -> String {
        self.api_url
            .as_deref()
            .unwrap_or(self.kind.default_api_url())
            .trim_end_matches('/')
            .to_owned()
    }
}

/// Checks every channel and that names are unique.
pub fn check_all(channels: &[ChannelConfig]) -> Result<(), ConfigError> {
    let mut seen = std::collections::HashSet::new();
    for c in channels {
        c.check()?;
        if !seen.insert(&c.name) {
            return Err(c.problem("two channels have this name"));
        }
    }
    Ok(())
}

/// Checks a channel's or bot's name (it appears in hook URLs) and that each `(key, value)`
/// names an environment variable rather than holding a secret; the problem otherwise.
pub fn check_name_and_vars(name: &str, vars: &[(&str, Option<&String>)]) -> Result<(), String> {
    let valid_name = !name.is_empty()
        && name.len() <= 32
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
    if !valid_name {
        return Err(
            "name must be 1-32 characters of a-z, 0-9, - and _ (it appears in hook URLs)".into(),
        );
    }
    for (key, var) in vars {
        if let Some(var) = var
            && !is_env_name(var)
        {
            return Err(format!(
                "{key} must name an environment variable (A-Z, 0-9, _), not hold a secret: \
                 put the secret in the environment and its name here"
            ));
        }
    }
    Ok(())
}

pub fn is_env_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 128
        && !s.as_bytes()[0].is_ascii_digit()
        && s.bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn telegram() -> ChannelConfig {
        toml::from_str(
            r#"
            name = "oncall"
            kind = "telegram"
            token_env = "TG_TOKEN"
            chats = ["-100"]
            operators = { "42" = "alice" }
            "#,
        )
        .unwrap()
    }

    #[test]
    fn a_minimal_telegram_channel_is_valid() {
        let c = telegram();
        c.check().unwrap();
        assert_eq!(c.via(), "telegram:oncall");
        assert_eq!(c.api_base(), "https://api.telegram.org");
    }

    #[test]
    fn secrets_are_refused_where_variable_names_belong() {
        let mut c = telegram();
        c.token_env = "123456:ABCdef-secret".into();
        let e = c.check().unwrap_err().to_string();
        assert!(
            e.contains("token_env must name an environment variable"),
            "{e}"
        );
        assert!(
            !e.contains("ABCdef"),
            "the error must not echo the secret: {e}"
        );
    }

    #[test]
    fn each_kind_needs_its_secret() {
        let mut c = telegram();
        c.updates = UpdateMode::Webhook;
        assert!(
            c.check()
                .unwrap_err()
                .problem
                .contains("webhook_secret_env")
        );
        let mut s = telegram();
        s.kind = ChannelKind::Slack;
        assert!(
            s.check()
                .unwrap_err()
                .problem
                .contains("signing_secret_env")
        );
        s.signing_secret_env = Some("SLACK_SIGNING_SECRET".into());
        s.check().unwrap();
    }

    #[test]
    fn names_chats_operators_and_uniqueness() {
        let mut c = telegram();
        c.name = "On Call".into();
        assert!(c.check().is_err());
        let mut c = telegram();
        c.chats.clear();
        assert!(c.check().is_err());
        let mut c = telegram();
        c.chats = vec!["@ops_channel".into()];
        assert!(c.check().unwrap_err().problem.contains("numeric chat id"));
        let mut c = telegram();
        c.operators.clear();
        assert!(c.check().is_err());
        let e = check_all(&[telegram(), telegram()]).unwrap_err();
        assert!(e.problem.contains("two channels"), "{e}");
    }
}
