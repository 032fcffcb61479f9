//! [`ToolIndex`]: BM25 and dense vectors over the catalog's tools, updated one tool at a
//! time, searched through a caller-supplied filter that runs before the ranking is cut.
//!
//! Each tool occupies a slot (reused after removal). BM25 postings are edited in place; the
//! dense side is a flat `slots × dim` matrix searched by brute force (exact cosine, since
//! vectors are unit length), which at 10,000 × 384 is a few milliseconds at most.

use std::collections::HashMap;

use serde::Serialize;
use toolgate_protocol::ToolSpec;

use crate::bm25::{Bm25Index, Bm25Params};
use crate::dense::kernel::{dot_rows_i8, dot_rows_of, quantize};
use crate::doc::ToolDoc;
use crate::fusion::{Fusion, fuse};

/// Which retriever(s) to rank with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Bm25,
    Dense,
    Hybrid,
}

/// A retriever name that is not `bm25`, `dense` or `hybrid`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown retriever `{0}` (expected bm25, dense or hybrid)")]
pub struct ParseModeError(pub String);

impl std::str::FromStr for Mode {
    type Err = ParseModeError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "bm25" => Ok(Mode::Bm25),
            "dense" => Ok(Mode::Dense),
            "hybrid" => Ok(Mode::Hybrid),
            _ => Err(ParseModeError(s.to_owned())),
        }
    }
}

/// One search.
#[derive(Debug, Clone)]
pub struct Query<'q> {
    pub text: &'q str,
    /// The query's embedding (same model as the index); `None` means BM25 only.
    pub vector: Option<&'q [f32]>,
    pub mode: Mode,
    pub k: usize,
    pub fusion: Fusion,
}

/// One result, with what each retriever said about it (1-based ranks among permitted tools).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hit {
    pub name: String,
    pub score: f32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bm25: Option<RetrieverScore>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dense: Option<RetrieverScore>,
    /// The reranker's rank among the candidates it scored, and its score (`[rag.reranker]`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rerank: Option<RetrieverScore>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RetrieverScore {
    pub rank: usize,
    pub score: f32,
}

/// What [`ToolIndex::sync`] changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SyncStats {
    pub added: usize,
    pub updated: usize,
    pub removed: usize,
    pub unchanged: usize,
}

#[derive(Debug, Clone)]
struct Slot {
    doc: ToolDoc,
    has_vector: bool,
}

/// The index. Not internally synchronised: wrap it in a lock (or rebuild into a new one and
/// swap) when readers and a writer share it.
#[derive(Debug, Clone)]
pub struct ToolIndex {
    bm25: Bm25Index,
    slots: Vec<Option<Slot>>,
    by_name: HashMap<String, u32>,
    free: Vec<u32>,
    dim: usize,
    /// `slots.len() × dim`, zero where a slot has no vector.
    vectors: Vec<f32>,
    /// The same vectors quantised to i8 (the first pass of a dense ranking) and their scales.
    codes: Vec<i8>,
    scales: Vec<f32>,
}

/// How many permitted candidates each retriever contributes to fusion (at least `k`).
pub const FUSION_DEPTH: usize = 100;

impl Default for ToolIndex {
    fn default() -> Self {
        ToolIndex::new(Bm25Params::default())
    }
}

impl ToolIndex {
    pub fn new(params: Bm25Params) -> Self {
        ToolIndex {
            bm25: Bm25Index::new(params),
            slots: Vec::new(),
            by_name: HashMap::new(),
            free: Vec::new(),
            dim: 0,
            vectors: Vec::new(),
            codes: Vec::new(),
            scales: Vec::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.by_name.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }

    pub fn contains(&self, name: &str) -> bool {
        self.by_name.contains_key(name)
    }

    /// Indexed tool names (unordered).
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.by_name.keys().map(String::as_str)
    }

    pub fn doc(&self, name: &str) -> Option<&ToolDoc> {
        let slot = *self.by_name.get(name)?;
        self.slots[slot as usize].as_ref().map(|s| &s.doc)
    }

    /// Adds or replaces one tool. Returns false when an identical definition is already
    /// indexed (nothing changes, its vector is kept).
    pub fn upsert(&mut self, spec: &ToolSpec) -> bool {
        self.upsert_doc(ToolDoc::from_spec(spec))
    }

    pub fn upsert_doc(&mut self, doc: ToolDoc) -> bool {
        if let Some(&slot) = self.by_name.get(&doc.id) {
            if self.slots[slot as usize]
                .as_ref()
                .is_some_and(|s| s.doc.key == doc.key)
            {
                return false;
            }
            self.bm25.insert(slot, &doc);
            self.clear_vector(slot);
            self.slots[slot as usize] = Some(Slot {
                doc,
                has_vector: false,
            });
            return true;
        }
        let slot = self.free.pop().unwrap_or_else(|| {
            self.slots.push(None);
            if self.dim > 0 {
                self.vectors.extend(std::iter::repeat_n(0.0, self.dim));
                self.codes.extend(std::iter::repeat_n(0, self.dim));
                self.scales.push(0.0);
            }
            u32::try_from(self.slots.len() - 1).unwrap_or(u32::MAX)
        });
        self.bm25.insert(slot, &doc);
        self.by_name.insert(doc.id.clone(), slot);
        self.slots[slot as usize] = Some(Slot {
            doc,
            has_vector: false,
        });
        true
    }

    /// Removes one tool; false if it was not indexed.
    pub fn remove(&mut self, name: &str) -> bool {
        let Some(slot) = self.by_name.remove(name) else {
            return false;
        };
        self.bm25.remove(slot);
        self.clear_vector(slot);
        self.slots[slot as usize] = None;
        self.free.push(slot);
        true
    }

    /// Makes the index hold exactly `specs`: adds new, re-indexes changed, removes gone.
    pub fn sync<'s>(&mut self, specs: impl IntoIterator<Item = &'s ToolSpec>) -> SyncStats {
        let mut stats = SyncStats::default();
        let mut seen = std::collections::HashSet::new();
        for spec in specs {
            seen.insert(spec.name.clone());
            let existed = self.contains(&spec.name);
            match (existed, self.upsert(spec)) {
                (false, _) => stats.added += 1,
                (true, true) => stats.updated += 1,
                (true, false) => stats.unchanged += 1,
            }
        }
        let gone: Vec<String> = self
            .by_name
            .keys()
            .filter(|n| !seen.contains(*n))
            .cloned()
            .collect();
        for n in gone {
            self.remove(&n);
            stats.removed += 1;
        }
        stats
    }

    /// Tools without a vector: `(id, cache key, text to embed)`.
    pub fn missing_vectors(&self) -> Vec<(String, String, String)> {
        self.slots
            .iter()
            .flatten()
            .filter(|s| !s.has_vector)
            .map(|s| (s.doc.id.clone(), s.doc.key.clone(), s.doc.embedding_text()))
            .collect()
    }

    /// The vector dimension (0 until the first vector is set).
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Sets `name`'s vector; false if the tool is unknown or the dimension differs from the
    /// vectors already held.
    pub fn set_vector(&mut self, name: &str, vector: &[f32]) -> bool {
        let Some(&slot) = self.by_name.get(name) else {
            return false;
        };
        if self.dim == 0 {
            self.dim = vector.len();
            self.vectors = vec![0.0; self.slots.len() * self.dim];
            self.codes = vec![0; self.slots.len() * self.dim];
            self.scales = vec![0.0; self.slots.len()];
        }
        if vector.len() != self.dim {
            return false;
        }
        let at = slot as usize * self.dim;
        self.vectors[at..at + self.dim].copy_from_slice(vector);
        self.scales[slot as usize] = quantize(vector, &mut self.codes[at..at + self.dim]);
        if let Some(s) = self.slots[slot as usize].as_mut() {
            s.has_vector = true;
        }
        true
    }

    fn clear_vector(&mut self, slot: u32) {
        if self.dim > 0 {
            let at = slot as usize * self.dim;
            self.vectors[at..at + self.dim].fill(0.0);
            self.codes[at..at + self.dim].fill(0);
            self.scales[slot as usize] = 0.0;
        }
        if let Some(Some(s)) = self.slots.get_mut(slot as usize) {
            s.has_vector = false;
        }
    }

    /// The id of the tool in `slot` (slots are what [`ToolIndex::rank_bm25`] and
    /// [`ToolIndex::rank_dense`] return).
    pub fn id_of(&self, slot: u32) -> Option<&str> {
        self.name_of(slot)
    }

    fn name_of(&self, slot: u32) -> Option<&str> {
        self.slots
            .get(slot as usize)?
            .as_ref()
            .map(|s| s.doc.id.as_str())
    }

    /// The first `depth` permitted entries of a ranking, best first. The best `4 × depth`
    /// candidates are selected and sorted first (cheap at 10,000 tools); the filter is asked
    /// in order, and only when it rejects too many is the rest sorted and walked too — so
    /// the result is always the true top `depth` of the permitted tools.
    fn permitted(
        &self,
        mut scored: Vec<(u32, f32)>,
        depth: usize,
        admit: &dyn Fn(&str) -> bool,
    ) -> Vec<(u32, f32)> {
        let order = |a: &(u32, f32), b: &(u32, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        let head = depth.saturating_mul(4).max(1);
        let mut rest = if scored.len() > head {
            scored.select_nth_unstable_by(head, order);
            scored.split_off(head)
        } else {
            Vec::new()
        };
        scored.sort_unstable_by(order);
        let mut out = Vec::with_capacity(depth.min(scored.len()));
        let take = |list: Vec<(u32, f32)>, out: &mut Vec<(u32, f32)>| {
            for (slot, s) in list {
                if out.len() >= depth {
                    break;
                }
                if self.name_of(slot).is_some_and(admit) {
                    out.push((slot, s));
                }
            }
        };
        take(scored, &mut out);
        if out.len() < depth && !rest.is_empty() {
            rest.sort_unstable_by(order);
            take(rest, &mut out);
        }
        out
    }

    /// BM25 ranking of permitted tools that share a word with the query.
    pub fn rank_bm25(
        &self,
        text: &str,
        depth: usize,
        admit: &dyn Fn(&str) -> bool,
    ) -> Vec<(u32, f32)> {
        self.permitted(self.bm25.score(text), depth, admit)
    }

    /// Cosine ranking of permitted tools that have a vector. A first pass ranks every tool
    /// on the i8-quantised vectors; the best `4 × depth` are rescored exactly in f32, and only
    /// when the filter rejects too many of them is the rest rescored too. Scores are exact;
    /// the order matches an f32 scan unless the quantisation error moves a tool across the
    /// 4× margin (measured on the retrieval eval's MiniLM vectors, 500 queries × 10,000 tools:
    /// error ≤ 0.003, and none of the 50,000 true top-100 entries fell outside the top 400).
    pub fn rank_dense(
        &self,
        vector: &[f32],
        depth: usize,
        admit: &dyn Fn(&str) -> bool,
    ) -> Vec<(u32, f32)> {
        if self.dim == 0 || vector.len() != self.dim {
            return Vec::new();
        }
        let mut query = vec![0i8; self.dim];
        let qscale = quantize(vector, &mut query);
        let approx = dot_rows_i8(&self.codes, self.dim, &query);
        let mut scored: Vec<(u32, f32)> = self
            .slots
            .iter()
            .zip(approx)
            .zip(&self.scales)
            .enumerate()
            .filter(|(_, ((s, _), _))| s.as_ref().is_some_and(|s| s.has_vector))
            .map(|(i, ((_, d), scale))| {
                let slot = u32::try_from(i).unwrap_or(u32::MAX);
                (slot, d as f32 * scale * qscale)
            })
            .collect();
        let exact = |list: &mut [(u32, f32)]| {
            let slots: Vec<u32> = list.iter().map(|x| x.0).collect();
            let scores = dot_rows_of(&self.vectors, self.dim, vector, &slots);
            for (item, score) in list.iter_mut().zip(scores) {
                item.1 = score;
            }
        };
        let head = depth.saturating_mul(4).max(1);
        if scored.len() > head {
            let order = |a: &(u32, f32), b: &(u32, f32)| b.1.total_cmp(&a.1);
            scored.select_nth_unstable_by(head - 1, order);
            let mut best = scored[..head].to_vec();
            exact(&mut best);
            let out = self.permitted(best, depth, admit);
            if out.len() >= depth {
                return out;
            }
        }
        exact(&mut scored);
        self.permitted(scored, depth, admit)
    }

    /// Searches; `admit` is the filter chain (only tools it admits are ranked or returned).
    /// Hybrid without a query vector degrades to BM25; dense without one returns nothing.
    pub fn search(&self, q: &Query<'_>, admit: &dyn Fn(&str) -> bool) -> Vec<Hit> {
        let k = q.k;
        let depth = k.max(FUSION_DEPTH);
        let lexical = match q.mode {
            Mode::Bm25 | Mode::Hybrid => self.rank_bm25(q.text, depth, admit),
            Mode::Dense => Vec::new(),
        };
        let dense = match (q.mode, q.vector) {
            (Mode::Dense | Mode::Hybrid, Some(v)) => self.rank_dense(v, depth, admit),
            _ => Vec::new(),
        };
        let fused: Vec<(u32, f32)> = match q.mode {
            Mode::Bm25 => lexical.clone(),
            Mode::Dense => dense.clone(),
            Mode::Hybrid if dense.is_empty() => lexical.clone(),
            Mode::Hybrid => fuse(q.fusion, &lexical, &dense),
        };
        let rank_of = |list: &[(u32, f32)], slot: u32| {
            list.iter()
                .position(|x| x.0 == slot)
                .map(|i| RetrieverScore {
                    rank: i + 1,
                    score: list[i].1,
                })
        };
        fused
            .into_iter()
            .take(k)
            .filter_map(|(slot, score)| {
                Some(Hit {
                    name: self.name_of(slot)?.to_owned(),
                    score,
                    bm25: rank_of(&lexical, slot),
                    dense: rank_of(&dense, slot),
                    rerank: None,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(name: &str, desc: &str) -> ToolSpec {
        ToolSpec::new(name, desc, json!({"type": "object"}))
    }

    fn q(text: &str, k: usize) -> Query<'_> {
        Query {
            text,
            vector: None,
            mode: Mode::Bm25,
            k,
            fusion: Fusion::default(),
        }
    }

    #[test]
    fn filter_runs_before_the_cut() {
        let mut ix = ToolIndex::default();
        ix.upsert(&spec("delete_weather", "Weather weather weather."));
        ix.upsert(&spec("get_weather", "Current weather."));
        ix.upsert(&spec("weather_alerts", "Severe weather alerts."));
        let all = ix.search(&q("weather", 1), &|_| true);
        assert_eq!(all[0].name, "delete_weather");
        let hits = ix.search(&q("weather", 2), &|n| n != "delete_weather");
        let names: Vec<&str> = hits.iter().map(|h| h.name.as_str()).collect();
        assert_eq!(names.len(), 2);
        assert!(!names.contains(&"delete_weather"));
    }

    #[test]
    fn a_filter_rejecting_the_whole_head_still_gets_the_true_top_k() {
        let mut ix = ToolIndex::default();
        for i in 0..50 {
            // Descending relevance: tool_00 repeats "lamp" most.
            let desc = "lamp ".repeat(60 - i);
            ix.upsert(&spec(&format!("tool_{i:02}"), &format!("{desc} light")));
        }
        let admit = |n: &str| n >= "tool_45";
        // depth 2 → a head of 8 candidates, all rejected: the rest must be walked.
        let ranked = ix.rank_bm25("lamp", 2, &admit);
        let names: Vec<&str> = ranked.iter().filter_map(|(s, _)| ix.id_of(*s)).collect();
        assert_eq!(names, ["tool_45", "tool_46"]);
        assert_eq!(ix.search(&q("lamp", 2), &admit).len(), 2);
    }

    #[test]
    fn sync_adds_updates_removes_and_reuses_slots() {
        let mut ix = ToolIndex::default();
        let a = spec("a_tool", "alpha");
        let b = spec("b_tool", "beta");
        assert_eq!(ix.sync([&a, &b]).added, 2);
        ix.set_vector("a_tool", &[1.0, 0.0]);
        let a2 = spec("a_tool", "alpha changed");
        let stats = ix.sync([&a2]);
        assert_eq!((stats.updated, stats.removed), (1, 1));
        assert_eq!(ix.missing_vectors().len(), 1);
        ix.upsert(&spec("c_tool", "gamma"));
        assert_eq!(ix.len(), 2);
        assert_eq!(ix.search(&q("gamma", 3), &|_| true)[0].name, "c_tool");
        assert!(ix.search(&q("beta", 3), &|_| true).is_empty());
    }

    #[test]
    fn dense_ranks_by_cosine() {
        let mut ix = ToolIndex::default();
        ix.upsert(&spec("x_tool", "x"));
        ix.upsert(&spec("y_tool", "y"));
        ix.set_vector("x_tool", &[1.0, 0.0]);
        ix.set_vector("y_tool", &[0.0, 1.0]);
        let v = [0.1f32, 0.9];
        let hits = ix.search(
            &Query {
                text: "",
                vector: Some(&v),
                mode: Mode::Dense,
                k: 2,
                fusion: Fusion::default(),
            },
            &|_| true,
        );
        assert_eq!(hits[0].name, "y_tool");
        assert_eq!(hits[0].dense.map(|d| d.rank), Some(1));
    }
}
