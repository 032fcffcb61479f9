//! [`Refusals`]: what the guard refused in one session, so that the action that caused it
//! (or the next snapshot) can tell the model, instead of leaving it to guess from an error
//! page.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};

use serde::Serialize;

/// One refused request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Refusal {
    /// The URL as shown to the model (see [`super::display_url`]).
    pub url: String,
    /// Why, with the setting that would allow it.
    pub reason: String,
    /// Whether it was a page or frame navigation (a document), not a subresource.
    pub navigation: bool,
    /// The CDP frame that made the request, when known (not shown to the model).
    #[serde(skip)]
    pub frame: Option<String>,
}

/// The session's refusal log: append-only, read from a mark.
#[derive(Debug, Clone, Default)]
pub struct Refusals {
    inner: Arc<Mutex<Log>>,
    /// `host:port` of every request a page made that interception let through: a refusal
    /// at the proxy for one of these concerns the page; others are Chromium's own background
    /// traffic (time and update checks), logged but not shown to the model.
    page_authorities: Arc<Mutex<HashSet<String>>>,
}

#[derive(Debug, Default)]
struct Log {
    /// How many old entries were dropped: marks count from the first refusal ever.
    dropped: usize,
    entries: Vec<Refusal>,
}

/// Refusals kept per session; older ones are dropped (the count is what matters then).
const KEEP: usize = 1_000;

impl Refusals {
    pub fn record(&self, refusal: Refusal) {
        tracing::warn!(url = %refusal.url, "browser request refused: {}", refusal.reason);
        let mut log = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        if log.entries.len() >= KEEP {
            log.entries.remove(0);
            log.dropped += 1;
        }
        log.entries.push(refusal);
    }

    /// Notes that a page request to `authority` (`host:port`) passed interception.
    pub fn note_page_authority(&self, authority: String) {
        let mut seen = self
            .page_authorities
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if seen.len() < 10_000 {
            seen.insert(authority);
        }
    }

    /// Whether a page requested `authority` (`host:port`) before.
    pub fn is_page_authority(&self, authority: &str) -> bool {
        self.page_authorities
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(authority)
    }

    /// A position to read from later with [`Self::since`].
    pub fn mark(&self) -> usize {
        let log = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        log.dropped + log.entries.len()
    }

    /// Everything recorded after `mark`, and the mark to read from next time.
    pub fn take_since(&self, mark: usize) -> (Vec<Refusal>, usize) {
        let log = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let from = mark.saturating_sub(log.dropped).min(log.entries.len());
        (
            log.entries[from..].to_vec(),
            log.dropped + log.entries.len(),
        )
    }

    /// Everything recorded after `mark`.
    pub fn since(&self, mark: usize) -> Vec<Refusal> {
        let log = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let from = mark.saturating_sub(log.dropped).min(log.entries.len());
        log.entries[from..].to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(n: usize) -> Refusal {
        Refusal {
            url: format!("http://10.0.0.{n}/"),
            reason: "refused".into(),
            navigation: false,
            frame: None,
        }
    }

    #[test]
    fn marks_survive_dropping_old_entries() {
        let log = Refusals::default();
        log.record(refusal(0));
        let mark = log.mark();
        log.record(refusal(1));
        assert_eq!((mark, log.since(mark)), (1, vec![refusal(1)]));
        for n in 0..KEEP {
            log.record(refusal(n));
        }
        let late = log.mark();
        log.record(refusal(7));
        assert_eq!((late, log.since(late)), (KEEP + 2, vec![refusal(7)]));
        assert_eq!(log.since(0).len(), KEEP);
        assert_eq!(log.take_since(late), (vec![refusal(7)], KEEP + 3));
    }
}
