//! The calls running on one server, each with its client ([`CallerLink`]), and whom a
//! server's own request or log message is for.
//!
//! The MCP transport does not say which call a server's `sampling/createMessage`,
//! `elicitation/create`, `roots/list` or log message is about. toolgate attributes it only
//! when exactly one call could have sent it — never by guessing among several, which could
//! hand one caller's data to another. A call parked until its client's next request (a
//! stateless client between rounds), or waiting for its client's answer for longer than
//! [`FRESH`], is not a candidate: it is blocked on that answer. Questions a call asks
//! together arrive within [`FRESH`] of each other, so they all reach its client.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use toolgate_core::CallerLink;

/// How long a call that asked its client is still taken to be asking more.
pub(crate) const FRESH: Duration = Duration::from_millis(250);
/// How long after its end a lone call still receives its server's log messages (one sent
/// just before the result may be handled just after it).
const LATE_LOGS: Duration = Duration::from_secs(1);

struct Entry {
    caller: CallerLink,
    /// Questions sent to the client and not answered yet, and since when.
    asking: u32,
    asking_since: Option<Instant>,
}

impl Entry {
    fn candidate(&self) -> bool {
        !self.caller.is_parked()
            && self
                .asking_since
                .is_none_or(|since| since.elapsed() < FRESH)
    }
}

#[derive(Default)]
struct Calls {
    next: u64,
    calls: HashMap<u64, Entry>,
    ended_alone: Option<(Instant, CallerLink)>,
}

/// The calls in flight on one server.
#[derive(Default)]
pub(crate) struct ActiveCalls(Mutex<Calls>);

/// Leaves the active calls when dropped (the call ended, however it ended).
pub(crate) struct ActiveCall<'a> {
    calls: &'a ActiveCalls,
    id: u64,
}

/// A question of call `id` in flight to its client; counted until dropped.
pub(crate) struct Asking<'a> {
    calls: &'a ActiveCalls,
    id: u64,
}

impl ActiveCalls {
    fn lock(&self) -> std::sync::MutexGuard<'_, Calls> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records a call running with its client, until the guard drops.
    pub(crate) fn enter(&self, caller: CallerLink) -> ActiveCall<'_> {
        let mut calls = self.lock();
        calls.next += 1;
        let id = calls.next;
        calls.calls.insert(
            id,
            Entry {
                caller,
                asking: 0,
                asking_since: None,
            },
        );
        calls.ended_alone = None;
        ActiveCall { calls: self, id }
    }

    /// The one call a server's request is for, or how many could be (0, or several).
    pub(crate) fn route(&self) -> Result<(u64, CallerLink), usize> {
        let calls = self.lock();
        let mut candidates = calls.calls.iter().filter(|(_, e)| e.candidate());
        match (candidates.next(), candidates.next()) {
            (Some((id, only)), None) => Ok((*id, only.caller.clone())),
            (None, _) => Err(0),
            _ => Err(calls.calls.values().filter(|e| e.candidate()).count()),
        }
    }

    /// Counts a question of call `id` until the guard drops.
    pub(crate) fn asking(&self, id: u64) -> Asking<'_> {
        if let Some(entry) = self.lock().calls.get_mut(&id) {
            entry.asking += 1;
            entry.asking_since.get_or_insert_with(Instant::now);
        }
        Asking { calls: self, id }
    }

    /// Whom a log message of the server goes to: [`ActiveCalls::route`], or the lone call
    /// that ended within [`LATE_LOGS`] with nothing started since.
    pub(crate) fn log_target(&self) -> Option<CallerLink> {
        if let Ok((_, caller)) = self.route() {
            return Some(caller);
        }
        let calls = self.lock();
        calls
            .ended_alone
            .as_ref()
            .filter(|(at, _)| calls.calls.is_empty() && at.elapsed() < LATE_LOGS)
            .map(|(_, caller)| caller.clone())
    }
}

impl Drop for ActiveCall<'_> {
    fn drop(&mut self) {
        let mut calls = self.calls.lock();
        let ended = calls.calls.remove(&self.id);
        let alone = calls.calls.is_empty();
        calls.ended_alone = ended
            .filter(|_| alone)
            .map(|entry| (Instant::now(), entry.caller));
    }
}

impl Drop for Asking<'_> {
    fn drop(&mut self) {
        if let Some(entry) = self.calls.lock().calls.get_mut(&self.id) {
            entry.asking = entry.asking.saturating_sub(1);
            if entry.asking == 0 {
                entry.asking_since = None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_call_is_routed_to_several_are_not_and_a_call_long_blocked_on_its_client_is_skipped() {
        let calls = ActiveCalls::default();
        assert_eq!(calls.route().err(), Some(0));
        let first = calls.enter(CallerLink::none());
        let (id, _) = calls.route().expect("the only call");
        let second = calls.enter(CallerLink::none());
        assert_eq!(calls.route().err(), Some(2), "two calls: nobody is guessed");
        // The first call waits for its client's answer (a stateless client between rounds).
        let asking = calls.asking(id);
        assert_eq!(
            calls.route().err(),
            Some(2),
            "a fresh question may be one of several"
        );
        std::thread::sleep(FRESH + Duration::from_millis(20));
        let (routed, _) = calls.route().expect("only the second call can ask now");
        assert_ne!(routed, id);
        drop(asking);
        assert_eq!(calls.route().err(), Some(2));
        drop(second);
        assert!(calls.route().is_ok());
        drop(first);
        assert!(
            calls.log_target().is_some(),
            "late logs reach the call that just ended"
        );
    }
}
