//! Which MCP client is waiting on which call. A tool runs behind the gateway and sees only
//! its [`ToolContext`](toolgate_core::ToolContext); a tool that wants to talk back to the
//! client that called it (progress, log messages, sampling, elicitation) looks its call id up
//! here. The handler registers a link for exactly as long as the call runs: the returned
//! [`LinkGuard`] removes it when the call ends, however it ends.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::Peer;
use rmcp::RoleServer;
use rmcp::model::ProgressToken;

/// The client behind one running call.
#[derive(Clone)]
pub struct ClientLink {
    /// Sends notifications and requests to the calling client.
    pub peer: Peer<RoleServer>,
    /// The `_meta.progressToken` of the `tools/call` request, when the client asked for
    /// progress.
    pub progress_token: Option<ProgressToken>,
}

impl std::fmt::Debug for ClientLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientLink")
            .field("progress_token", &self.progress_token)
            .finish_non_exhaustive()
    }
}

/// Call id → the client waiting on it.
#[derive(Debug, Default)]
pub struct ClientLinks {
    links: Mutex<HashMap<String, ClientLink>>,
}

impl ClientLinks {
    pub fn new() -> Self {
        ClientLinks::default()
    }

    /// The client waiting on `call_id`, while that call runs.
    pub fn get(&self, call_id: &str) -> Option<ClientLink> {
        self.links
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(call_id)
            .cloned()
    }

    /// Registers `link` for `call_id` until the guard is dropped.
    pub fn register(self: &Arc<Self>, call_id: &str, link: ClientLink) -> LinkGuard {
        self.links
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(call_id.to_owned(), link);
        LinkGuard {
            links: Arc::clone(self),
            call_id: call_id.to_owned(),
        }
    }

    pub fn len(&self) -> usize {
        self.links
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Removes its call's link when dropped.
#[derive(Debug)]
pub struct LinkGuard {
    links: Arc<ClientLinks>,
    call_id: String,
}

impl Drop for LinkGuard {
    fn drop(&mut self) {
        self.links
            .links
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.call_id);
    }
}
