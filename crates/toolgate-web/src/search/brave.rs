//! [`BraveBackend`]: the Brave Search API, `GET {base}/res/v1/web/search?q=…&count=…` with
//! the key in `X-Subscription-Token` (marked sensitive; never logged, never in an error).
//! Brave highlights matches with `<strong>` and escapes entities: both are removed.

use async_trait::async_trait;
use serde::Deserialize;
use url::Url;

use super::backend::{SearchBackend, SearchError, SearchResult};
use super::http::get_json;
use super::secret::ApiKey;
use crate::markup::strip_tags;

const NAME: &str = "brave";
/// The API's own ceiling for `count`.
const MAX_COUNT: u32 = 20;

/// The public endpoint.
pub const BRAVE_BASE_URL: &str = "https://api.search.brave.com";

#[derive(Debug, Clone)]
pub struct BraveBackend {
    base: Url,
    key: ApiKey,
    /// Named in messages about the key.
    key_env: String,
    client: reqwest::Client,
}

#[derive(Debug, Deserialize)]
struct Answer {
    #[serde(default)]
    web: Option<Web>,
}

#[derive(Debug, Deserialize)]
struct Web {
    #[serde(default)]
    results: Vec<Hit>,
}

#[derive(Debug, Deserialize)]
struct Hit {
    #[serde(default)]
    title: String,
    #[serde(default)]
    url: String,
    #[serde(default)]
    description: String,
}

impl BraveBackend {
    /// `key_env`: the environment variable the key came from (for messages).
    pub fn new(
        base: Url,
        key: ApiKey,
        key_env: impl Into<String>,
        client: reqwest::Client,
    ) -> Self {
        BraveBackend {
            base,
            key,
            key_env: key_env.into(),
            client,
        }
    }

    fn search_url(&self, query: &str, count: u32) -> Url {
        let mut url = self.base.clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty().extend(["res", "v1", "web", "search"]);
        }
        url.query_pairs_mut()
            .clear()
            .append_pair("q", query)
            .append_pair("count", &count.clamp(1, MAX_COUNT).to_string());
        url
    }
}

#[async_trait]
impl SearchBackend for BraveBackend {
    fn name(&self) -> &'static str {
        NAME
    }

    async fn search(&self, query: &str, count: u32) -> Result<Vec<SearchResult>, SearchError> {
        let Some(token) = self.key.header_value() else {
            return Err(SearchError::Status {
                backend: NAME,
                status: 401,
                hint: format!(
                    "; the key in {} holds characters a header cannot carry",
                    self.key_env
                ),
                body: String::new(),
            });
        };
        let request = self
            .client
            .get(self.search_url(query, count))
            .header(reqwest::header::ACCEPT, "application/json")
            .header("X-Subscription-Token", token);
        let key_env = self.key_env.clone();
        let hint = move |status: u16| match status {
            401 | 403 => format!("; check the API key in the environment variable {key_env}"),
            422 => "; the query or count was rejected".to_owned(),
            429 => "; the plan's rate limit or quota is used up, retry later".to_owned(),
            _ => String::new(),
        };
        let answer: Answer = get_json(request, NAME, Some(&self.key), &hint).await?;
        Ok(answer
            .web
            .map(|w| w.results)
            .unwrap_or_default()
            .into_iter()
            .filter(|hit| !hit.url.is_empty())
            .take(usize::try_from(count).unwrap_or(usize::MAX))
            .map(|hit| SearchResult {
                title: strip_tags(&hit.title),
                url: hit.url,
                snippet: strip_tags(&hit.description),
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_search_path_is_appended_to_the_base() {
        let client = reqwest::Client::new();
        let at = |base: &str| {
            let b = BraveBackend::new(
                Url::parse(base).unwrap(),
                ApiKey::new("k"),
                "K",
                client.clone(),
            );
            b.search_url("a b&c", 50).to_string()
        };
        assert_eq!(
            [
                at("https://api.search.brave.com"),
                at("http://proxy.test/brave/")
            ],
            [
                "https://api.search.brave.com/res/v1/web/search?q=a+b%26c&count=20",
                "http://proxy.test/brave/res/v1/web/search?q=a+b%26c&count=20",
            ]
        );
    }
}
