//! Confusable pairs: two tools whose definitions are so alike that a model — or Tool RAG,
//! which ranks by the same words — will pick one for the other. Each tool's definition is
//! put to Tool RAG's own BM25 index ([`toolgate_rag::bm25::Bm25Index`]) as a query; the
//! other tool's score relative to the tool's own is how much it looks like it. A pair's
//! similarity is the mean of both directions. Vectors (Tool RAG's encoder, when the binary
//! has one) are compared by cosine in [`pairs_by_vectors`].

use std::collections::BTreeMap;

use serde::Serialize;
use toolgate_protocol::ToolSpec;
use toolgate_rag::ToolDoc;
use toolgate_rag::bm25::{Bm25Index, Bm25Params};

/// Two tools too alike, `a` before `b` in catalog order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConfusablePair {
    pub a: String,
    pub b: String,
    /// 0 to 1 (BM25: relative to each tool's own score; vectors: cosine).
    pub similarity: f32,
    /// `bm25` or `encoder`.
    pub by: &'static str,
}

/// What a tool is queried by: its name's words and its description.
fn query_text(spec: &ToolSpec) -> String {
    format!(
        "{} {}",
        crate::name::own_name(&spec.name).replace(['_', '-'], " "),
        spec.description
    )
}

/// Pairs whose BM25 similarity is at least `threshold`, most similar first.
pub fn confusable_pairs(specs: &[ToolSpec], threshold: f32) -> Vec<ConfusablePair> {
    let mut index = Bm25Index::new(Bm25Params::default());
    for (slot, spec) in (0u32..).zip(specs) {
        index.insert(slot, &ToolDoc::from_spec(spec));
    }
    // (i, j) with i < j → the two directions' relative scores.
    let mut both: BTreeMap<(usize, usize), [f32; 2]> = BTreeMap::new();
    for (i, spec) in specs.iter().enumerate() {
        let scores = index.score(&query_text(spec));
        let own = scores
            .iter()
            .find(|(slot, _)| *slot as usize == i)
            .map_or(0.0, |(_, s)| *s);
        if own <= 0.0 {
            continue;
        }
        for &(slot, score) in &scores {
            let j = slot as usize;
            if j == i {
                continue;
            }
            let key = (i.min(j), i.max(j));
            let dir = usize::from(i > j);
            both.entry(key).or_insert([0.0; 2])[dir] = (score / own).min(1.0);
        }
    }
    let mut pairs: Vec<ConfusablePair> = both
        .into_iter()
        .map(|((i, j), [x, y])| ConfusablePair {
            a: specs[i].name.clone(),
            b: specs[j].name.clone(),
            similarity: (x + y) / 2.0,
            by: "bm25",
        })
        .filter(|p| p.similarity >= threshold)
        .collect();
    pairs.sort_by(|p, q| q.similarity.total_cmp(&p.similarity));
    pairs
}

/// Pairs whose vectors' cosine is at least `threshold` (`vectors[i]` is `names[i]`'s).
pub fn pairs_by_vectors(
    names: &[String],
    vectors: &[Vec<f32>],
    threshold: f32,
) -> Vec<ConfusablePair> {
    let norm = |v: &[f32]| v.iter().map(|x| x * x).sum::<f32>().sqrt();
    let mut pairs = Vec::new();
    for i in 0..vectors.len().min(names.len()) {
        for j in i + 1..vectors.len().min(names.len()) {
            let (a, b) = (&vectors[i], &vectors[j]);
            let denom = norm(a) * norm(b);
            if denom <= 0.0 || a.len() != b.len() {
                continue;
            }
            let cos = a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>() / denom;
            if cos >= threshold {
                pairs.push(ConfusablePair {
                    a: names[i].clone(),
                    b: names[j].clone(),
                    similarity: cos,
                    by: "encoder",
                });
            }
        }
    }
    pairs.sort_by(|p, q| q.similarity.total_cmp(&p.similarity));
    pairs
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn spec(name: &str, description: &str) -> ToolSpec {
        ToolSpec::new(
            name,
            description,
            json!({"type": "object", "properties": {}}),
        )
    }

    #[test]
    fn near_duplicates_pair_up_and_distinct_tools_do_not() {
        let specs = [
            spec(
                "get_weather",
                "Get the current weather forecast for a city.",
            ),
            spec(
                "fetch_weather",
                "Fetch the current weather forecast for a city.",
            ),
            spec("send_email", "Send an email message to a recipient."),
            spec("read_file", "Read a text file from the workspace."),
        ];
        let pairs = confusable_pairs(&specs, 0.6);
        let names: Vec<(&str, &str)> = pairs.iter().map(|p| (p.a.as_str(), p.b.as_str())).collect();
        assert_eq!(names, [("get_weather", "fetch_weather")]);
        assert!(
            pairs[0].similarity > 0.6 && pairs[0].similarity <= 1.0,
            "{pairs:?}"
        );
    }

    #[test]
    fn vectors_compare_by_cosine() {
        let names = ["a".to_owned(), "b".to_owned(), "c".to_owned()];
        let vectors = [vec![1.0, 0.0], vec![0.99, 0.1], vec![0.0, 1.0]];
        let pairs = pairs_by_vectors(&names, &vectors, 0.9);
        assert_eq!(
            pairs
                .iter()
                .map(|p| (p.a.as_str(), p.b.as_str(), p.by))
                .collect::<Vec<_>>(),
            [("a", "b", "encoder")]
        );
    }
}
