//! [`ModelConfig`]: the `[model]` table of `toolgate.toml`, and [`connect`], which turns it
//! into a [`ModelClient`].
//!
//! The API key is read from the environment variable named by `api_key_env` when the client
//! is built; it is never written anywhere, and every `Debug` of a client shows it redacted.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use toolgate_net::EgressPolicy;

use crate::client::{ModelClient, ModelError};
use crate::http::{Http, RetryPolicy};
use crate::providers::{AnthropicClient, OpenAiChatClient, OpenAiResponsesClient};

/// Which API the model speaks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Provider {
    /// OpenAI Chat Completions, and any OpenAI-compatible server (`/chat/completions`).
    #[default]
    #[serde(rename = "openai-chat")]
    OpenAiChat,
    /// OpenAI Responses (`/responses`).
    #[serde(rename = "openai-responses")]
    OpenAiResponses,
    /// Anthropic Messages (`/messages`).
    #[serde(rename = "anthropic")]
    Anthropic,
}

impl Provider {
    pub fn as_str(self) -> &'static str {
        match self {
            Provider::OpenAiChat => "openai-chat",
            Provider::OpenAiResponses => "openai-responses",
            Provider::Anthropic => "anthropic",
        }
    }

    /// The provider's own endpoint.
    pub fn default_base_url(self) -> &'static str {
        match self {
            Provider::OpenAiChat | Provider::OpenAiResponses => "https://api.openai.com/v1",
            Provider::Anthropic => "https://api.anthropic.com/v1",
        }
    }

    pub fn default_api_key_env(self) -> &'static str {
        match self {
            Provider::OpenAiChat | Provider::OpenAiResponses => "OPENAI_API_KEY",
            Provider::Anthropic => "ANTHROPIC_API_KEY",
        }
    }
}

impl std::str::FromStr for Provider {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "openai-chat" => Ok(Provider::OpenAiChat),
            "openai-responses" => Ok(Provider::OpenAiResponses),
            "anthropic" => Ok(Provider::Anthropic),
            other => Err(format!(
                "unknown model provider `{other}` (expected openai-chat, openai-responses or anthropic)"
            )),
        }
    }
}

/// The `[model]` table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ModelConfig {
    pub provider: Provider,
    /// Model name, e.g. `gpt-4.1-mini` or `claude-sonnet-4-5`. Required to run.
    pub model: String,
    /// API root [default: the provider's]; a local server: `http://127.0.0.1:8080/v1`
    /// (allow it in `[egress] allow_hosts` and `allow_http`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// The environment variable holding the API key [default: OPENAI_API_KEY or
    /// ANTHROPIC_API_KEY]. Unset with a custom base_url: no key is sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// System prompt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    /// Output token cap per model call.
    pub max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// `false` asks for at most one tool call per turn; unset: the provider's default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parallel_tool_calls: Option<bool>,
    /// Model calls per task before the loop stops with an error.
    pub max_steps: u32,
    /// Stream answers as they are generated.
    pub stream: bool,
    /// OpenAI Responses: keep responses on the server and chain with `previous_response_id`,
    /// sending only new items.
    pub store: bool,
    /// Deadline for one model call, streaming included.
    pub timeout_secs: u64,
    /// Retries after 429 (honouring retry-after) and 5xx answers.
    pub max_retries: u32,
    /// First backoff after a 5xx; doubled each retry up to `retry_max_ms`.
    pub retry_base_ms: u64,
    /// Longest wait between attempts (also caps a server's retry-after).
    pub retry_max_ms: u64,
    /// The `anthropic-version` header.
    pub anthropic_version: String,
    /// `[model.prices."NAME"]`: what each model costs, for `toolgate eval`'s cost columns.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub prices: BTreeMap<String, ModelPrice>,
}

/// A model's price in USD per million tokens (`[model.prices."gpt-4.1-mini"]
/// input_usd_per_mtok = 0.4, output_usd_per_mtok = 1.6`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelPrice {
    pub input_usd_per_mtok: f64,
    pub output_usd_per_mtok: f64,
}

// `temperature` and the prices are the only floats; a NaN there is rejected by `check`.
impl Eq for ModelConfig {}

impl Default for ModelConfig {
    fn default() -> Self {
        ModelConfig {
            provider: Provider::default(),
            model: String::new(),
            base_url: None,
            api_key_env: None,
            system: None,
            max_tokens: 4096,
            temperature: None,
            parallel_tool_calls: None,
            max_steps: 20,
            stream: true,
            store: false,
            timeout_secs: 300,
            max_retries: 3,
            retry_base_ms: 500,
            retry_max_ms: 30_000,
            anthropic_version: "2023-06-01".to_owned(),
            prices: BTreeMap::new(),
        }
    }
}

/// What [`ModelConfig::check`] refuses in a `[model]` table.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ModelConfigError {
    #[error("[model] base_url `{url}` is not a URL: {error}")]
    NotAUrl { url: String, error: url::ParseError },
    #[error("[model] base_url `{url}` must be http or https")]
    Scheme { url: String },
    #[error("[model] max_tokens, max_steps and timeout_secs must be positive")]
    NotPositive,
    #[error("[model] temperature must be between 0 and 2")]
    Temperature(f32),
    #[error(
        "[model.prices.\"{model}\"] {key} = {value} is not a price: give USD per million tokens, \
         0 or more"
    )]
    Price {
        model: String,
        key: &'static str,
        value: f64,
    },
}

impl ModelConfig {
    /// Static checks (no environment, no network).
    pub fn check(&self) -> Result<(), ModelConfigError> {
        if let Some(url) = &self.base_url {
            let parsed = url::Url::parse(url).map_err(|error| ModelConfigError::NotAUrl {
                url: url.clone(),
                error,
            })?;
            if !matches!(parsed.scheme(), "http" | "https") {
                return Err(ModelConfigError::Scheme { url: url.clone() });
            }
        }
        if self.max_tokens == 0 || self.max_steps == 0 || self.timeout_secs == 0 {
            return Err(ModelConfigError::NotPositive);
        }
        if let Some(t) = self.temperature.filter(|t| !(0.0..=2.0).contains(t)) {
            return Err(ModelConfigError::Temperature(t));
        }
        for (model, price) in &self.prices {
            for (key, value) in [
                ("input_usd_per_mtok", price.input_usd_per_mtok),
                ("output_usd_per_mtok", price.output_usd_per_mtok),
            ] {
                if !(value.is_finite() && value >= 0.0) {
                    return Err(ModelConfigError::Price {
                        model: model.clone(),
                        key,
                        value,
                    });
                }
            }
        }
        Ok(())
    }

    /// The price of `model` from `[model.prices]`, if listed.
    pub fn price_of(&self, model: &str) -> Option<ModelPrice> {
        self.prices.get(model).copied()
    }

    pub fn base_url(&self) -> &str {
        self.base_url
            .as_deref()
            .unwrap_or(self.provider.default_base_url())
    }

    pub fn api_key_env(&self) -> &str {
        self.api_key_env
            .as_deref()
            .unwrap_or(self.provider.default_api_key_env())
    }

    fn retry(&self) -> RetryPolicy {
        RetryPolicy {
            max_retries: self.max_retries,
            base: Duration::from_millis(self.retry_base_ms),
            max: Duration::from_millis(self.retry_max_ms.max(self.retry_base_ms)),
        }
    }
}

/// Builds the configured client. HTTP goes through `toolgate_net::client(egress)`: a model
/// server on loopback or a private address must be listed in `[egress] allow_hosts` (and
/// `allow_http` for plain http).
pub fn connect(
    config: &ModelConfig,
    egress: &EgressPolicy,
) -> Result<Arc<dyn ModelClient>, ModelError> {
    if config.model.is_empty() {
        return Err(no_model());
    }
    let var = config.api_key_env();
    let key = std::env::var(var).ok().filter(|k| !k.trim().is_empty());
    if key.is_none() && (config.base_url.is_none() || config.api_key_env.is_some()) {
        return Err(ModelError::Config(format!(
            "the API key variable {var} is not set (export it, or name another with [model] api_key_env)"
        )));
    }
    connect_with_key(config, egress, key)
}

/// [`connect`] with the key given rather than read from the environment (embedding, tests).
pub fn connect_with_key(
    config: &ModelConfig,
    egress: &EgressPolicy,
    key: Option<String>,
) -> Result<Arc<dyn ModelClient>, ModelError> {
    config
        .check()
        .map_err(|e| ModelError::Config(e.to_string()))?;
    if config.model.is_empty() {
        return Err(no_model());
    }
    let mut policy = egress.clone();
    policy.request_timeout_secs = config.timeout_secs;
    let client = toolgate_net::client(&policy)
        .map_err(|e| ModelError::Config(format!("cannot build the HTTP client: {e}")))?;
    let base = url::Url::parse(config.base_url())
        .map_err(|e| ModelError::Config(format!("[model] base_url: {e}")))?;
    toolgate_net::check_url(&policy, &base).map_err(|e| {
        ModelError::Config(format!(
            "[model] base_url {base} is refused by [egress]: {e}"
        ))
    })?;
    let http = Http::new(client, base, config.retry());
    Ok(match config.provider {
        Provider::OpenAiChat => Arc::new(OpenAiChatClient::new(http, config, key)),
        Provider::OpenAiResponses => Arc::new(OpenAiResponsesClient::new(http, config, key)),
        Provider::Anthropic => Arc::new(AnthropicClient::new(http, config, key)),
    })
}

fn no_model() -> ModelError {
    ModelError::Config(
        "no model configured: set [model] model in toolgate.toml (and provider, base_url)".into(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_names_what_is_wrong() {
        let with = |edit: fn(&mut ModelConfig)| {
            let mut c = ModelConfig::default();
            edit(&mut c);
            c.check()
        };
        assert_eq!(with(|_| {}), Ok(()));
        assert!(matches!(
            with(|c| c.base_url = Some("not a url".into())),
            Err(ModelConfigError::NotAUrl { .. })
        ));
        let ftp = with(|c| c.base_url = Some("ftp://models.example".into())).unwrap_err();
        assert_eq!(
            ftp.to_string(),
            "[model] base_url `ftp://models.example` must be http or https"
        );
        assert_eq!(
            with(|c| c.max_steps = 0),
            Err(ModelConfigError::NotPositive)
        );
        assert_eq!(
            with(|c| c.temperature = Some(2.5)),
            Err(ModelConfigError::Temperature(2.5))
        );
        let negative = with(|c| {
            c.prices.insert(
                "m".into(),
                ModelPrice {
                    input_usd_per_mtok: 1.0,
                    output_usd_per_mtok: -2.0,
                },
            );
        })
        .unwrap_err();
        assert_eq!(
            negative.to_string(),
            "[model.prices.\"m\"] output_usd_per_mtok = -2 is not a price: give USD per million \
             tokens, 0 or more"
        );
    }

    #[test]
    fn prices_are_read_per_model() {
        let c: ModelConfig = toml::from_str(
            "model = \"a\"\n[prices.\"gpt-4.1-mini\"]\ninput_usd_per_mtok = 0.4\n\
             output_usd_per_mtok = 1.6\n",
        )
        .unwrap();
        assert_eq!(
            (c.price_of("gpt-4.1-mini"), c.price_of("a")),
            (
                Some(ModelPrice {
                    input_usd_per_mtok: 0.4,
                    output_usd_per_mtok: 1.6
                }),
                None
            )
        );
    }
}
