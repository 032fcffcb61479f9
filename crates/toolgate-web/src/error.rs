//! [`WebError`]: a `[web]` setting that cannot be used, found when the tools are built (so
//! `toolgate` refuses to start rather than fail on the first call).

use toolgate_net::EgressError;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WebError {
    #[error("[web.{table}] {key} must be at least 1")]
    Zero {
        table: &'static str,
        key: &'static str,
    },
    #[error("[web.search] {key} = {value} is out of range: {reason}")]
    OutOfRange {
        key: &'static str,
        value: u64,
        reason: &'static str,
    },
    #[error("[web.search] backend = \"{backend}\" needs base_url, the address of the service")]
    MissingBaseUrl { backend: &'static str },
    #[error("[web.search] base_url `{url}` is not a URL: {reason}")]
    BadBaseUrl { url: String, reason: String },
    #[error("[web.search] base_url is not reachable under [egress]: {0}")]
    BaseUrlRefused(EgressError),
    #[error(
        "[web.search] backend = \"{backend}\" needs api_key_env, the name of the environment \
         variable that holds its API key"
    )]
    MissingKeyEnv { backend: &'static str },
    #[error(
        "[web.search] api_key_env = \"{var}\", but the environment variable {var} is not set \
         (or is empty); set it, or remove [web.search] to turn web_search off"
    )]
    KeyNotSet { var: String },
    #[error("[web] cannot build the HTTP client: {0}")]
    Client(EgressError),
    #[error(transparent)]
    Papers(#[from] crate::papers::PapersConfigError),
}
