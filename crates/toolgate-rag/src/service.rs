//! [`ToolSearch`]: a [`ToolIndex`] kept in step with the catalog, with the embedder and the
//! vector cache that feed its dense side. The sequence of a refresh:
//! 1. sync the index with the catalog's specs (add / re-index changed / remove gone);
//! 2. for tools without a vector, take what the cache has for their definition keys;
//! 3. embed the rest, store them in the cache, set them in the index.

use std::sync::RwLock;

use serde::Serialize;
use toolgate_protocol::ToolSpec;

use crate::cache::VectorCache;
use crate::dense::Embedder;
use crate::error::RagError;
use crate::fusion::Fusion;
use crate::index::{Hit, Mode, Query, RetrieverScore, SyncStats, ToolIndex};
use crate::recent::RecentQueries;
use crate::rerank::RemoteReranker;

/// What one refresh did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct RefreshStats {
    #[serde(flatten)]
    pub sync: SyncStats,
    /// Vectors taken from the cache.
    pub cached: usize,
    /// Vectors computed by the embedder.
    pub embedded: usize,
}

/// Search over the live catalog.
#[derive(Debug)]
pub struct ToolSearch {
    index: RwLock<ToolIndex>,
    embedder: Option<Embedder>,
    cache: Option<std::sync::Arc<VectorCache>>,
    fusion: Fusion,
    /// The last query texts' vectors: the agent loop asks for the same one at every step.
    queries: RecentQueries,
    /// The second stage and how many fused candidates it reorders.
    reranker: Option<(RemoteReranker, usize)>,
    /// The reranker's scores for the last (query, candidates) pairs: each step of a turn
    /// asks for the same ones, and each is a remote request.
    reranked: RecentQueries,
}

impl ToolSearch {
    /// BM25 only unless an embedder is given; vectors are cached only with a cache.
    pub fn new(embedder: Option<Embedder>, cache: Option<VectorCache>, fusion: Fusion) -> Self {
        ToolSearch {
            index: RwLock::new(ToolIndex::default()),
            embedder,
            cache: cache.map(std::sync::Arc::new),
            fusion,
            queries: RecentQueries::default(),
            reranker: None,
            reranked: RecentQueries::default(),
        }
    }

    /// Reorders the best `depth` permitted candidates of every search with `reranker`
    /// before the top K is cut.
    #[must_use]
    pub fn with_reranker(mut self, reranker: RemoteReranker, depth: usize) -> Self {
        self.reranker = Some((reranker, depth.max(1)));
        self
    }

    /// How many fused candidates the reranker reorders, when one is configured.
    pub fn reranker_depth(&self) -> Option<usize> {
        self.reranker.as_ref().map(|(_, depth)| *depth)
    }

    pub fn has_embedder(&self) -> bool {
        self.embedder.is_some()
    }

    pub fn embedder(&self) -> Option<&Embedder> {
        self.embedder.as_ref()
    }

    /// Runs `f` on the index (read lock).
    pub fn with_index<T>(&self, f: impl FnOnce(&ToolIndex) -> T) -> T {
        let guard = self.index.read().unwrap_or_else(|p| p.into_inner());
        f(&guard)
    }

    /// Brings the index in line with `specs`, embedding only what the cache lacks.
    pub async fn refresh<'s>(
        &self,
        specs: impl IntoIterator<Item = &'s ToolSpec>,
    ) -> Result<RefreshStats, RagError> {
        let (sync, missing) = {
            let mut ix = self.index.write().unwrap_or_else(|p| p.into_inner());
            let sync = ix.sync(specs);
            (sync, ix.missing_vectors())
        };
        let mut stats = RefreshStats {
            sync,
            ..RefreshStats::default()
        };
        let Some(embedder) = &self.embedder else {
            return Ok(stats);
        };
        if missing.is_empty() {
            return Ok(stats);
        }
        let model = embedder.id().to_owned();
        // The cache is SQLite: read and written on the blocking pool.
        let cached = match &self.cache {
            Some(c) => {
                let (c, model) = (std::sync::Arc::clone(c), model.clone());
                let keys: Vec<String> = missing.iter().map(|m| m.1.clone()).collect();
                blocking(move || {
                    let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
                    c.get_many(&model, &keys)
                })
                .await?
            }
            None => Default::default(),
        };
        let todo: Vec<&(String, String, String)> = missing
            .iter()
            .filter(|m| !cached.contains_key(&m.1))
            .collect();
        let texts: Vec<String> = todo.iter().map(|m| m.2.clone()).collect();
        let fresh = if texts.is_empty() {
            Vec::new()
        } else {
            embedder.embed(&texts).await?
        };
        if let Some(c) = &self.cache
            && !fresh.is_empty()
        {
            let c = std::sync::Arc::clone(c);
            let rows: Vec<(String, Vec<f32>)> = todo
                .iter()
                .zip(&fresh)
                .map(|(m, v)| (m.1.clone(), v.clone()))
                .collect();
            blocking(move || {
                let rows: Vec<(&str, &[f32])> = rows
                    .iter()
                    .map(|(k, v)| (k.as_str(), v.as_slice()))
                    .collect();
                c.put_many(&model, &rows)
            })
            .await?;
        }
        let mut ix = self.index.write().unwrap_or_else(|p| p.into_inner());
        for (name, key, _) in &missing {
            if let Some(v) = cached.get(key) {
                // The tool may have changed again meanwhile: only set a still-current key.
                if ix.doc(name).is_some_and(|d| &d.key == key) && ix.set_vector(name, v) {
                    stats.cached += 1;
                }
            }
        }
        for (m, v) in todo.iter().zip(&fresh) {
            if ix.doc(&m.0).is_some_and(|d| d.key == m.1) && ix.set_vector(&m.0, v) {
                stats.embedded += 1;
            }
        }
        Ok(stats)
    }

    /// Embeds the query when the mode needs it and an embedder exists, then searches;
    /// timed as `toolgate.rag.search.duration`.
    pub async fn search(
        &self,
        text: &str,
        k: usize,
        mode: Mode,
        admit: &(dyn Fn(&str) -> bool + Sync),
    ) -> Result<Vec<Hit>, RagError> {
        let began = std::time::Instant::now();
        let hits = self.search_untimed(text, k, mode, admit).await;
        toolgate_telemetry::metrics()
            .rag_search
            .record(began.elapsed().as_secs_f64(), &[]);
        hits
    }

    async fn search_untimed(
        &self,
        text: &str,
        k: usize,
        mode: Mode,
        admit: &(dyn Fn(&str) -> bool + Sync),
    ) -> Result<Vec<Hit>, RagError> {
        let vector = match (&self.embedder, mode) {
            (Some(e), Mode::Dense | Mode::Hybrid) => match self.queries.get(text) {
                Some(v) => Some(v),
                None => {
                    let v = e.embed(&[text.to_owned()]).await?.into_iter().next();
                    let v = v.map(std::sync::Arc::new);
                    if let Some(v) = &v {
                        self.queries.put(text, std::sync::Arc::clone(v));
                    }
                    v
                }
            },
            _ => None,
        };
        if mode == Mode::Dense && vector.is_none() {
            return Err(RagError::NoEmbedder);
        }
        let candidates = match &self.reranker {
            Some((_, depth)) => k.max(*depth),
            None => k,
        };
        let q = Query {
            text,
            vector: vector.as_deref().map(Vec::as_slice),
            mode,
            k: candidates,
            fusion: self.fusion,
        };
        let mut hits = self.with_index(|ix| ix.search(&q, admit));
        if let Some((reranker, _)) = &self.reranker {
            self.rerank(reranker, text, &mut hits).await;
        }
        hits.truncate(k);
        Ok(hits)
    }

    /// Reorders `hits` (already filtered) by the reranker's scores; on failure keeps the
    /// fused order, so a search never fails because the second stage is down.
    async fn rerank(&self, reranker: &RemoteReranker, query: &str, hits: &mut [Hit]) {
        if hits.len() < 2 {
            return;
        }
        // The candidates by definition key: a changed tool is scored again.
        let (texts, key) = self.with_index(|ix| {
            let mut key = query.to_owned();
            let texts: Vec<String> = hits
                .iter()
                .map(|h| {
                    let doc = ix.doc(&h.name);
                    key.push('\0');
                    key.push_str(doc.map_or("", |d| d.key.as_str()));
                    doc.map(|d| d.embedding_text()).unwrap_or_default()
                })
                .collect();
            (texts, key)
        });
        let scores = match self.reranked.get(&key) {
            Some(scores) => scores,
            None => match reranker.scores(query, &texts).await {
                Ok(scores) => {
                    let scores = std::sync::Arc::new(scores);
                    self.reranked.put(&key, std::sync::Arc::clone(&scores));
                    scores
                }
                Err(e) => {
                    tracing::warn!(error = %e, "reranking failed; keeping the fused order");
                    return;
                }
            },
        };
        for (h, &s) in hits.iter_mut().zip(scores.iter()) {
            h.rerank = Some(RetrieverScore { rank: 0, score: s });
            h.score = s;
        }
        // Stable: equal scores keep the fused order.
        hits.sort_by(|a, b| b.score.total_cmp(&a.score));
        for (i, h) in hits.iter_mut().enumerate() {
            if let Some(r) = &mut h.rerank {
                r.rank = i + 1;
            }
        }
    }
}

/// Runs `work` on the blocking pool.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, RagError> + Send + 'static,
) -> Result<T, RagError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| RagError::Model(format!("a blocking task of the tool index failed: {e}")))?
}
