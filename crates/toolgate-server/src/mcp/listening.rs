//! Sessions whose client hears from running tools: it declared sampling, elicitation or
//! roots at `initialize`, or asked for log messages (`logging/setLevel`). Their calls keep
//! rmcp's path (an SSE stream per call, on which a federated server's requests and log
//! messages reach the client) instead of [`super::fast`]'s one JSON answer. A session leaves
//! the set when it is deleted.

use std::collections::HashSet;
use std::sync::{Mutex, PoisonError};

#[derive(Debug, Default)]
pub struct ListeningSessions(Mutex<HashSet<String>>);

impl ListeningSessions {
    pub fn insert(&self, session: &str) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(session.to_owned());
    }

    pub fn contains(&self, session: &str) -> bool {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(session)
    }

    pub fn remove(&self, session: &str) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(session);
    }
}
