//! Which sessions' clients hear from running tools: the client declared sampling,
//! elicitation or roots at `initialize`, or asked for log messages (`logging/setLevel`).
//! Their calls keep rmcp's path (an SSE stream per call, on which a federated server's
//! requests and log messages reach the client); the server's fast path (`toolgate_server::mcp::fast`) answers with one JSON
//! object only the calls of sessions known to be quiet — a session is known once its
//! `notifications/initialized` was handled, so a call racing ahead of it takes rmcp's path
//! too. A session leaves when it is deleted.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

#[derive(Debug, Default)]
pub struct ListeningSessions(Mutex<HashMap<String, bool>>);

impl ListeningSessions {
    /// Records whether `session`'s client hears from running tools; once it does, it
    /// always does.
    pub fn record(&self, session: &str, hears: bool) {
        let mut sessions = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let entry = sessions.entry(session.to_owned()).or_insert(false);
        *entry |= hears;
    }

    /// Whether `session` is known, and known not to hear from running tools.
    pub fn is_quiet(&self, session: &str) -> bool {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(session)
            .is_some_and(|hears| !hears)
    }

    pub fn remove(&self, session: &str) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(session);
    }
}

#[cfg(test)]
mod tests {
    use super::ListeningSessions;

    #[test]
    fn only_a_known_quiet_session_is_quiet_and_hearing_sticks() {
        let sessions = ListeningSessions::default();
        assert!(
            !sessions.is_quiet("s"),
            "an unknown session is not known to be quiet"
        );
        sessions.record("s", false);
        assert!(sessions.is_quiet("s"));
        sessions.record("s", true);
        sessions.record("s", false);
        assert!(
            !sessions.is_quiet("s"),
            "a session that hears keeps hearing"
        );
        sessions.remove("s");
        assert!(!sessions.is_quiet("s"));
    }
}
