//! [`CrossrefSource`]: Crossref's REST API, `GET {base}/works?query=…&rows=N&filter=…
//! &mailto=…` (JSON; the `mailto` puts requests in its polite pool). Filters:
//! `from-pub-date` / `until-pub-date` for years, `query.author`, `query.container-title` for
//! the venue. Crossref does not know whether a text is free: it gives no PDF URL, so with
//! `open_access_only` its results are left out. Abstracts (when a publisher deposited one)
//! are JATS XML: the markup is removed. One paper: `/works/{doi}`.

use async_trait::async_trait;
use serde::Deserialize;
use url::Url;

use super::http::{Get, PaperHttp, decode_json};
use super::paper::{Paper, PaperId, PaperQuery, bare_doi};
use super::source::{PaperSource, PapersError};
use crate::markup::strip_tags;

const NAME: &str = "crossref";

/// The public endpoint.
pub const CROSSREF_URL: &str = "https://api.crossref.org";

#[derive(Debug)]
pub struct CrossrefSource {
    base: Url,
    mailto: Option<String>,
    http: PaperHttp,
}

#[derive(Debug, Deserialize)]
struct Answer<T> {
    message: T,
}

#[derive(Debug, Deserialize)]
struct Items {
    #[serde(default)]
    items: Vec<Work>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Work {
    #[serde(rename = "DOI")]
    doi: Option<String>,
    title: Vec<String>,
    author: Vec<Author>,
    issued: Option<Issued>,
    #[serde(rename = "container-title")]
    container_title: Vec<String>,
    #[serde(rename = "abstract")]
    abstract_text: Option<String>,
    #[serde(rename = "URL")]
    url: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Author {
    given: Option<String>,
    family: Option<String>,
    name: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Issued {
    #[serde(rename = "date-parts")]
    date_parts: Vec<Vec<Option<i64>>>,
}

impl CrossrefSource {
    pub fn new(base: Url, mailto: Option<String>, http: PaperHttp) -> Self {
        CrossrefSource { base, mailto, http }
    }

    fn url(&self, segments: &[&str]) -> Url {
        let mut url = self.base.clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty().extend(segments);
        }
        url.set_query(None);
        if let Some(mailto) = &self.mailto {
            url.query_pairs_mut().append_pair("mailto", mailto);
        }
        url
    }

    /// The request URL of a search.
    pub fn search_url(&self, query: &PaperQuery) -> Url {
        let f = &query.filters;
        let mut filters = Vec::new();
        if let Some(from) = f.year_from {
            filters.push(format!("from-pub-date:{from:04}"));
        }
        if let Some(to) = f.year_to {
            filters.push(format!("until-pub-date:{to:04}"));
        }
        let mut url = self.url(&["works"]);
        {
            let mut q = url.query_pairs_mut();
            q.append_pair("query", query.text.trim())
                .append_pair("rows", &query.limit.to_string());
            if let Some(author) = &f.author {
                q.append_pair("query.author", author.trim());
            }
            if let Some(venue) = &f.venue {
                q.append_pair("query.container-title", venue.trim());
            }
            if !filters.is_empty() {
                q.append_pair("filter", &filters.join(","));
            }
        }
        url
    }

    async fn get(&self, url: Url) -> Result<Option<Vec<u8>>, PapersError> {
        self.http
            .get(Get {
                source_name: NAME,
                url,
                accept: "application/json",
                key: None,
                spacing: None,
            })
            .await
    }
}

#[async_trait]
impl PaperSource for CrossrefSource {
    fn name(&self) -> &'static str {
        NAME
    }

    async fn search(&self, query: &PaperQuery) -> Result<Vec<Paper>, PapersError> {
        if query.filters.open_access_only {
            return Ok(Vec::new());
        }
        let Some(body) = self.get(self.search_url(query)).await? else {
            return Ok(Vec::new());
        };
        let answer: Answer<Items> = decode_json(NAME, &body)?;
        Ok(query.keep(answer.message.items.into_iter().map(paper), |_, _| true))
    }

    async fn lookup(&self, id: &PaperId) -> Result<Option<Paper>, PapersError> {
        let Some(doi) = id.doi() else {
            return Ok(None);
        };
        let segments: Vec<&str> = std::iter::once("works").chain(doi.split('/')).collect();
        let Some(body) = self.get(self.url(&segments)).await? else {
            return Ok(None);
        };
        let answer: Answer<Work> = decode_json(NAME, &body)?;
        Ok(Some(paper(answer.message)))
    }
}

fn paper(w: Work) -> Paper {
    let year = w
        .issued
        .and_then(|i| i.date_parts.into_iter().next()?.into_iter().next()?)
        .and_then(|y| u16::try_from(y).ok());
    Paper {
        title: w.title.into_iter().next().unwrap_or_default(),
        authors: w
            .author
            .into_iter()
            .filter_map(|a| match (a.given, a.family, a.name) {
                (Some(g), Some(f), _) => Some(format!("{g} {f}")),
                (None, Some(f), _) => Some(f),
                (_, None, name) => name,
            })
            .collect(),
        year,
        venue: w.container_title.into_iter().next(),
        abstract_text: w.abstract_text.map(|a| {
            strip_tags(&a)
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        }),
        doi: w.doi.as_deref().and_then(bare_doi),
        arxiv_id: None,
        landing_url: w.url,
        pdf_url: None,
        sources: vec![NAME],
    }
}
