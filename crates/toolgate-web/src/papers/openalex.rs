//! [`OpenAlexSource`]: OpenAlex's works API, `GET {base}/works?search=…&per_page=N&filter=…
//! &mailto=…` (JSON). The `mailto` puts requests in its polite pool. Filters:
//! `from_publication_date` / `to_publication_date` for years, `raw_author_name.search` for
//! the author, `is_oa:true` for open access; a venue is matched afterwards on the source's
//! name (the works API has no venue-name search). Abstracts come as an inverted index
//! (word → positions) and are put back in order. One paper: `/works/doi:{doi}`, arXiv ids
//! through arXiv's DOI (`10.48550/arxiv.{id}`).

use std::collections::BTreeMap;

use async_trait::async_trait;
use serde::Deserialize;
use url::Url;

use super::http::{Get, PaperHttp, decode_json};
use super::paper::{Filters, Paper, PaperId, PaperQuery, bare_doi};
use super::source::{PaperSource, PapersError};

const NAME: &str = "openalex";

/// The public endpoint.
pub const OPENALEX_URL: &str = "https://api.openalex.org";

#[derive(Debug)]
pub struct OpenAlexSource {
    base: Url,
    mailto: Option<String>,
    http: PaperHttp,
}

#[derive(Debug, Deserialize)]
struct Page {
    #[serde(default)]
    results: Vec<Work>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Work {
    title: Option<String>,
    display_name: Option<String>,
    doi: Option<String>,
    publication_year: Option<u16>,
    authorships: Vec<Authorship>,
    primary_location: Option<Location>,
    locations: Vec<Location>,
    open_access: Option<OpenAccess>,
    best_oa_location: Option<Location>,
    abstract_inverted_index: Option<BTreeMap<String, Vec<usize>>>,
    id: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Authorship {
    author: Option<Named>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Named {
    display_name: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Location {
    landing_page_url: Option<String>,
    pdf_url: Option<String>,
    source: Option<Named>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct OpenAccess {
    oa_url: Option<String>,
}

impl OpenAlexSource {
    pub fn new(base: Url, mailto: Option<String>, http: PaperHttp) -> Self {
        OpenAlexSource { base, mailto, http }
    }

    fn url(&self, segments: &[&str]) -> Url {
        let mut url = self.base.clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty().extend(segments);
        }
        url.set_query(None);
        url
    }

    /// The request URL of a search.
    pub fn search_url(&self, query: &PaperQuery) -> Url {
        let f = &query.filters;
        let mut filters = Vec::new();
        if let Some(from) = f.year_from {
            filters.push(format!("from_publication_date:{from:04}-01-01"));
        }
        if let Some(to) = f.year_to {
            filters.push(format!("to_publication_date:{to:04}-12-31"));
        }
        if let Some(author) = &f.author {
            // `,` and `|` separate filters and values in OpenAlex's syntax.
            let author: String = author.chars().filter(|c| !matches!(c, ',' | '|')).collect();
            filters.push(format!("raw_author_name.search:{}", author.trim()));
        }
        if f.open_access_only {
            filters.push("is_oa:true".to_owned());
        }
        let mut url = self.url(&["works"]);
        {
            let mut q = url.query_pairs_mut();
            q.append_pair("search", query.text.trim())
                .append_pair("per_page", &query.limit.to_string());
            if !filters.is_empty() {
                q.append_pair("filter", &filters.join(","));
            }
            if let Some(mailto) = &self.mailto {
                q.append_pair("mailto", mailto);
            }
        }
        url
    }

    async fn get(&self, url: Url) -> Result<Option<Vec<u8>>, PapersError> {
        let mut url = url;
        if let Some(mailto) = &self.mailto
            && !url.query_pairs().any(|(k, _)| k == "mailto")
        {
            url.query_pairs_mut().append_pair("mailto", mailto);
        }
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
impl PaperSource for OpenAlexSource {
    fn name(&self) -> &'static str {
        NAME
    }

    async fn search(&self, query: &PaperQuery) -> Result<Vec<Paper>, PapersError> {
        let Some(body) = self.get(self.search_url(query)).await? else {
            return Ok(Vec::new());
        };
        let page: Page = decode_json(NAME, &body)?;
        Ok(query.keep(page.results.into_iter().map(paper), Filters::venue_matches))
    }

    async fn lookup(&self, id: &PaperId) -> Result<Option<Paper>, PapersError> {
        let doi = match id {
            PaperId::Doi(d) => d.clone(),
            PaperId::Arxiv(a) => format!("10.48550/arxiv.{a}"),
        };
        let path = format!("works/doi:{doi}");
        let segments: Vec<&str> = path.split('/').collect();
        let Some(body) = self.get(self.url(&segments)).await? else {
            return Ok(None);
        };
        let work: Work = decode_json(NAME, &body)?;
        Ok(Some(paper(work)))
    }
}

fn paper(w: Work) -> Paper {
    let arxiv_id = w
        .locations
        .iter()
        .chain(w.primary_location.as_ref())
        .filter_map(|l| l.landing_page_url.as_deref())
        .find_map(|u| {
            u.split_once("arxiv.org/abs/")
                .and_then(|(_, t)| PaperId::parse(t))
        })
        .and_then(|id| id.arxiv().map(str::to_owned));
    let primary = w.primary_location.unwrap_or_default();
    let pdf_url = w
        .best_oa_location
        .and_then(|l| l.pdf_url)
        .or(primary.pdf_url)
        .or(w.open_access.and_then(|o| o.oa_url));
    Paper {
        title: w.title.or(w.display_name).unwrap_or_default(),
        authors: w
            .authorships
            .into_iter()
            .filter_map(|a| a.author?.display_name)
            .collect(),
        year: w.publication_year,
        venue: primary.source.and_then(|s| s.display_name),
        abstract_text: w.abstract_inverted_index.map(|index| unindex(&index)),
        doi: w.doi.as_deref().and_then(bare_doi),
        arxiv_id,
        landing_url: primary.landing_page_url.or(w.id),
        pdf_url,
        sources: vec![NAME],
    }
}

/// An inverted index (`{"Deep": [0], "learning": [1, 5]}`) back to text. Positions past a
/// sane length are ignored, so a hostile index cannot make a huge allocation.
fn unindex(index: &BTreeMap<String, Vec<usize>>) -> String {
    const MAX_WORDS: usize = 5_000;
    let mut slots: Vec<Option<&str>> = Vec::new();
    for (word, positions) in index {
        for &at in positions.iter().filter(|&&at| at < MAX_WORDS) {
            if slots.len() <= at {
                slots.resize(at + 1, None);
            }
            slots[at] = Some(word);
        }
    }
    slots.into_iter().flatten().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_inverted_index_reads_back_in_order() {
        let index: BTreeMap<String, Vec<usize>> = serde_json::from_str(
            r#"{"Deep": [0], "learning": [1, 4], "is": [2], "about": [3], "far": [99999999]}"#,
        )
        .unwrap();
        assert_eq!(unindex(&index), "Deep learning is about learning");
    }
}
