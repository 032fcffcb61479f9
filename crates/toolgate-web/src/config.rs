//! The `[web]` table: [`WebConfig`] with [`UrlReadConfig`] (`[web.url_read]`), an optional
//! [`SearchConfig`] (`[web.search]`) and an optional [`PapersConfig`] (`[web.papers]`). Every
//! key is optional; unknown keys are rejected.
//!
//! The tools are off by default — reaching the open web is the operator's choice, as the
//! browser tools are: `url_read` with `[web.url_read] enabled = true`, `web_search` when
//! `[web.search]` names a backend, `retrieve_papers` when `[web.papers]` is present. Where requests may go, how many redirects are
//! followed and the connect timeout come from `[egress]`, not from here.

use serde::{Deserialize, Serialize};

pub use crate::papers::config::{PaperSourceKind, PapersConfig};

/// The `[web]` table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WebConfig {
    pub url_read: UrlReadConfig,
    /// `None`: `web_search` is not registered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub search: Option<SearchConfig>,
    /// `None`: `retrieve_papers` is not registered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub papers: Option<PapersConfig>,
}

/// `[web.url_read]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct UrlReadConfig {
    /// Register `url_read` (default: off).
    pub enabled: bool,
    /// Most body bytes downloaded per page; the rest is not read and the result says it was
    /// truncated. A call's `max_bytes` may lower it, never raise it.
    pub max_bytes: u64,
    /// Deadline for one whole fetch (connect, redirects, headers and body), in seconds.
    pub timeout_secs: u64,
    /// Characters of converted text returned per call; `offset` pages through the rest.
    pub max_chars: u64,
    /// The `User-Agent` header sent.
    pub user_agent: String,
}

impl Default for UrlReadConfig {
    fn default() -> Self {
        UrlReadConfig {
            enabled: false,
            max_bytes: 2 << 20,
            timeout_secs: 30,
            max_chars: 40_000,
            user_agent: concat!("toolgate-url-read/", env!("CARGO_PKG_VERSION")).to_owned(),
        }
    }
}

/// Which search service `web_search` asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SearchBackendKind {
    /// A SearXNG instance's JSON API (`GET {base_url}/search?q=…&format=json`); its
    /// `search.formats` setting must include `json`.
    Searxng,
    /// The Brave Search API (`GET {base_url}/res/v1/web/search`), keyed by
    /// `X-Subscription-Token`.
    Brave,
}

impl SearchBackendKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SearchBackendKind::Searxng => "searxng",
            SearchBackendKind::Brave => "brave",
        }
    }
}

/// `[web.search]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchConfig {
    pub backend: SearchBackendKind,
    /// Required for searxng (e.g. `http://127.0.0.1:8888`, then allow it in `[egress]`);
    /// for brave the default is `https://api.search.brave.com`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// Name of the environment variable holding the API key (brave: required). The key
    /// itself never appears in a file, a log line or an error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// Results returned when a call does not say (a call may ask for up to `max_count`).
    #[serde(default = "default_count")]
    pub count: u32,
    /// Most results one call may ask for.
    #[serde(default = "default_max_count")]
    pub max_count: u32,
    /// Deadline for one search request, in seconds.
    #[serde(default = "default_search_timeout")]
    pub timeout_secs: u64,
}

fn default_count() -> u32 {
    5
}

fn default_max_count() -> u32 {
    20
}

fn default_search_timeout() -> u64 {
    15
}

impl SearchConfig {
    /// A config for `backend` with the defaults (`base_url` and key still to be set).
    pub fn new(backend: SearchBackendKind) -> Self {
        SearchConfig {
            backend,
            base_url: None,
            api_key_env: None,
            count: default_count(),
            max_count: default_max_count(),
            timeout_secs: default_search_timeout(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_table_enables_nothing() {
        let cfg: WebConfig = toml::from_str("").unwrap();
        assert_eq!(cfg, WebConfig::default());
        assert_eq!(
            (cfg.url_read.enabled, cfg.search, cfg.papers),
            (false, None, None)
        );
    }

    #[test]
    fn a_full_table_parses_and_round_trips() {
        let cfg: WebConfig = toml::from_str(
            "[url_read]\nenabled = true\nmax_bytes = 1000\ntimeout_secs = 5\nmax_chars = 200\n\
             [search]\nbackend = \"brave\"\napi_key_env = \"BRAVE_KEY\"\ncount = 3\n",
        )
        .unwrap();
        let want = WebConfig {
            url_read: UrlReadConfig {
                enabled: true,
                max_bytes: 1000,
                timeout_secs: 5,
                max_chars: 200,
                ..UrlReadConfig::default()
            },
            search: Some(SearchConfig {
                api_key_env: Some("BRAVE_KEY".into()),
                count: 3,
                ..SearchConfig::new(SearchBackendKind::Brave)
            }),
            papers: None,
        };
        assert_eq!(cfg, want);
        let text = toml::to_string(&cfg).unwrap();
        assert_eq!(toml::from_str::<WebConfig>(&text).unwrap(), want);
    }

    #[test]
    fn an_empty_papers_table_asks_arxiv_and_openalex() {
        let cfg: WebConfig = toml::from_str("[papers]\n").unwrap();
        assert_eq!(cfg.papers, Some(PapersConfig::default()));
        let cfg: WebConfig = toml::from_str(
            "[papers]\nsources = [\"crossref\", \"semantic_scholar\"]\nmailto = \"a@b.org\"\n",
        )
        .unwrap();
        assert_eq!(
            cfg.papers.unwrap().sources,
            [PaperSourceKind::Crossref, PaperSourceKind::SemanticScholar]
        );
        let e = toml::from_str::<WebConfig>("[papers]\nsources = [\"scholar\"]\n").unwrap_err();
        assert!(e.to_string().contains("unknown variant `scholar`"), "{e}");
    }

    #[test]
    fn unknown_keys_and_backends_are_rejected() {
        let e = toml::from_str::<WebConfig>("[search]\nbackend = \"bing\"\n").unwrap_err();
        assert!(e.to_string().contains("unknown variant `bing`"), "{e}");
        let e = toml::from_str::<WebConfig>("[url_read]\nmax_byte = 1\n").unwrap_err();
        assert!(e.to_string().contains("unknown field `max_byte`"), "{e}");
    }
}
