//! Which session holds which resource subscription, and the forwarding of the servers'
//! `notifications/resources/updated` to them (under the URI each session subscribed with).
//! A session whose peer no longer takes notifications is dropped with its subscriptions.
//! Also each session's `logging/setLevel` choice.

#![allow(deprecated)] // logging is deprecated by 2026-07-28 but still 2025-11-25

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{LoggingLevel, ResourceUpdatedNotificationParam};
use rmcp::{Peer, RoleServer};
use tokio::sync::broadcast::error::RecvError;
use toolgate_mcp::federation::Target;
use toolgate_mcp::{McpEvent, McpHub};
use toolgate_server::mcp::Requester;

/// One session's subscriptions: (server, raw URI) → the URI the session used.
struct Session {
    peer: Peer<RoleServer>,
    uris: BTreeMap<(String, String), String>,
    level: Option<LoggingLevel>,
}

#[derive(Default)]
pub(super) struct Subscribers {
    sessions: Mutex<BTreeMap<String, Session>>,
}

impl Subscribers {
    /// Starts forwarding the hub's resource updates; the task ends with the hub.
    pub(super) fn start(hub: &McpHub) -> Arc<Subscribers> {
        let subscribers = Arc::new(Subscribers::default());
        let mut events = hub.events();
        let forward = Arc::downgrade(&subscribers);
        tokio::spawn(async move {
            loop {
                match events.recv().await {
                    Ok(McpEvent::ResourceUpdated { server, uri }) => {
                        let Some(subscribers) = forward.upgrade() else {
                            break;
                        };
                        subscribers.updated(&server, &uri).await;
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

    fn sessions(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Session>> {
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
                level: None,
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

    /// Remembers the level `who` asked for.
    pub(super) fn set_level(&self, who: &Requester, level: LoggingLevel) {
        let mut sessions = self.sessions();
        let session = sessions
            .entry(who.session.clone())
            .or_insert_with(|| Session {
                peer: who.peer.clone(),
                uris: BTreeMap::new(),
                level: None,
            });
        session.level = Some(level);
    }

    /// Tells every session subscribed to `server`'s `uri`.
    async fn updated(&self, server: &str, uri: &str) {
        let key = (server.to_owned(), uri.to_owned());
        let targets: Vec<(String, Peer<RoleServer>, String)> = self
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
        if !gone.is_empty() {
            self.sessions().retain(|id, _| !gone.contains(id));
        }
    }
}
