//! Scoring the retrievers on an [`EvalSet`]: [`evaluate`] one catalog size, [`run`] every size
//! (embedding through the vector cache), [`export`] for the Python references
//! (`crates/toolgate-eval/scripts/rag_reference.py`) and their rows beside ours.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;
use toolgate_rag::bm25::Bm25Params;
use toolgate_rag::index::{FUSION_DEPTH, ToolIndex};
use toolgate_rag::{Fusion, LocalEmbedder, RagError, ToolDoc, VectorCache};

use super::metrics::{Metrics, MetricsSum};
use super::set::{EvalSet, Subset};

/// Why the retrieval eval could not run.
#[derive(Debug, thiserror::Error)]
pub enum RetrievalError {
    /// The model, the vector cache or the reranker failed.
    #[error(transparent)]
    Rag(#[from] RagError),
    /// A reranker was asked for without vectors: there is no hybrid ranking to reorder.
    #[error(
        "reranking in the eval needs an embedding model (--model-dir or [rag] model_dir): it \
         reorders the hybrid ranking"
    )]
    RerankWithoutModel,
    /// The reranker answered a different number of scores than candidates sent.
    #[error("reranker: scored {scored} of {sent} candidates")]
    RerankCount {
        /// Scores received.
        scored: usize,
        /// Candidates sent.
        sent: usize,
    },
    /// The export for the references could not be written.
    #[error("export to {}: {error}", dir.display())]
    Export {
        /// The export directory.
        dir: PathBuf,
        /// The cause (shown in the message).
        error: std::io::Error,
    },
    /// The reference script could not be started.
    #[error("running {}: {error}", python.display())]
    ReferenceStart {
        /// The Python interpreter.
        python: PathBuf,
        /// The cause (shown in the message).
        error: std::io::Error,
    },
    /// The reference script failed (its standard error).
    #[error("the reference script failed: {0}")]
    ReferenceFailed(String),
    /// The reference script printed something other than report rows.
    #[error("reading the reference results: {0}")]
    ReferenceOutput(serde_json::Error),
}

/// `(doc vectors, query vectors)`, indexed like [`EvalSet::docs`] and [`EvalSet::queries`].
pub type Vectors<'a> = (&'a [Vec<f32>], &'a [Vec<f32>]);

/// One row of the report: a retriever's mean metrics on one catalog size.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct ReportRow {
    pub catalog: String,
    pub tools: usize,
    pub queries: usize,
    pub retriever: String,
    pub recall_at_1: f64,
    pub recall_at_5: f64,
    pub recall_at_10: f64,
    pub mrr: f64,
    pub ndcg_at_10: f64,
}

impl ReportRow {
    fn new(subset: &Subset, retriever: &str, m: Metrics) -> Self {
        ReportRow {
            catalog: subset.label.clone(),
            tools: subset.docs.len(),
            queries: subset.queries.len(),
            retriever: retriever.to_owned(),
            recall_at_1: m.recall_at_1,
            recall_at_5: m.recall_at_5,
            recall_at_10: m.recall_at_10,
            mrr: m.mrr,
            ndcg_at_10: m.ndcg_at_10,
        }
    }
}

/// A second stage for the eval: relevance scores for `documents` given the query, in their
/// order (`toolgate eval retrieval --rerank` wraps `[rag.reranker]` in one).
pub type RerankFn = dyn Fn(&str, &[String]) -> Result<Vec<f32>, RagError> + Send + Sync;

/// A reranker and how many fused candidates it reorders.
#[derive(Clone)]
pub struct Rerank {
    pub scores: Arc<RerankFn>,
    pub depth: usize,
}

impl std::fmt::Debug for Rerank {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rerank")
            .field("depth", &self.depth)
            .finish()
    }
}

/// Scores BM25, dense (when vectors are given) and hybrid with each of `fusions` on one
/// subset. With `rerank`, the first fusion's best `depth` candidates are also reordered by
/// it (`hybrid F + rerank`). With `by_name`, every retriever is scored a second time at the name level: docs
/// sharing a name count as one (the first ranked stands for the name), and a query's relevant
/// set is its ground-truth names — what a catalog with unique names (R-REG-1) would show. `doc_vectors[i]` belongs to `set.docs[i]`, `query_vectors[i]` to `set.queries[i]`.
pub fn evaluate(
    set: &EvalSet,
    subset: &Subset,
    params: Bm25Params,
    vectors: Option<Vectors<'_>>,
    fusions: &[(String, Fusion)],
    by_name: bool,
    rerank: Option<&Rerank>,
) -> Result<Vec<ReportRow>, RetrievalError> {
    let mut ix = ToolIndex::new(params);
    for &d in &subset.docs {
        ix.upsert_doc(set.docs[d].clone());
        if let Some((dv, _)) = vectors {
            ix.set_vector(&set.docs[d].id, &dv[d]);
        }
    }
    let mut labels = vec!["bm25".to_owned()];
    if vectors.is_some() {
        labels.push("dense".to_owned());
        labels.extend(fusions.iter().map(|(l, _)| format!("hybrid {l}")));
        if let (Some(_), Some((l, _))) = (rerank, fusions.first()) {
            labels.push(format!("hybrid {l} + rerank"));
        }
    }
    if by_name {
        let named: Vec<String> = labels.iter().map(|l| format!("{l} (by name)")).collect();
        labels.extend(named);
    }
    let mut sums = vec![MetricsSum::default(); labels.len()];
    let admit = |_: &str| true;
    for &qi in &subset.queries {
        let q = &set.queries[qi];
        let relevant: HashSet<String> = q.relevant.iter().cloned().collect();
        // Each retriever ranks once; every fusion reuses the two rankings (as search() does).
        let lexical = ix.rank_bm25(&q.text, FUSION_DEPTH, &admit);
        let mut rankings = vec![lexical.clone()];
        if let Some((_, qv)) = vectors {
            let dense = ix.rank_dense(&qv[qi], FUSION_DEPTH, &admit);
            rankings.push(dense.clone());
            for (_, f) in fusions {
                rankings.push(toolgate_rag::fusion::fuse(*f, &lexical, &dense));
            }
            if let (Some(r), Some(fused)) = (rerank, rankings.get(2)) {
                let reranked = rerank_ranking(&ix, r, &q.text, fused)?;
                rankings.push(reranked);
            }
        }
        for (i, ranking) in rankings.iter().enumerate() {
            let ids: Vec<&str> = ranking
                .iter()
                .take(10)
                .filter_map(|(slot, _)| ix.id_of(*slot))
                .collect();
            sums[i].add(Metrics::of(&ids, &relevant));
            if by_name {
                // As if the catalog had one doc per name: the first doc of a name stands for
                // all of them, later ones are dropped from the ranking.
                let mut seen = HashSet::new();
                let names: Vec<&str> = ranking
                    .iter()
                    .filter_map(|(slot, _)| ix.id_of(*slot))
                    .map(base_name)
                    .filter(|n| seen.insert(*n))
                    .take(10)
                    .collect();
                let rel: HashSet<String> =
                    q.relevant.iter().map(|r| base_name(r).to_owned()).collect();
                sums[i + labels.len() / 2].add(Metrics::of(&names, &rel));
            }
        }
    }
    Ok(labels
        .iter()
        .zip(&sums)
        .map(|(label, s)| ReportRow::new(subset, label, s.mean()))
        .collect())
}

/// `fused`'s best `depth` reordered by the reranker (stable on ties), the rest after them.
fn rerank_ranking(
    ix: &ToolIndex,
    r: &Rerank,
    query: &str,
    fused: &[(u32, f32)],
) -> Result<Vec<(u32, f32)>, RetrievalError> {
    let depth = r.depth.min(fused.len());
    let texts: Vec<String> = fused[..depth]
        .iter()
        .map(|(slot, _)| {
            ix.id_of(*slot)
                .and_then(|id| ix.doc(id))
                .map(ToolDoc::embedding_text)
                .unwrap_or_default()
        })
        .collect();
    let scores = (r.scores)(query, &texts)?;
    if scores.len() != depth {
        return Err(RetrievalError::RerankCount {
            scored: scores.len(),
            sent: depth,
        });
    }
    let mut head: Vec<(u32, f32)> = fused[..depth]
        .iter()
        .zip(scores)
        .map(|(&(slot, _), s)| (slot, s))
        .collect();
    head.sort_by(|a, b| b.1.total_cmp(&a.1));
    head.extend_from_slice(&fused[depth..]);
    Ok(head)
}

/// Writes the eval set for the Python references (`scripts/rag_reference.py`):
/// `docs.jsonl` (id, text), `queries.jsonl` (id, text, relevant), `subsets.json` (label →
/// doc and query indices) and, with vectors, `doc_vectors.f32` / `query_vectors.f32`
/// (row-major little-endian float32).
pub fn export(
    set: &EvalSet,
    subsets: &[Subset],
    vectors: Option<Vectors<'_>>,
    dir: &Path,
) -> std::io::Result<()> {
    use std::io::Write;
    std::fs::create_dir_all(dir)?;
    let mut f = std::io::BufWriter::new(std::fs::File::create(dir.join("docs.jsonl"))?);
    for d in &set.docs {
        let text = format!("{} {} {}", d.name, d.description, d.params.join(" "));
        writeln!(f, "{}", serde_json::json!({"id": d.id, "text": text}))?;
    }
    f.flush()?;
    let mut f = std::io::BufWriter::new(std::fs::File::create(dir.join("queries.jsonl"))?);
    for q in &set.queries {
        writeln!(
            f,
            "{}",
            serde_json::to_string(q).map_err(std::io::Error::other)?
        )?;
    }
    f.flush()?;
    let subsets: Vec<Value> = subsets
        .iter()
        .map(|s| serde_json::json!({"label": s.label, "docs": s.docs, "queries": s.queries}))
        .collect();
    std::fs::write(
        dir.join("subsets.json"),
        serde_json::to_vec(&subsets).map_err(std::io::Error::other)?,
    )?;
    if let Some((dv, qv)) = vectors {
        for (name, rows) in [("doc_vectors.f32", dv), ("query_vectors.f32", qv)] {
            let bytes: Vec<u8> = rows
                .iter()
                .flat_map(|r| r.iter().flat_map(|x| x.to_le_bytes()))
                .collect();
            std::fs::write(dir.join(name), bytes)?;
        }
    }
    Ok(())
}

/// What [`run`] needs.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Catalog sizes below the full set.
    pub sizes: Vec<usize>,
    pub seed: u64,
    /// A local model directory for dense and hybrid (none: BM25 only).
    pub model_dir: Option<PathBuf>,
    /// The vector cache file (reruns embed nothing).
    pub cache: Option<PathBuf>,
    /// Where to write the export for the Python references; with `python`, they are run.
    pub export_dir: Option<PathBuf>,
    /// The Python with rank-bm25 and numpy, and the reference script.
    pub python: Option<(PathBuf, PathBuf)>,
    pub fusions: Vec<(String, Fusion)>,
    /// Also score at the name level (see [`evaluate`]).
    pub by_name: bool,
    /// A second stage over the first fusion (see [`evaluate`]).
    pub rerank: Option<Rerank>,
}

/// `name#2` → `name`.
fn base_name(id: &str) -> &str {
    id.split_once('#').map_or(id, |(n, _)| n)
}

fn embed_cached(
    model: &LocalEmbedder,
    cache: Option<&VectorCache>,
    items: &[(String, String)],
) -> Result<Vec<Vec<f32>>, RagError> {
    let keys: Vec<&str> = items.iter().map(|i| i.0.as_str()).collect();
    let mut have = match cache {
        Some(c) => c.get_many(model.id(), &keys)?,
        None => HashMap::new(),
    };
    let todo: Vec<&(String, String)> = items.iter().filter(|i| !have.contains_key(&i.0)).collect();
    for chunk in todo.chunks(256) {
        let texts: Vec<String> = chunk.iter().map(|i| i.1.clone()).collect();
        let vecs = model.embed(&texts)?;
        if let Some(c) = cache {
            let rows: Vec<(&str, &[f32])> = chunk
                .iter()
                .zip(&vecs)
                .map(|(i, v)| (i.0.as_str(), v.as_slice()))
                .collect();
            c.put_many(model.id(), &rows)?;
        }
        for (i, v) in chunk.iter().zip(vecs) {
            have.insert(i.0.clone(), v);
        }
    }
    Ok(items
        .iter()
        .map(|i| have.get(&i.0).cloned().unwrap_or_default())
        .collect())
}

fn text_key(prefix: &str, text: &str) -> String {
    use sha2::{Digest, Sha256};
    format!("{prefix}:{}", hex::encode(Sha256::digest(text.as_bytes())))
}

/// Builds the catalog sizes, embeds (through the cache), scores every retriever, and runs
/// the Python references on the same export. Rows: ours first, then the references.
pub fn run(set: &EvalSet, opts: &RunOptions) -> Result<Vec<ReportRow>, RetrievalError> {
    if opts.rerank.is_some() && opts.model_dir.is_none() {
        // The reranker reorders the hybrid ranking; without vectors there is none.
        return Err(RetrievalError::RerankWithoutModel);
    }
    let mut subsets: Vec<Subset> = opts
        .sizes
        .iter()
        .filter(|&&n| n < set.docs.len())
        .map(|&n| set.sample(n, opts.seed))
        .collect();
    subsets.push(set.full());
    let vectors = match &opts.model_dir {
        Some(dir) => {
            let model = LocalEmbedder::load(dir)?;
            let cache = opts.cache.as_ref().map(VectorCache::open).transpose()?;
            let docs: Vec<(String, String)> = set
                .docs
                .iter()
                .map(|d| (d.key.clone(), d.embedding_text()))
                .collect();
            let queries: Vec<(String, String)> = set
                .queries
                .iter()
                .map(|q| (text_key("query", &q.text), q.text.clone()))
                .collect();
            Some((
                embed_cached(&model, cache.as_ref(), &docs)?,
                embed_cached(&model, cache.as_ref(), &queries)?,
            ))
        }
        None => None,
    };
    let refs = vectors.as_ref().map(|(d, q)| (d.as_slice(), q.as_slice()));
    let mut rows = Vec::new();
    for s in &subsets {
        rows.extend(evaluate(
            set,
            s,
            Bm25Params::default(),
            refs,
            &opts.fusions,
            opts.by_name,
            opts.rerank.as_ref(),
        )?);
    }
    if let Some(dir) = &opts.export_dir {
        export(set, &subsets, refs, dir).map_err(|error| RetrievalError::Export {
            dir: dir.clone(),
            error,
        })?;
        if let Some((python, script)) = &opts.python {
            let out = std::process::Command::new(python)
                .arg(script)
                .arg(dir)
                .output()
                .map_err(|error| RetrievalError::ReferenceStart {
                    python: python.clone(),
                    error,
                })?;
            if !out.status.success() {
                return Err(RetrievalError::ReferenceFailed(
                    String::from_utf8_lossy(&out.stderr).into_owned(),
                ));
            }
            let theirs: Vec<ReportRow> =
                serde_json::from_slice(&out.stdout).map_err(RetrievalError::ReferenceOutput)?;
            rows.extend(theirs);
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::retrieval::set::EvalQuery;
    use serde_json::json;
    use toolgate_rag::EndpointError;

    /// Three weather tools (two sharing a name), one unrelated; one query wanting `forecast`.
    fn tiny() -> (EvalSet, Vec<Vec<f32>>, Vec<Vec<f32>>) {
        let doc = |id: &str, name: &str, desc: &str| ToolDoc::new(id, name, desc, &json!({}));
        let docs = vec![
            doc(
                "weather_now",
                "weather_now",
                "Current weather in a city, weather now.",
            ),
            doc(
                "forecast",
                "forecast",
                "Weather forecast for the next days.",
            ),
            doc("forecast#2", "forecast", "Weather forecast, hourly."),
            doc("tides", "tides", "Tide tables."),
        ];
        let queries = vec![EvalQuery {
            id: "q".into(),
            text: "weather now and later".into(),
            relevant: vec!["forecast".into()],
        }];
        // The dense side agrees with BM25: weather_now first.
        let dv = vec![
            vec![1.0, 0.0],
            vec![0.8, 0.6],
            vec![0.6, 0.8],
            vec![0.0, 1.0],
        ];
        let qv = vec![vec![1.0, 0.0]];
        let set = EvalSet {
            docs,
            queries,
            from_entries: 4,
        };
        (set, dv, qv)
    }

    fn row<'a>(rows: &'a [ReportRow], label: &str) -> &'a ReportRow {
        rows.iter()
            .find(|r| r.retriever == label)
            .unwrap_or_else(|| panic!("no row {label}"))
    }

    #[test]
    fn a_reranker_reorders_the_first_fusion_and_is_scored_at_both_levels() {
        let (set, dv, qv) = tiny();
        let fusions = vec![("convex:0.6".to_owned(), "convex:0.6".parse().unwrap())];
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let log = Arc::clone(&seen);
        let rerank = Rerank {
            // Prefers what says "forecast, hourly": the query's own copy comes second.
            scores: Arc::new(move |q: &str, docs: &[String]| {
                log.lock().unwrap().push((q.to_owned(), docs.len()));
                Ok(docs
                    .iter()
                    .map(|d| {
                        d.matches("forecast").count() as f32 + d.matches("hourly").count() as f32
                    })
                    .collect())
            }),
            depth: 3,
        };
        let rows = evaluate(
            &set,
            &set.full(),
            Bm25Params::default(),
            Some((&dv, &qv)),
            &fusions,
            true,
            Some(&rerank),
        )
        .unwrap();
        let fused = row(&rows, "hybrid convex:0.6");
        let reranked = row(&rows, "hybrid convex:0.6 + rerank");
        assert_eq!(fused.recall_at_1, 0.0);
        // forecast#2 first, forecast (the relevant doc) second.
        assert_eq!((reranked.recall_at_1, reranked.mrr), (0.0, 0.5));
        // By name both copies are `forecast`: first place.
        assert_eq!(
            row(&rows, "hybrid convex:0.6 + rerank (by name)").recall_at_1,
            1.0
        );
        assert_eq!(rows.len(), 8);
        assert_eq!(
            *seen.lock().unwrap(),
            [("weather now and later".to_owned(), 3)]
        );
    }

    #[test]
    fn a_failing_reranker_fails_the_eval_with_its_message() {
        let (set, dv, qv) = tiny();
        let fusions = vec![("rrf:60".to_owned(), "rrf:60".parse().unwrap())];
        let rerank = Rerank {
            scores: Arc::new(|_: &str, _: &[String]| {
                Err(RagError::Reranker(EndpointError::Unscored {
                    url: "http://r/v1/rerank".parse().unwrap(),
                    missing: 2,
                    sent: 4,
                }))
            }),
            depth: 50,
        };
        let err = evaluate(
            &set,
            &set.full(),
            Bm25Params::default(),
            Some((&dv, &qv)),
            &fusions,
            false,
            Some(&rerank),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("http://r/v1/rerank left 2 of 4 documents unscored"),
            "{err}"
        );
    }
}
