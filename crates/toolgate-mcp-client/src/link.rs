//! The live connection of one server as its tools see it: the current peer (or why there
//! is none), the calls in flight by progress token, and the signals a tool or the protocol
//! handler sends back to the server's supervisor. Locks here are never held across `.await`.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Mutex, PoisonError, RwLock};
use std::time::Duration;

use rmcp::model::ProgressToken;
use rmcp::service::{Peer, RoleClient};
use tokio::sync::{Notify, broadcast};
use tokio_util::sync::CancellationToken;
use toolgate_core::ProgressSink;

use crate::McpEvent;
use crate::active::ActiveCalls;
use crate::offers::Offers;

/// Progress routes remembered per connection.
const ROUTES_KEPT: usize = 1024;

pub(crate) struct ServerLink {
    pub(crate) server: String,
    /// How the server is reached, as telemetry names it.
    pub(crate) wire: crate::span::Wire,
    pub(crate) call_timeout: Duration,
    pub(crate) events: broadcast::Sender<McpEvent>,
    /// The server said its tool list changed: the supervisor re-lists.
    pub(crate) refresh: Notify,
    current: RwLock<Result<Connected, String>>,
    calls: Mutex<CallRoutes>,
    /// Tools (raw names) the server runs only as MCP tasks, learnt from its refusal: kept
    /// unavailable, with the reason, across re-listings of this connection's server.
    needs_tasks: Mutex<HashSet<String>>,
    /// Prompts, resources and templates of the current connection.
    offers: RwLock<Offers>,
    /// Resource subscriptions held on the server: raw URI → how many clients hold one.
    subscriptions: Mutex<HashMap<String, usize>>,
    /// The calls running on the server now, each with its client (if it has one).
    pub(crate) active: ActiveCalls,
    /// 2026-07-28: the `subscriptions/listen` stream of each subscribed URI.
    pub(crate) listens: Mutex<HashMap<String, AbortOnDrop>>,
    /// Why list changes are polled rather than heard ([`crate::ServerStatus::polling`]).
    polling: Mutex<Option<String>>,
}

impl ServerLink {
    pub(crate) fn new(
        server: String,
        wire: crate::span::Wire,
        call_timeout: Duration,
        events: broadcast::Sender<McpEvent>,
    ) -> Self {
        ServerLink {
            wire,
            current: RwLock::new(Err(format!("MCP server `{server}` is starting"))),
            server,
            call_timeout,
            events,
            refresh: Notify::new(),
            calls: Mutex::new(CallRoutes::default()),
            needs_tasks: Mutex::new(HashSet::new()),
            offers: RwLock::new(Offers::default()),
            subscriptions: Mutex::new(HashMap::new()),
            active: ActiveCalls::default(),
            listens: Mutex::new(HashMap::new()),
            polling: Mutex::new(None),
        }
    }

    /// Says why list changes are polled (`None`: they are heard).
    pub(crate) fn set_polling(&self, why: Option<String>) {
        *self.polling.lock().unwrap_or_else(PoisonError::into_inner) = why;
    }

    pub(crate) fn polling(&self) -> Option<String> {
        self.polling
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// What the server offers besides tools, as last listed.
    pub(crate) fn offers(&self) -> Offers {
        self.offers
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub(crate) fn set_offers(&self, offers: Offers) {
        *self.offers.write().unwrap_or_else(PoisonError::into_inner) = offers;
        self.emit(McpEvent::OffersChanged {
            server: self.server.clone(),
        });
    }

    /// Counts one more holder of a subscription to `uri`; true for the first (the one
    /// that must subscribe on the server).
    pub(crate) fn hold(&self, uri: &str) -> bool {
        let mut subs = self
            .subscriptions
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let count = subs.entry(uri.to_owned()).or_insert(0);
        *count += 1;
        *count == 1
    }

    /// Counts one holder less; true when none is left (the server is to be unsubscribed).
    /// Releasing a URI nobody holds is false.
    pub(crate) fn release(&self, uri: &str) -> bool {
        let mut subs = self
            .subscriptions
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        match subs.get_mut(uri) {
            Some(count) if *count > 1 => {
                *count -= 1;
                false
            }
            Some(_) => {
                subs.remove(uri);
                true
            }
            None => false,
        }
    }

    /// The URIs subscribed on the server (to subscribe again after a reconnect).
    pub(crate) fn held(&self) -> Vec<String> {
        self.subscriptions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .keys()
            .cloned()
            .collect()
    }

    /// The current connection, or why calls are refused now.
    pub(crate) fn connection(&self) -> Result<Connected, String> {
        self.current
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub(crate) fn connected(&self, connection: Connected) {
        // Progress tokens restart with every connection.
        *self.calls.lock().unwrap_or_else(PoisonError::into_inner) = CallRoutes::default();
        *self.current.write().unwrap_or_else(PoisonError::into_inner) = Ok(connection);
    }

    pub(crate) fn disconnected(&self, reason: String) {
        *self.current.write().unwrap_or_else(PoisonError::into_inner) = Err(reason);
    }

    /// Remembers which call a progress token belongs to. Kept after the call ends (up to
    /// [`ROUTES_KEPT`] calls), because a server's last progress notification may be
    /// handled after its result.
    pub(crate) fn track(&self, token: ProgressToken, call_id: String, sink: ProgressSink) {
        let mut calls = self.calls.lock().unwrap_or_else(PoisonError::into_inner);
        if calls.order.len() == ROUTES_KEPT
            && let Some(oldest) = calls.order.pop_front()
        {
            calls.by_token.remove(&oldest);
        }
        calls.order.push_back(token.clone());
        calls.by_token.insert(token, Route { call_id, sink });
    }

    /// The call a progress token belongs to and where its progress goes.
    pub(crate) fn route_for(&self, token: &ProgressToken) -> Option<Route> {
        self.calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .by_token
            .get(token)
            .cloned()
    }

    /// Records that `tool` needs task augmentation and asks the supervisor to re-list, which
    /// marks it unavailable.
    pub(crate) fn needs_tasks(&self, tool: &str) {
        self.needs_tasks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(tool.to_owned());
        self.refresh.notify_one();
    }

    /// Whether `tool` was found to need task augmentation.
    pub(crate) fn is_task_only(&self, tool: &str) -> bool {
        self.needs_tasks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(tool)
    }

    pub(crate) fn emit(&self, event: McpEvent) {
        // No subscriber is fine: events are an optional view.
        let _ = self.events.send(event);
    }
}

/// Stops a background task with its owner (also when a startup attempt times out).
pub(crate) struct AbortOnDrop(pub(crate) tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// One connection as calls see it. `lost` belongs to this connection only, so a failure
/// seen on an old connection can never tear down its replacement.
#[derive(Clone)]
pub(crate) struct Connected {
    pub(crate) peer: Peer<RoleClient>,
    /// Cancelled by a call that saw the transport fail: the supervisor reconnects.
    pub(crate) lost: CancellationToken,
}

/// The call a progress token belongs to, and the caller's progress sink.
#[derive(Clone)]
pub(crate) struct Route {
    pub(crate) call_id: String,
    pub(crate) sink: ProgressSink,
}

/// Which call each recent progress token belongs to, oldest first.
#[derive(Default)]
struct CallRoutes {
    by_token: HashMap<ProgressToken, Route>,
    order: VecDeque<ProgressToken>,
}
