//! [`web_tools`]: the `[web]` table → the tools to register: `url_read` when enabled,
//! `web_search` when `[web.search]` is present, `retrieve_papers` when `[web.papers]` is;
//! nothing by default. Every setting is checked here, so a
//! bad one stops startup with a message naming the key instead of failing a later call.

use std::sync::Arc;
use std::time::Duration;

use toolgate_core::DynTool;
use toolgate_net::{EgressPolicy, Lookup, SystemLookup, check_url, client_with_lookup};
use url::Url;

use crate::config::{SearchBackendKind, SearchConfig, WebConfig};
use crate::error::WebError;
use crate::papers::{TokioClock, papers_tool};
use crate::read::UrlReadTool;
use crate::search::{
    ApiKey, BRAVE_BASE_URL, BraveBackend, SearchBackend, SearxngBackend, WebSearchTool,
};

/// Reads an environment variable (injectable so tests need not change the process's).
pub type EnvLookup<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The web tools `config` enables, with clients confined by `egress`.
pub fn web_tools(config: &WebConfig, egress: &EgressPolicy) -> Result<Vec<DynTool>, WebError> {
    web_tools_with(config, egress, Arc::new(SystemLookup), &|var| {
        std::env::var(var).ok()
    })
}

/// [`web_tools`] with another name lookup and environment (tests).
pub fn web_tools_with(
    config: &WebConfig,
    egress: &EgressPolicy,
    lookup: Arc<dyn Lookup>,
    env: EnvLookup<'_>,
) -> Result<Vec<DynTool>, WebError> {
    let mut tools: Vec<DynTool> = Vec::new();
    if config.url_read.enabled {
        let tool = UrlReadTool::with_lookup(config.url_read.clone(), egress, Arc::clone(&lookup))?;
        tools.push(Arc::new(tool));
    }
    if let Some(search) = &config.search {
        let backend = search_backend(search, egress, Arc::clone(&lookup), env)?;
        tools.push(Arc::new(WebSearchTool::new(
            backend,
            search.count,
            search.max_count,
            Duration::from_secs(search.timeout_secs),
        )));
    }
    if let Some(papers) = &config.papers {
        let clock = Arc::new(TokioClock::default());
        tools.push(Arc::new(papers_tool(papers, egress, lookup, clock, env)?));
    }
    Ok(tools)
}

/// The backend `[web.search]` names, checked against `[egress]`.
pub fn search_backend(
    config: &SearchConfig,
    egress: &EgressPolicy,
    lookup: Arc<dyn Lookup>,
    env: EnvLookup<'_>,
) -> Result<Arc<dyn SearchBackend>, WebError> {
    for (key, value) in [
        ("count", u64::from(config.count)),
        ("max_count", u64::from(config.max_count)),
        ("timeout_secs", config.timeout_secs),
    ] {
        if value == 0 {
            return Err(WebError::Zero {
                table: "search",
                key,
            });
        }
    }
    if config.count > config.max_count {
        return Err(WebError::OutOfRange {
            key: "count",
            value: u64::from(config.count),
            reason: "it is above max_count",
        });
    }
    let backend = config.backend.as_str();
    let base = match (&config.base_url, config.backend) {
        (Some(url), _) => url.as_str(),
        (None, SearchBackendKind::Brave) => BRAVE_BASE_URL,
        (None, SearchBackendKind::Searxng) => return Err(WebError::MissingBaseUrl { backend }),
    };
    let base = Url::parse(base).map_err(|e| WebError::BadBaseUrl {
        url: base.to_owned(),
        reason: e.to_string(),
    })?;
    check_url(egress, &base).map_err(WebError::BaseUrlRefused)?;
    let client = client_with_lookup(egress, lookup).map_err(WebError::Client)?;
    Ok(match config.backend {
        SearchBackendKind::Searxng => Arc::new(SearxngBackend::new(base, client)),
        SearchBackendKind::Brave => {
            let var = config
                .api_key_env
                .as_deref()
                .filter(|v| !v.trim().is_empty())
                .ok_or(WebError::MissingKeyEnv { backend })?;
            let key =
                env(var)
                    .filter(|k| !k.trim().is_empty())
                    .ok_or_else(|| WebError::KeyNotSet {
                        var: var.to_owned(),
                    })?;
            Arc::new(BraveBackend::new(
                base,
                ApiKey::new(key.trim()),
                var,
                client,
            ))
        }
    })
}
