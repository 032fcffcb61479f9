//! [`SemanticScholarSource`]: the Semantic Scholar Academic Graph API,
//! `GET {base}/graph/v1/paper/search?query=…&limit=N&fields=…` (JSON), with an optional key
//! in `x-api-key` (read from the environment variable `[web.papers]
//! semantic_scholar_key_env` names; never logged, scrubbed from errors). Without a key the
//! shared unauthenticated pool answers 429 often: the backoff handles it. Filters: `year`
//! (`2019-2021`, `2019-`, `-2021`), `venue`, `openAccessPdf`; the author is matched
//! afterwards. One paper: `/graph/v1/paper/DOI:{doi}` or `ARXIV:{id}`.

use async_trait::async_trait;
use serde::Deserialize;
use url::Url;

use super::http::{Get, PaperHttp, decode_json};
use super::paper::{Filters, Paper, PaperId, PaperQuery, bare_doi};
use super::source::{PaperSource, PapersError};
use crate::search::ApiKey;

const NAME: &str = "semantic_scholar";
const FIELDS: &str = "title,authors,year,venue,abstract,externalIds,url,openAccessPdf";

/// The public endpoint.
pub const SEMANTIC_SCHOLAR_URL: &str = "https://api.semanticscholar.org";

#[derive(Debug)]
pub struct SemanticScholarSource {
    base: Url,
    key: Option<ApiKey>,
    http: PaperHttp,
}

#[derive(Debug, Deserialize)]
struct Page {
    #[serde(default)]
    data: Vec<Record>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct Record {
    title: Option<String>,
    authors: Vec<Author>,
    year: Option<u16>,
    venue: Option<String>,
    #[serde(rename = "abstract")]
    abstract_text: Option<String>,
    external_ids: Option<ExternalIds>,
    url: Option<String>,
    open_access_pdf: Option<Pdf>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Author {
    name: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ExternalIds {
    #[serde(rename = "DOI")]
    doi: Option<String>,
    #[serde(rename = "ArXiv")]
    arxiv: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Pdf {
    url: Option<String>,
}

impl SemanticScholarSource {
    pub fn new(base: Url, key: Option<ApiKey>, http: PaperHttp) -> Self {
        SemanticScholarSource { base, key, http }
    }

    fn url(&self, segments: &[&str]) -> Url {
        let mut url = self.base.clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty()
                .extend(["graph", "v1", "paper"])
                .extend(segments);
        }
        url.set_query(None);
        url
    }

    /// The request URL of a search.
    pub fn search_url(&self, query: &PaperQuery) -> Url {
        let f = &query.filters;
        let mut url = self.url(&["search"]);
        {
            let mut q = url.query_pairs_mut();
            q.append_pair("query", query.text.trim())
                .append_pair("limit", &query.limit.to_string())
                .append_pair("fields", FIELDS);
            if f.year_from.is_some() || f.year_to.is_some() {
                let year = |y: Option<u16>| y.map(|y| y.to_string()).unwrap_or_default();
                q.append_pair(
                    "year",
                    &format!("{}-{}", year(f.year_from), year(f.year_to)),
                );
            }
            if let Some(venue) = &f.venue {
                q.append_pair("venue", venue.trim());
            }
            if f.open_access_only {
                q.append_pair("openAccessPdf", "");
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
                key: self.key.as_ref(),
                spacing: None,
            })
            .await
    }
}

#[async_trait]
impl PaperSource for SemanticScholarSource {
    fn name(&self) -> &'static str {
        NAME
    }

    async fn search(&self, query: &PaperQuery) -> Result<Vec<Paper>, PapersError> {
        let Some(body) = self.get(self.search_url(query)).await? else {
            return Ok(Vec::new());
        };
        let page: Page = decode_json(NAME, &body)?;
        Ok(query.keep(page.data.into_iter().map(paper), Filters::author_matches))
    }

    async fn lookup(&self, id: &PaperId) -> Result<Option<Paper>, PapersError> {
        let key = match id {
            PaperId::Doi(d) => format!("DOI:{d}"),
            PaperId::Arxiv(a) => format!("ARXIV:{a}"),
        };
        let segments: Vec<&str> = key.split('/').collect();
        let mut url = self.url(&segments);
        url.query_pairs_mut().append_pair("fields", FIELDS);
        let Some(body) = self.get(url).await? else {
            return Ok(None);
        };
        let record: Record = decode_json(NAME, &body)?;
        Ok(Some(paper(record)))
    }
}

fn paper(r: Record) -> Paper {
    let ids = r.external_ids.unwrap_or_default();
    Paper {
        title: r.title.unwrap_or_default(),
        authors: r.authors.into_iter().filter_map(|a| a.name).collect(),
        year: r.year,
        venue: r.venue.filter(|v| !v.trim().is_empty()),
        abstract_text: r.abstract_text,
        doi: ids.doi.as_deref().and_then(bare_doi),
        arxiv_id: ids.arxiv,
        landing_url: r.url,
        pdf_url: r
            .open_access_pdf
            .and_then(|p| p.url)
            .filter(|u| !u.is_empty()),
        sources: vec![NAME],
    }
}
