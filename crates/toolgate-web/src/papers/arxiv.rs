//! [`ArxivSource`]: arXiv's query API, `GET {base}?search_query=…&start=0&max_results=N`
//! answering an Atom feed (export.arxiv.org/api/query). Its terms of use ask for one request
//! every three seconds: requests are spaced by `[web.papers] arxiv_interval_ms`.
//!
//! Filters become fields of `search_query`: words `all:`, author `au:`, a category-shaped
//! venue (`cs.CL`) `cat:`, another venue `jr:` (journal reference), years
//! `submittedDate:[YYYY01010000 TO YYYY12312359]`. Every arXiv paper is open access. A bad
//! query is answered with an entry whose id is under `/api/errors`: reported as HTTP 400.

use std::time::Duration;

use async_trait::async_trait;
use url::Url;

use super::http::{Get, PaperHttp, Spacing};
use super::paper::{Paper, PaperId, PaperQuery, bare_doi};
use super::source::{PaperSource, PapersError};

const NAME: &str = "arxiv";
const ATOM: &str = "http://www.w3.org/2005/Atom";
const ARXIV: &str = "http://arxiv.org/schemas/atom";

/// The public endpoint.
pub const ARXIV_URL: &str = "https://export.arxiv.org/api/query";

#[derive(Debug)]
pub struct ArxivSource {
    endpoint: Url,
    http: PaperHttp,
    spacing: Spacing,
}

impl ArxivSource {
    /// `endpoint`: the query API's URL; `interval`: the spacing between requests.
    pub fn new(endpoint: Url, http: PaperHttp, interval: Duration) -> Self {
        ArxivSource {
            endpoint,
            http,
            spacing: Spacing::new(interval),
        }
    }

    /// The request URL of a search.
    pub fn search_url(&self, query: &PaperQuery) -> Url {
        let mut terms: Vec<String> = words(&query.text).map(|w| format!("all:{w}")).collect();
        let f = &query.filters;
        if let Some(author) = &f.author {
            terms.extend(words(author).map(|w| format!("au:{w}")));
        }
        if let Some(venue) = &f.venue {
            if is_category(venue) {
                terms.push(format!("cat:{}", venue.trim()));
            } else {
                terms.extend(words(venue).map(|w| format!("jr:{w}")));
            }
        }
        if f.year_from.is_some() || f.year_to.is_some() {
            let from = f.year_from.unwrap_or(1991);
            let to = f.year_to.unwrap_or(9999);
            terms.push(format!(
                "submittedDate:[{from:04}01010000 TO {to:04}12312359]"
            ));
        }
        let mut url = self.endpoint.clone();
        url.query_pairs_mut()
            .clear()
            .append_pair("search_query", &terms.join(" AND "))
            .append_pair("start", "0")
            .append_pair("max_results", &query.limit.to_string())
            .append_pair("sortBy", "relevance")
            .append_pair("sortOrder", "descending");
        url
    }

    async fn fetch(&self, url: Url) -> Result<Vec<Paper>, PapersError> {
        let body = self
            .http
            .get(Get {
                source_name: NAME,
                url,
                accept: "application/atom+xml",
                key: None,
                spacing: Some(&self.spacing),
            })
            .await?;
        match body {
            Some(bytes) => parse_feed(&bytes),
            None => Ok(Vec::new()),
        }
    }
}

/// Letters, digits and inner `-` / `'` only: nothing that could change the query's syntax.
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '\''))
        .map(|w| w.trim_matches(|c| c == '-' || c == '\'').to_owned())
        .filter(|w| !w.is_empty())
}

/// `cs.CL`, `math.AP`, `hep-th`, `q-bio.NC`: an arXiv category rather than a journal.
fn is_category(venue: &str) -> bool {
    let v = venue.trim();
    let (archive, sub) = v.split_once('.').unwrap_or((v, ""));
    !archive.is_empty()
        && archive.chars().all(|c| c.is_ascii_lowercase() || c == '-')
        && sub.chars().all(|c| c.is_ascii_alphabetic() || c == '-')
        && (!sub.is_empty() || archive.contains('-'))
}

#[async_trait]
impl PaperSource for ArxivSource {
    fn name(&self) -> &'static str {
        NAME
    }

    async fn search(&self, query: &PaperQuery) -> Result<Vec<Paper>, PapersError> {
        let papers = self.fetch(self.search_url(query)).await?;
        Ok(query.keep(papers, |_, _| true))
    }

    async fn lookup(&self, id: &PaperId) -> Result<Option<Paper>, PapersError> {
        let Some(arxiv) = id.arxiv() else {
            return Ok(None);
        };
        let mut url = self.endpoint.clone();
        url.query_pairs_mut()
            .clear()
            .append_pair("id_list", arxiv)
            .append_pair("max_results", "1");
        Ok(self.fetch(url).await?.into_iter().next())
    }
}

fn decode(reason: impl Into<String>) -> PapersError {
    PapersError::Decode {
        source_name: NAME,
        format: "Atom",
        reason: reason.into(),
    }
}

/// Reads an Atom feed of the query API. DTDs are refused (roxmltree's default).
pub fn parse_feed(bytes: &[u8]) -> Result<Vec<Paper>, PapersError> {
    let text = std::str::from_utf8(bytes).map_err(|e| decode(e.to_string()))?;
    let doc = roxmltree::Document::parse(text).map_err(|e| decode(e.to_string()))?;
    let feed = doc.root_element();
    if !feed.has_tag_name((ATOM, "feed")) {
        return Err(decode(format!(
            "the document is <{}>, not an Atom <feed>",
            feed.tag_name().name()
        )));
    }
    let mut papers = Vec::new();
    for entry in feed.children().filter(|n| n.has_tag_name((ATOM, "entry"))) {
        let child = |ns: &str, name: &str| {
            entry
                .children()
                .find(|n| n.has_tag_name((ns, name)))
                .and_then(|n| n.text())
                .map(|t| t.split_whitespace().collect::<Vec<_>>().join(" "))
                .filter(|t| !t.is_empty())
        };
        let id = child(ATOM, "id").unwrap_or_default();
        if id.contains("/api/errors") {
            return Err(PapersError::Status {
                source_name: NAME,
                status: 400,
                body: format!(": {}", child(ATOM, "summary").unwrap_or(id)),
            });
        }
        let arxiv_id = id
            .rsplit_once("/abs/")
            .and_then(|(_, tail)| PaperId::parse(tail))
            .and_then(|p| p.arxiv().map(str::to_owned));
        // The `<link>` whose attribute `attr` is `value`.
        let link = |attr: &str, value: &str| {
            entry
                .children()
                .filter(|n| n.has_tag_name((ATOM, "link")))
                .find(|n| n.attribute(attr) == Some(value))
                .and_then(|n| n.attribute("href"))
                .map(str::to_owned)
        };
        let category = entry
            .children()
            .find(|n| n.has_tag_name((ARXIV, "primary_category")))
            .and_then(|n| n.attribute("term"))
            .map(str::to_owned);
        papers.push(Paper {
            title: child(ATOM, "title").unwrap_or_default(),
            authors: entry
                .children()
                .filter(|n| n.has_tag_name((ATOM, "author")))
                .filter_map(|a| {
                    a.children()
                        .find(|n| n.has_tag_name((ATOM, "name")))
                        .and_then(|n| n.text())
                        .map(|t| t.trim().to_owned())
                })
                .collect(),
            year: child(ATOM, "published").and_then(|p| p.get(..4)?.parse().ok()),
            venue: child(ARXIV, "journal_ref").or(category),
            abstract_text: child(ATOM, "summary"),
            doi: child(ARXIV, "doi").as_deref().and_then(bare_doi),
            landing_url: link("rel", "alternate").or_else(|| {
                arxiv_id
                    .as_ref()
                    .map(|a| format!("https://arxiv.org/abs/{a}"))
            }),
            pdf_url: link("title", "pdf"),
            arxiv_id,
            sources: vec![NAME],
        });
    }
    Ok(papers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn categories_are_told_from_journals() {
        let got: Vec<bool> = [
            "cs.CL",
            "hep-th",
            "q-bio.NC",
            "NeurIPS",
            "cs",
            "Phys. Rev. D",
        ]
        .iter()
        .map(|v| is_category(v))
        .collect();
        assert_eq!(got, [true, true, true, false, false, false]);
    }

    #[test]
    fn query_syntax_cannot_be_injected_through_words() {
        let got: Vec<String> = words("attention) OR (all:x \"is\" all-you-need").collect();
        assert_eq!(got, ["attention", "OR", "all", "x", "is", "all-you-need"]);
    }

    #[test]
    fn a_dtd_is_refused() {
        let bomb = b"<?xml version=\"1.0\"?><!DOCTYPE lolz [<!ENTITY lol \"lol\">]><feed xmlns=\"http://www.w3.org/2005/Atom\">&lol;</feed>";
        assert!(matches!(parse_feed(bomb), Err(PapersError::Decode { .. })));
    }
}
