//! Merging the sources' lists into one: papers sharing a DOI or an arXiv id (normalised by
//! [`PaperId`]) — or, with neither, the same title — are one paper, whose empty fields are
//! filled from the later copies. The merged list is ranked by reciprocal rank fusion
//! (Σ 1 / (60 + rank) over the lists a paper is in), so a paper several indexes rank high
//! comes first; ties keep the order of the sources in `[web.papers] sources`.

use std::collections::HashMap;

use super::paper::{Paper, PaperId};

/// RRF's damping constant (the usual 60).
const K: f64 = 60.0;

/// One list per source, each best first → the merged list, best first, at most `limit`.
pub fn merge(lists: Vec<Vec<Paper>>, limit: usize) -> Vec<Paper> {
    let mut merged: Vec<(Paper, f64)> = Vec::new();
    let mut by_id: HashMap<PaperId, usize> = HashMap::new();
    let mut by_title: HashMap<String, usize> = HashMap::new();
    for list in lists {
        for (rank, paper) in list.into_iter().enumerate() {
            let score = 1.0 / (K + rank as f64 + 1.0);
            let ids = paper.ids();
            let title = title_key(&paper.title);
            let found = ids
                .iter()
                .find_map(|id| by_id.get(id).copied())
                .or_else(|| {
                    let bare = ids.is_empty() && !title.is_empty();
                    bare.then(|| by_title.get(&title).copied()).flatten()
                });
            let at = match found {
                Some(at) => {
                    let (kept, total) = &mut merged[at];
                    fill(kept, paper);
                    *total += score;
                    at
                }
                None => {
                    merged.push((paper, score));
                    merged.len() - 1
                }
            };
            for id in merged[at].0.ids() {
                by_id.entry(id).or_insert(at);
            }
            if !title.is_empty() {
                by_title.entry(title).or_insert(at);
            }
        }
    }
    // A stable sort: equal scores keep first-seen order.
    let mut order: Vec<usize> = (0..merged.len()).collect();
    order.sort_by(|&a, &b| merged[b].1.total_cmp(&merged[a].1));
    let mut slots: Vec<Option<Paper>> = merged.into_iter().map(|(p, _)| Some(p)).collect();
    order
        .into_iter()
        .filter_map(|i| slots[i].take())
        .take(limit)
        .collect()
}

/// Lower-case letters and digits only: `"Attention Is All You Need."` and `"attention is
/// all you need"` are one title.
fn title_key(title: &str) -> String {
    title
        .chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// Fills `kept`'s empty fields from `other` and records `other`'s source.
fn fill(kept: &mut Paper, other: Paper) {
    fn or<T>(slot: &mut Option<T>, value: Option<T>) {
        if slot.is_none() {
            *slot = value;
        }
    }
    if kept.title.is_empty() {
        kept.title = other.title;
    }
    if kept.authors.is_empty() {
        kept.authors = other.authors;
    }
    or(&mut kept.year, other.year);
    or(&mut kept.venue, other.venue);
    or(&mut kept.abstract_text, other.abstract_text);
    or(&mut kept.doi, other.doi);
    or(&mut kept.arxiv_id, other.arxiv_id);
    or(&mut kept.landing_url, other.landing_url);
    or(&mut kept.pdf_url, other.pdf_url);
    for source in other.sources {
        if !kept.sources.contains(&source) {
            kept.sources.push(source);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paper(source: &'static str, title: &str, doi: Option<&str>, arxiv: Option<&str>) -> Paper {
        Paper {
            title: title.to_owned(),
            doi: doi.map(str::to_owned),
            arxiv_id: arxiv.map(str::to_owned),
            sources: vec![source],
            ..Paper::default()
        }
    }

    #[test]
    fn papers_sharing_an_id_or_a_bare_title_become_one_ranked_by_fusion() {
        let a = vec![
            paper("a", "Only in A", Some("10.1/only-a"), None),
            paper("a", "Attention", None, Some("1706.03762v7")),
        ];
        let b = vec![
            Paper {
                doi: Some("10.48550/ARXIV.1706.03762".into()),
                year: Some(2017),
                ..paper("b", "Attention (b)", None, None)
            },
            paper("b", "No ids", None, None),
        ];
        let c = vec![paper("c", "no IDS.", None, None)];
        let got = merge(vec![a, b, c], 10);
        let summary: Vec<(&str, Vec<&str>, Option<u16>)> = got
            .iter()
            .map(|p| (p.title.as_str(), p.sources.clone(), p.year))
            .collect();
        assert_eq!(
            summary,
            [
                ("Attention", vec!["a", "b"], Some(2017)),
                ("No ids", vec!["b", "c"], None),
                ("Only in A", vec!["a"], None),
            ]
        );
        assert_eq!(merge(vec![got], 1).len(), 1);
    }
}
