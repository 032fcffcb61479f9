//! The retrieval eval (R-RAG-4) on real data: BFCL's function documents as the catalog and
//! BFCL's questions as queries, each relevant to its ground-truth functions.
//!
//! The catalog: every function doc of every single-turn category (deduplicated on the
//! canonical JSON of name, description and parameters), padded with the other real docs the
//! `bfcl-eval` wheel ships (the multi-turn API docs, the unused executable/REST sets), never
//! duplicated. Docs sharing a name get distinct ids (`name`, `name#2`, …). The queries: each
//! entry with ground truth (irrelevance categories have none); relevant = the entry's own
//! docs named in its answer.
//!
//! Smaller catalogs (100, 1,000) are deterministic samples: queries are taken in a seeded
//! order while their relevant docs fill at most half the catalog, then other docs fill the
//! rest as distractors; only those queries are scored.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;
use toolgate_protocol::canonical_json;
use toolgate_rag::ToolDoc;

use crate::bfcl::{BfclData, Category, DataError, FunctionDoc};

/// One query of the eval.
#[derive(Debug, Clone, Serialize)]
pub struct EvalQuery {
    pub id: String,
    pub text: String,
    /// Doc ids.
    pub relevant: Vec<String>,
}

/// The full eval set.
#[derive(Debug, Clone)]
pub struct EvalSet {
    pub docs: Vec<ToolDoc>,
    pub queries: Vec<EvalQuery>,
    /// How many docs came from the single-turn categories (the rest is padding).
    pub from_entries: usize,
}

/// One catalog size: doc indices into [`EvalSet::docs`] and query indices.
#[derive(Debug, Clone)]
pub struct Subset {
    pub label: String,
    pub docs: Vec<usize>,
    pub queries: Vec<usize>,
}

#[derive(Default)]
struct Builder {
    docs: Vec<ToolDoc>,
    by_canon: HashMap<String, usize>,
    name_count: HashMap<String, usize>,
}

impl Builder {
    fn add(&mut self, f: &FunctionDoc) -> usize {
        let canon = canonical_json(&serde_json::json!({
            "name": f.name, "description": f.description, "parameters": f.parameters
        }));
        if let Some(&i) = self.by_canon.get(&canon) {
            return i;
        }
        let n = self.name_count.entry(f.name.clone()).or_insert(0);
        *n += 1;
        let id = if *n == 1 {
            f.name.clone()
        } else {
            format!("{}#{n}", f.name)
        };
        self.docs
            .push(ToolDoc::new(&id, &f.name, &f.description, &f.parameters));
        self.by_canon.insert(canon, self.docs.len() - 1);
        self.docs.len() - 1
    }
}

/// Function docs in a JSON Lines file whose rows are docs or entries with a `function` list;
/// unreadable lines are skipped (padding only).
fn padding_docs(path: &Path) -> Vec<FunctionDoc> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let items: Vec<Value> = match v.get("function") {
            Some(Value::Array(a)) => a.clone(),
            Some(other) => vec![other.clone()],
            None => vec![v],
        };
        for item in items {
            if let Ok(f) = serde_json::from_value::<FunctionDoc>(item)
                && !f.name.is_empty()
            {
                out.push(f);
            }
        }
    }
    out
}

fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

impl EvalSet {
    /// Builds the set from the installed BFCL data.
    pub fn from_bfcl(data: &BfclData) -> Result<Self, DataError> {
        let mut b = Builder::default();
        let mut queries = Vec::new();
        for category in Category::ALL {
            for case in data.load(category)? {
                let ids: Vec<usize> = case.entry.functions.iter().map(|f| b.add(f)).collect();
                let Some(answer) = &case.answer else {
                    continue;
                };
                let wanted: HashSet<&str> = answer.iter().map(|c| c.name.as_str()).collect();
                let relevant: Vec<String> = case
                    .entry
                    .functions
                    .iter()
                    .zip(&ids)
                    .filter(|(f, _)| wanted.contains(f.name.as_str()))
                    .map(|(_, &i)| b.docs[i].id.clone())
                    .collect();
                let text = case.entry.user_text();
                if relevant.is_empty() || text.trim().is_empty() {
                    continue;
                }
                queries.push(EvalQuery {
                    id: case.entry.id.clone(),
                    text,
                    relevant,
                });
            }
        }
        let from_entries = b.docs.len();
        let dir = data.dir();
        let mut pads = json_files(&dir.join("multi_turn_func_doc"));
        pads.extend(json_files(&dir.join("unused_datasets/question")));
        for path in pads {
            for f in padding_docs(&path) {
                b.add(&f);
            }
        }
        Ok(EvalSet {
            docs: b.docs,
            queries,
            from_entries,
        })
    }

    /// Adds further real tool definitions (e.g. the MCP peer servers' tools) as padding.
    pub fn pad_with(&mut self, docs: impl IntoIterator<Item = ToolDoc>) {
        let ids: HashSet<String> = self.docs.iter().map(|d| d.id.clone()).collect();
        let keys: HashSet<String> = self.docs.iter().map(|d| d.key.clone()).collect();
        for d in docs {
            if !ids.contains(&d.id) && !keys.contains(&d.key) {
                self.docs.push(d);
            }
        }
    }

    /// The full catalog with every query.
    pub fn full(&self) -> Subset {
        Subset {
            label: format!("full ({})", self.docs.len()),
            docs: (0..self.docs.len()).collect(),
            queries: (0..self.queries.len()).collect(),
        }
    }

    /// A deterministic sample of `size` docs (see the module doc).
    pub fn sample(&self, size: usize, seed: u64) -> Subset {
        let index: HashMap<&str, usize> = self
            .docs
            .iter()
            .enumerate()
            .map(|(i, d)| (d.id.as_str(), i))
            .collect();
        let mut rng = XorShift(seed | 1);
        let mut order: Vec<usize> = (0..self.queries.len()).collect();
        rng.shuffle(&mut order);
        let mut chosen = HashSet::new();
        let mut docs: Vec<usize> = Vec::new();
        let mut queries = Vec::new();
        for qi in order {
            let rel: Vec<usize> = self.queries[qi]
                .relevant
                .iter()
                .filter_map(|r| index.get(r.as_str()).copied())
                .collect();
            let new: Vec<usize> = rel
                .iter()
                .copied()
                .filter(|d| !chosen.contains(d))
                .collect();
            if docs.len() + new.len() > size / 2 {
                continue;
            }
            for d in new {
                chosen.insert(d);
                docs.push(d);
            }
            queries.push(qi);
        }
        let mut rest: Vec<usize> = (0..self.docs.len())
            .filter(|d| !chosen.contains(d))
            .collect();
        rng.shuffle(&mut rest);
        docs.extend(rest.into_iter().take(size.saturating_sub(docs.len())));
        docs.sort_unstable();
        queries.sort_unstable();
        Subset {
            label: size.to_string(),
            docs,
            queries,
        }
    }
}

/// A small deterministic generator (no `rand` dependency for one shuffle).
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = (self.next() % (i as u64 + 1)) as usize;
            v.swap(i, j);
        }
    }
}
