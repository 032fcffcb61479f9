//! [`RecentQueries`]: the vectors of the last few query texts (and, keyed the same way, the
//! reranker's scores for the last few query + candidates pairs).
//!
//! The agent loop ranks the catalog for the latest user message before every model call, so
//! a turn with five tool steps asks for the same query vector five times: ~4–9 ms of CPU each
//! with the local model, a billed round trip each with an embeddings endpoint. The last
//! [`RecentQueries::CAPACITY`] texts are kept, the least recently used dropped first.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// Query text → vector for the most recent texts (one model: the owner's embedder).
#[derive(Debug, Default)]
pub struct RecentQueries {
    /// Most recently used last.
    entries: Mutex<VecDeque<(String, Arc<Vec<f32>>)>>,
}

impl RecentQueries {
    /// Texts kept.
    pub const CAPACITY: usize = 64;

    /// The vector of `text` if it was embedded recently (and marks it used).
    pub fn get(&self, text: &str) -> Option<Arc<Vec<f32>>> {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        let at = entries.iter().position(|(t, _)| t == text)?;
        let entry = entries.remove(at)?;
        let vector = Arc::clone(&entry.1);
        entries.push_back(entry);
        Some(vector)
    }

    /// Remembers `vector` for `text`, dropping the least recently used past the capacity.
    pub fn put(&self, text: &str, vector: Arc<Vec<f32>>) {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries.retain(|(t, _)| t != text);
        entries.push_back((text.to_owned(), vector));
        while entries.len() > Self::CAPACITY {
            entries.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_most_recently_used() {
        let r = RecentQueries::default();
        for i in 0..RecentQueries::CAPACITY {
            r.put(&format!("q{i}"), Arc::new(vec![i as f32]));
        }
        // Using q0 makes q1 the oldest; one more text evicts q1, not q0.
        assert_eq!(r.get("q0").as_deref(), Some(&vec![0.0]));
        r.put("new", Arc::new(vec![-1.0]));
        assert!(r.get("q1").is_none());
        assert_eq!(r.get("q0").as_deref(), Some(&vec![0.0]));
        assert_eq!(r.get("new").as_deref(), Some(&vec![-1.0]));
        // Re-putting a text replaces its vector without growing.
        r.put("new", Arc::new(vec![2.0]));
        assert_eq!(r.get("new").as_deref(), Some(&vec![2.0]));
        assert_eq!(r.entries.lock().unwrap().len(), RecentQueries::CAPACITY);
    }
}
