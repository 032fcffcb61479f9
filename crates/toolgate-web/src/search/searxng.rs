//! [`SearxngBackend`]: a SearXNG instance's JSON API, `GET {base}/search?q=…&format=json`
//! (the instance's `search.formats` must list `json`, or it answers 403). SearXNG has no
//! result-count parameter: the first page is cut to `count`.

use async_trait::async_trait;
use serde::Deserialize;
use url::Url;

use super::backend::{SearchBackend, SearchError, SearchResult};
use super::http::get_json;

const NAME: &str = "searxng";

#[derive(Debug, Clone)]
pub struct SearxngBackend {
    base: Url,
    client: reqwest::Client,
}

#[derive(Debug, Deserialize)]
struct Answer {
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
    content: String,
}

impl SearxngBackend {
    /// `base`: the instance's address (`http://127.0.0.1:8888`, or with a path prefix);
    /// `client`: built by `toolgate_net`.
    pub fn new(base: Url, client: reqwest::Client) -> Self {
        SearxngBackend { base, client }
    }

    fn search_url(&self, query: &str) -> Url {
        let mut url = self.base.clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty().push("search");
        }
        url.query_pairs_mut()
            .clear()
            .append_pair("q", query)
            .append_pair("format", "json");
        url
    }
}

fn hint(status: u16) -> String {
    match status {
        403 => "; enable the json format in the instance's settings.yml (search.formats)",
        429 => "; the instance is rate-limiting (its limiter); retry later or relax it",
        _ => "",
    }
    .to_owned()
}

#[async_trait]
impl SearchBackend for SearxngBackend {
    fn name(&self) -> &'static str {
        NAME
    }

    async fn search(&self, query: &str, count: u32) -> Result<Vec<SearchResult>, SearchError> {
        let request = self
            .client
            .get(self.search_url(query))
            .header(reqwest::header::ACCEPT, "application/json");
        let answer: Answer = get_json(request, NAME, None, &hint).await?;
        Ok(answer
            .results
            .into_iter()
            .filter(|hit| !hit.url.is_empty())
            .take(usize::try_from(count).unwrap_or(usize::MAX))
            .map(|hit| SearchResult {
                title: hit.title.trim().to_owned(),
                url: hit.url,
                snippet: hit.content.split_whitespace().collect::<Vec<_>>().join(" "),
            })
            .collect())
    }
}
