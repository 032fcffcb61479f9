//! BM25 (Okapi) over [`ToolDoc`]s, hand-rolled so that one tool can be added or removed
//! without rebuilding (postings are edited in place; document frequencies and the average
//! length are read at query time).
//!
//! Fields are weighted by repetition: the name's words count [`Bm25Params::name_weight`]
//! times, the server and tags [`Bm25Params::meta_weight`] times, the description and
//! parameters once.

use std::collections::HashMap;

use crate::doc::ToolDoc;
use crate::tokenize::Tokenizer;

/// BM25 constants and field weights (defaults measured on the BFCL eval, docs/rag.md).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bm25Params {
    pub k1: f32,
    pub b: f32,
    pub name_weight: usize,
    pub meta_weight: usize,
    pub tokenizer: Tokenizer,
}

impl Default for Bm25Params {
    fn default() -> Self {
        Bm25Params {
            k1: 1.2,
            b: 0.75,
            name_weight: 2,
            meta_weight: 1,
            tokenizer: Tokenizer::default(),
        }
    }
}

/// A slot's document: its term counts (for removal) and length.
#[derive(Debug, Clone)]
struct Slot {
    terms: Vec<(u32, u32)>,
    len: u32,
}

/// The inverted index. Documents live in slots (`u32` ids chosen by the caller).
#[derive(Debug, Default, Clone)]
pub struct Bm25Index {
    params: Bm25Params,
    vocab: HashMap<String, u32>,
    /// term id → (slot, term frequency), unordered
    postings: Vec<Vec<(u32, u32)>>,
    slots: Vec<Option<Slot>>,
    docs: usize,
    total_len: u64,
}

impl Bm25Index {
    pub fn new(params: Bm25Params) -> Self {
        Bm25Index {
            params,
            ..Bm25Index::default()
        }
    }

    pub fn params(&self) -> &Bm25Params {
        &self.params
    }

    /// The weighted token stream of a document.
    pub fn doc_tokens(&self, doc: &ToolDoc) -> Vec<String> {
        let t = &self.params.tokenizer;
        let mut out = Vec::new();
        for _ in 0..self.params.name_weight {
            t.push_tokens(&doc.name, &mut out);
        }
        for _ in 0..self.params.meta_weight {
            t.push_tokens(&doc.server, &mut out);
            for tag in &doc.tags {
                t.push_tokens(tag, &mut out);
            }
        }
        t.push_tokens(&doc.description, &mut out);
        for p in &doc.params {
            t.push_tokens(p, &mut out);
        }
        out
    }

    /// Puts `doc` in `slot`, replacing whatever was there.
    pub fn insert(&mut self, slot: u32, doc: &ToolDoc) {
        self.remove(slot);
        let tokens = self.doc_tokens(doc);
        let mut counts: HashMap<u32, u32> = HashMap::new();
        for tok in &tokens {
            let next = u32::try_from(self.postings.len()).unwrap_or(u32::MAX);
            let id = *self.vocab.entry(tok.clone()).or_insert(next);
            if id as usize == self.postings.len() {
                self.postings.push(Vec::new());
            }
            *counts.entry(id).or_default() += 1;
        }
        let mut terms: Vec<(u32, u32)> = counts.into_iter().collect();
        terms.sort_unstable();
        for &(term, tf) in &terms {
            self.postings[term as usize].push((slot, tf));
        }
        let len = u32::try_from(tokens.len()).unwrap_or(u32::MAX);
        let i = slot as usize;
        if self.slots.len() <= i {
            self.slots.resize(i + 1, None);
        }
        self.slots[i] = Some(Slot { terms, len });
        self.docs += 1;
        self.total_len += u64::from(len);
    }

    /// Removes the document in `slot`, if any. Cost: the postings of its own terms.
    pub fn remove(&mut self, slot: u32) {
        let Some(old) = self.slots.get_mut(slot as usize).and_then(Option::take) else {
            return;
        };
        for (term, _) in old.terms {
            let list = &mut self.postings[term as usize];
            if let Some(pos) = list.iter().position(|&(s, _)| s == slot) {
                list.swap_remove(pos);
            }
        }
        self.docs -= 1;
        self.total_len -= u64::from(old.len);
    }

    pub fn len(&self) -> usize {
        self.docs
    }

    pub fn is_empty(&self) -> bool {
        self.docs == 0
    }

    /// Scores every document that shares a term with `query`: `(slot, score)`, unordered.
    /// Documents with no query term are absent (score 0).
    pub fn score(&self, query: &str) -> Vec<(u32, f32)> {
        let mut q = self.params.tokenizer.tokens(query);
        q.sort_unstable();
        q.dedup();
        if self.docs == 0 {
            return Vec::new();
        }
        let n = self.docs as f32;
        let avgdl = (self.total_len as f32 / n).max(1.0);
        let (k1, b) = (self.params.k1, self.params.b);
        let mut acc = vec![0f32; self.slots.len()];
        let mut touched = Vec::new();
        for tok in &q {
            let Some(&term) = self.vocab.get(tok) else {
                continue;
            };
            let list = &self.postings[term as usize];
            if list.is_empty() {
                continue;
            }
            let df = list.len() as f32;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for &(slot, tf) in list {
                let len = self.slots[slot as usize].as_ref().map_or(0, |s| s.len) as f32;
                let tf = tf as f32;
                let s = idf * tf * (k1 + 1.0) / (tf + k1 * (1.0 - b + b * len / avgdl));
                let cell = &mut acc[slot as usize];
                if *cell == 0.0 {
                    touched.push(slot);
                }
                *cell += s;
            }
        }
        touched.into_iter().map(|s| (s, acc[s as usize])).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use toolgate_protocol::ToolSpec;

    fn doc(name: &str, desc: &str) -> ToolDoc {
        ToolDoc::from_spec(&ToolSpec::new(name, desc, json!({"type": "object"})))
    }

    fn best(ix: &Bm25Index, q: &str) -> Option<u32> {
        let mut s = ix.score(q);
        s.sort_by(|a, b| b.1.total_cmp(&a.1));
        s.first().map(|x| x.0)
    }

    #[test]
    fn ranks_and_updates_incrementally() {
        let mut ix = Bm25Index::new(Bm25Params::default());
        ix.insert(0, &doc("get_weather", "Current weather for a city."));
        ix.insert(
            1,
            &doc("send_email", "Send an email message to a recipient."),
        );
        ix.insert(2, &doc("list_files", "List the files in a directory."));
        assert_eq!(best(&ix, "what's the weather in Paris"), Some(0));
        assert_eq!(best(&ix, "email my boss"), Some(1));
        assert_eq!(best(&ix, "sendEmail"), Some(1));
        ix.remove(1);
        assert_eq!(ix.len(), 2);
        assert_eq!(best(&ix, "email my boss"), None);
        ix.insert(1, &doc("post_mail", "Send an email."));
        assert_eq!(best(&ix, "email my boss"), Some(1));
        // Replacing a slot keeps counts right.
        ix.insert(1, &doc("post_mail", "Deliver a letter."));
        assert_eq!(ix.len(), 3);
        assert_eq!(best(&ix, "email"), None);
    }
}
