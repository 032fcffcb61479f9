//! `notifications/tools/list_changed`: a session is told when what its role may see changes —
//! a federated server's tools come or go or change, a tool becomes (un)available or is
//! quarantined, `search_tools` joins a catalog that outgrew `[rag] threshold`.
//!
//! The baseline is what the session was last *served*: `tools/list` records the fingerprint of
//! the list it answered in the session's [`Served`]. Each initialized session looks when the
//! catalog swaps a snapshot (`Catalog::swaps`) and at least every [`CHECK_EVERY`] (a new
//! baseline needs no swap): only when the snapshot changed is the role's visible list fingerprinted, and only when it differs from
//! what was served is the client notified (once; the next `tools/list` sets a new baseline) —
//! a change to tools the role cannot see sends nothing, and a session that never listed its
//! tools hears nothing. The task ends with the session (transport closed), on shutdown, or when
//! the client can no longer be reached.
//!
//! 2026-07-28 clients have no session to watch: they ask with `subscriptions/listen`, and
//! [`listen_for_tool_changes`] notifies that one request, measured from what the role could
//! see when the listen began, until the client cancels it or the server shuts down.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::service::SubscriptionSink;
use rmcp::{Peer, RoleServer};
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;
use toolgate_gateway::Gateway;

use super::tools::visible_tools;

/// How often a session looks for a new catalog snapshot.
pub const CHECK_EVERY: Duration = Duration::from_secs(1);

/// A digest of a tool list as served (names, definitions, annotations; sorted by name).
pub fn fingerprint(tools: &[rmcp::model::Tool]) -> [u8; 32] {
    let text = serde_json::to_vec(tools).unwrap_or_default();
    Sha256::digest(&text).into()
}

/// The fingerprint of the tool list a session was last served (`None`: never listed).
#[derive(Debug, Clone, Default)]
pub struct Served(Arc<Mutex<Option<[u8; 32]>>>);

impl Served {
    pub fn set(&self, print: [u8; 32]) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(print);
    }

    fn get(&self) -> Option<[u8; 32]> {
        *self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Where a change notice goes: a 2025-11-25 session's peer, or one 2026-07-28 listen.
trait Notice {
    /// The other side is gone: stop watching.
    fn gone(&self) -> bool;
    /// Sends `notifications/tools/list_changed`; `false` when it could not be delivered.
    fn tools_changed(&self) -> impl std::future::Future<Output = bool> + Send;
}

impl Notice for Peer<RoleServer> {
    fn gone(&self) -> bool {
        self.is_transport_closed()
    }
    async fn tools_changed(&self) -> bool {
        self.notify_tool_list_changed()
            .await
            .inspect_err(|e| tracing::debug!(error = %e, "tools/list_changed not delivered; the session is gone"))
            .is_ok()
    }
}

impl Notice for SubscriptionSink {
    fn gone(&self) -> bool {
        false
    }
    async fn tools_changed(&self) -> bool {
        self.notify_tool_list_changed()
            .await
            .inspect_err(|e| tracing::debug!(error = %e, "tools/list_changed not delivered; the subscription ended"))
            .is_ok()
    }
}

/// Watches the catalog for `role` and notifies `peer` of changes until the session ends.
pub async fn notify_tool_changes(
    gateway: Arc<Gateway>,
    peer: Peer<RoleServer>,
    role: String,
    served: Served,
    every: Duration,
    stop: CancellationToken,
) {
    watch(&gateway, &role, &served, every, &stop, &peer).await;
}

/// Sends `notifications/tools/list_changed` on one `subscriptions/listen` each time the
/// tools `role` sees differ from what they were at the last notice (at first: when the listen
/// began), until `stop` fires or the notice cannot be delivered (the subscription ended).
pub async fn listen_for_tool_changes(
    gateway: &Gateway,
    role: &str,
    sink: &SubscriptionSink,
    every: Duration,
    stop: &CancellationToken,
) {
    let baseline = Served::default();
    baseline.set(fingerprint(&visible_tools(gateway, role)));
    watch(gateway, role, &baseline, every, stop, sink).await;
}

/// The one watch loop: every `every`, when the catalog snapshot or the `served` baseline
/// moved, compares the role's visible tools with the baseline and, once per change, notifies.
async fn watch(
    gateway: &Gateway,
    role: &str,
    served: &Served,
    every: Duration,
    stop: &CancellationToken,
    to: &impl Notice,
) {
    let mut swaps = gateway.catalog().swaps();
    let mut snapshot = gateway.catalog().snapshot();
    let mut checked = served.get();
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(every) => {}
            Ok(()) = swaps.changed() => {}
        }
        if to.gone() {
            return;
        }
        // Look again when the catalog or the served baseline moved.
        let now = gateway.catalog().snapshot();
        let baseline = served.get();
        if Arc::ptr_eq(&now, &snapshot) && baseline == checked {
            continue;
        }
        snapshot = now;
        checked = baseline;
        let Some(baseline) = baseline else {
            continue;
        };
        let print = fingerprint(&visible_tools(gateway, role));
        if print == baseline {
            continue;
        }
        // Once per change: the next tools/list (a session's) sets the next baseline.
        served.set(print);
        checked = Some(print);
        if !to.tools_changed().await {
            return;
        }
    }
}
