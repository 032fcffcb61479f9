//! Which session holds which resource subscription, and the forwarding of the servers'
//! `notifications/resources/updated` to them (under the URI each session subscribed with).
//! A session whose peer no longer takes notifications is dropped, and the subscriptions it
//! held on the servers are let go.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, PoisonError, Weak};

use rmcp::model::ResourceUpdatedNotificationParam;
use rmcp::{Peer, RoleServer};
use tokio::sync::broadcast::error::RecvError;
use toolgate_mcp_client::federation::Target;
use toolgate_mcp_client::{McpEvent, McpHub};
use toolgate_protocol::SessionId;
use toolgate_server::mcp::Requester;

/// One session's subscriptions: (server, raw URI) → the URI the session used.
struct Session {
    peer: Peer<RoleServer>,
    uris: BTreeMap<(String, String), String>,
}

#[derive(Default)]
pub(super) struct Subscribers {
    sessions: Mutex<BTreeMap<SessionId, Session>>,
}

impl Subscribers {
    /// Starts forwarding the hub's resource updates; the task ends with the hub.
    pub(super) fn start(hub: &Arc<McpHub>) -> Arc<Subscribers> {
        let subscribers = Arc::new(Subscribers::default());
        let mut events = hub.events();
        let forward = Arc::downgrade(&subscribers);
        let hub: Weak<McpHub> = Arc::downgrade(hub);
        tokio::spawn(async move {
            loop {
                match events.recv().await {
                    Ok(McpEvent::ResourceUpdated { server, uri }) => {
                        let (Some(subscribers), Some(hub)) = (forward.upgrade(), hub.upgrade())
                        else {
                            break;
                        };
                        for (server, raw) in subscribers.updated(&server, &uri).await {
                            let key = raw.clone();
                            let held = Target { server, raw, key };
                            if let Err(e) = hub.unsubscribe(&held).await {
                                tracing::debug!(uri = %held.raw, error = %e.message, "could not let go of a gone session's subscription");
                            }
                        }
                    }
                    Ok(_) => {}
                    Err(RecvError::Lagged(missed)) => {
                        tracing::warn!(missed, "resource update notifications were dropped");
                    }
                    Err(RecvError::Closed) => break,
                }
            }
        });
        subscribers
    }

    fn sessions(&self) -> std::sync::MutexGuard<'_, BTreeMap<SessionId, Session>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records `who`'s subscription to `target` (asked for as `uri`); true when the session
    /// did not hold it yet (the hub is then to subscribe).
    pub(super) fn add(&self, who: &Requester, target: &Target, uri: &str) -> bool {
        let mut sessions = self.sessions();
        let session = sessions
            .entry(who.session.clone())
            .or_insert_with(|| Session {
                peer: who.peer.clone(),
                uris: BTreeMap::new(),
            });
        session.peer = who.peer.clone();
        session
            .uris
            .insert((target.server.clone(), target.raw.clone()), uri.to_owned())
            .is_none()
    }

    /// Drops `who`'s subscription to `target`; true when it held one.
    pub(super) fn remove(&self, who: &Requester, target: &Target) -> bool {
        self.sessions().get_mut(&who.session).is_some_and(|s| {
            s.uris
                .remove(&(target.server.clone(), target.raw.clone()))
                .is_some()
        })
    }

    /// Tells every session subscribed to `server`'s `uri`; returns the (server, URI)
    /// subscriptions of the sessions found gone, which nobody holds for them any more.
    async fn updated(&self, server: &str, uri: &str) -> Vec<(String, String)> {
        let key = (server.to_owned(), uri.to_owned());
        let targets: Vec<(SessionId, Peer<RoleServer>, String)> = self
            .sessions()
            .iter()
            .filter_map(|(id, s)| {
                s.uris
                    .get(&key)
                    .map(|asked| (id.clone(), s.peer.clone(), asked.clone()))
            })
            .collect();
        let mut gone = BTreeSet::new();
        for (id, peer, asked) in targets {
            let note = ResourceUpdatedNotificationParam::new(asked);
            if peer.notify_resource_updated(note).await.is_err() {
                gone.insert(id);
            }
        }
        let mut released = Vec::new();
        if !gone.is_empty() {
            self.sessions().retain(|id, session| {
                let keep = !gone.contains(id);
                if !keep {
                    released.extend(std::mem::take(&mut session.uris).into_keys());
                }
                keep
            });
        }
        released
    }
}
