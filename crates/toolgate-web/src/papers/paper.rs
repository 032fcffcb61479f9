//! The values `retrieve_papers` deals in: a [`PaperQuery`] (words and [`Filters`]), a
//! [`PaperId`] (a DOI or an arXiv id, normalised so two spellings compare equal) and the
//! [`Paper`] every backend's answer becomes.

use serde::Serialize;

/// A search: what to look for and how to narrow it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PaperQuery {
    /// Free words, as typed into a scholarly search box.
    pub text: String,
    pub filters: Filters,
    /// Results wanted from each backend (and in the merged list).
    pub limit: u32,
}

impl PaperQuery {
    /// A backend's answer narrowed as the query asks: the papers the filters admit and
    /// `also` keeps (what that backend's API could not filter itself), at most `limit`.
    pub fn keep(
        &self,
        papers: impl IntoIterator<Item = Paper>,
        also: impl Fn(&Filters, &Paper) -> bool,
    ) -> Vec<Paper> {
        papers
            .into_iter()
            .filter(|p| self.filters.admits(p) && also(&self.filters, p))
            .take(usize::try_from(self.limit).unwrap_or(usize::MAX))
            .collect()
    }
}

/// Optional narrowing, each applied by the backend where its API can, else afterwards.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filters {
    /// First year included.
    pub year_from: Option<u16>,
    /// Last year included.
    pub year_to: Option<u16>,
    /// An author's name (or part of it).
    pub author: Option<String>,
    /// A venue (journal, conference) or an arXiv category such as `cs.CL`.
    pub venue: Option<String>,
    /// Only papers with a free full text.
    pub open_access_only: bool,
}

impl Filters {
    /// Whether `paper` passes the filters a backend could not send (years, open access).
    pub fn admits(&self, paper: &Paper) -> bool {
        let year_ok = match paper.year {
            Some(y) => {
                self.year_from.is_none_or(|from| y >= from) && self.year_to.is_none_or(|to| y <= to)
            }
            None => self.year_from.is_none() && self.year_to.is_none(),
        };
        year_ok && (!self.open_access_only || paper.pdf_url.is_some())
    }

    /// Whether the venue filter is a part of `paper`'s venue (any case): for sources whose
    /// API cannot filter by venue.
    pub fn venue_matches(&self, paper: &Paper) -> bool {
        self.venue.as_deref().is_none_or(|want| {
            paper
                .venue
                .as_deref()
                .is_some_and(|v| contains_folded(v, want))
        })
    }

    /// Whether the author filter is a part of one of `paper`'s authors (any case): for
    /// sources whose API cannot filter by author.
    pub fn author_matches(&self, paper: &Paper) -> bool {
        self.author
            .as_deref()
            .is_none_or(|want| paper.authors.iter().any(|a| contains_folded(a, want)))
    }
}

fn contains_folded(haystack: &str, needle: &str) -> bool {
    haystack
        .to_lowercase()
        .contains(needle.trim().to_lowercase().as_str())
}

/// One identifier of a paper.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PaperId {
    /// A DOI, lower-cased, without `https://doi.org/` or `doi:`.
    Doi(String),
    /// An arXiv id without version (`1706.03762`, `hep-th/9901001`).
    Arxiv(String),
}

impl PaperId {
    /// Reads `10.1145/3292500.3330701`, `doi:…`, `https://doi.org/…`, `arXiv:1706.03762v5`,
    /// `1706.03762`, `https://arxiv.org/abs/1706.03762`, `hep-th/9901001`. Arxiv-issued DOIs
    /// (`10.48550/arXiv.1706.03762`) become the arXiv id they stand for.
    pub fn parse(raw: &str) -> Option<PaperId> {
        let s = raw.trim();
        let lower = s.to_ascii_lowercase();
        for prefix in [
            "https://doi.org/",
            "http://doi.org/",
            "https://dx.doi.org/",
            "doi:",
        ] {
            if let Some(rest) = lower.strip_prefix(prefix) {
                return doi(rest);
            }
        }
        if lower.starts_with("10.") {
            return doi(&lower);
        }
        let rest = ["https://arxiv.org/abs/", "http://arxiv.org/abs/", "arxiv:"]
            .iter()
            .find_map(|p| lower.strip_prefix(p))
            .unwrap_or(&lower);
        arxiv(rest)
    }

    /// The DOI, if this is one.
    pub fn doi(&self) -> Option<&str> {
        match self {
            PaperId::Doi(d) => Some(d),
            PaperId::Arxiv(_) => None,
        }
    }

    /// The arXiv id, if this is one.
    pub fn arxiv(&self) -> Option<&str> {
        match self {
            PaperId::Arxiv(a) => Some(a),
            PaperId::Doi(_) => None,
        }
    }
}

impl std::fmt::Display for PaperId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PaperId::Doi(d) => write!(f, "doi:{d}"),
            PaperId::Arxiv(a) => write!(f, "arXiv:{a}"),
        }
    }
}

/// A DOI as a source wrote it (`https://doi.org/10.1/ABC`, `10.1/ABC`) → `10.1/abc`; `None`
/// when it is not DOI-shaped. arXiv's DOIs stay DOIs here ([`PaperId::parse`] maps them).
pub fn bare_doi(raw: &str) -> Option<String> {
    let lower = raw.trim().to_ascii_lowercase();
    let rest = [
        "https://doi.org/",
        "http://doi.org/",
        "https://dx.doi.org/",
        "doi:",
    ]
    .iter()
    .find_map(|p| lower.strip_prefix(p))
    .unwrap_or(&lower);
    doi(rest).map(|_| rest.to_owned())
}

fn doi(s: &str) -> Option<PaperId> {
    let s = s.trim();
    let (prefix, suffix) = s.split_once('/')?;
    let valid = prefix.starts_with("10.")
        && prefix.len() > 3
        && prefix[3..].chars().all(|c| c.is_ascii_digit() || c == '.')
        && !suffix.is_empty()
        && !s.chars().any(char::is_whitespace);
    if !valid {
        return None;
    }
    match suffix.strip_prefix("arxiv.") {
        Some(id) if prefix == "10.48550" => arxiv(id),
        _ => Some(PaperId::Doi(s.to_owned())),
    }
}

/// A new-style id (`YYMM.NNNN[N]`) or an old-style one (`archive[.SUB]/YYMMNNN`), any
/// `vN` version dropped.
fn arxiv(s: &str) -> Option<PaperId> {
    let s = s.trim();
    let base = match s.rfind('v') {
        Some(at)
            if at > 0 && s[at + 1..].chars().all(|c| c.is_ascii_digit()) && at + 1 < s.len() =>
        {
            &s[..at]
        }
        _ => s,
    };
    let digits = |t: &str| !t.is_empty() && t.chars().all(|c| c.is_ascii_digit());
    let new_style = base
        .split_once('.')
        .is_some_and(|(a, b)| a.len() == 4 && digits(a) && (4..=5).contains(&b.len()) && digits(b));
    let old_style = base.split_once('/').is_some_and(|(archive, n)| {
        !archive.is_empty()
            && archive
                .chars()
                .all(|c| c.is_ascii_lowercase() || c == '-' || c == '.')
            && n.len() == 7
            && digits(n)
    });
    (new_style || old_style).then(|| PaperId::Arxiv(base.to_owned()))
}

/// One paper as returned to the model. Every text field was written by a third party.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Paper {
    pub title: String,
    pub authors: Vec<String>,
    pub year: Option<u16>,
    pub venue: Option<String>,
    /// Capped to `[web.papers] abstract_chars` when the tool returns it.
    #[serde(rename = "abstract")]
    pub abstract_text: Option<String>,
    pub doi: Option<String>,
    pub arxiv_id: Option<String>,
    /// The paper's page (publisher, arXiv abstract page, or the index's own).
    pub landing_url: Option<String>,
    /// A free full text, where the backend knows one.
    pub pdf_url: Option<String>,
    /// Backends that returned it, in the order they were merged.
    pub sources: Vec<&'static str>,
}

impl Paper {
    /// The identifiers merging keys on: the DOI and the arXiv id, normalised.
    pub fn ids(&self) -> Vec<PaperId> {
        let mut ids = Vec::new();
        if let Some(id) = self.doi.as_deref().and_then(PaperId::parse) {
            ids.push(id);
        }
        if let Some(id) = self.arxiv_id.as_deref().and_then(PaperId::parse) {
            ids.push(id);
        }
        ids.dedup();
        ids
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_read_in_their_usual_spellings() {
        let doi = Some(PaperId::Doi("10.1145/3292500.3330701".into()));
        let attention = Some(PaperId::Arxiv("1706.03762".into()));
        let cases = [
            ("10.1145/3292500.3330701", &doi),
            ("DOI:10.1145/3292500.3330701", &doi),
            (" https://doi.org/10.1145/3292500.3330701 ", &doi),
            ("arXiv:1706.03762v5", &attention),
            ("1706.03762", &attention),
            ("https://arxiv.org/abs/1706.03762v7", &attention),
            ("10.48550/arXiv.1706.03762", &attention),
        ];
        for (raw, want) in cases {
            assert_eq!(&PaperId::parse(raw), want, "{raw}");
        }
        assert_eq!(
            PaperId::parse("hep-th/9901001v2"),
            Some(PaperId::Arxiv("hep-th/9901001".into()))
        );
        for bad in [
            "",
            "attention",
            "10.1/",
            "10.x/abc",
            "1706.3",
            "../etc/passwd",
        ] {
            assert_eq!(PaperId::parse(bad), None, "{bad}");
        }
        assert_eq!(
            [
                bare_doi("https://doi.org/10.48550/arXiv.1706.03762"),
                bare_doi("10.18653/V1/N19-1423"),
                bare_doi("n/a"),
            ],
            [
                Some("10.48550/arxiv.1706.03762".to_owned()),
                Some("10.18653/v1/n19-1423".to_owned()),
                None
            ]
        );
    }

    #[test]
    fn filters_admit_by_year_and_open_access() {
        let paper = |year, pdf: Option<&str>| Paper {
            year,
            pdf_url: pdf.map(str::to_owned),
            ..Paper::default()
        };
        let f = Filters {
            year_from: Some(2019),
            year_to: Some(2021),
            open_access_only: true,
            ..Filters::default()
        };
        let got: Vec<bool> = [
            paper(Some(2020), Some("https://x.test/a.pdf")),
            paper(Some(2020), None),
            paper(Some(2022), Some("https://x.test/a.pdf")),
            paper(None, Some("https://x.test/a.pdf")),
        ]
        .iter()
        .map(|p| f.admits(p))
        .collect();
        assert_eq!(got, [true, false, false, false]);
        assert!(Filters::default().admits(&paper(None, None)));
    }
}
