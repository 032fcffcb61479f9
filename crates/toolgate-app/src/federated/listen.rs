//! `subscriptions/listen` (2026-07-28) for the federated servers: updates of the resources
//! the listen names (each one the caller's role may see is subscribed on its server for as
//! long as the listen lasts) and prompt and resource list changes. A 2025-11-25 session hears
//! the same list changes as notifications on its session ([`watch_session`]).

use rmcp::model::SubscriptionFilter;
use rmcp::service::SubscriptionSink;
use rmcp::{Peer, RoleServer};
use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;
use toolgate_mcp_client::federation::Target;
use toolgate_mcp_client::{McpEvent, McpHub};
use toolgate_server::mcp::Requester;

use super::access::Access;

/// What of `requested` the federation serves.
pub(super) fn accepted(requested: &SubscriptionFilter) -> SubscriptionFilter {
    let mut accepted = SubscriptionFilter::new();
    accepted.prompts_list_changed = requested.prompts_list_changed.filter(|w| *w);
    accepted.resources_list_changed = requested.resources_list_changed.filter(|w| *w);
    accepted
        .resource_subscriptions
        .clone_from(&requested.resource_subscriptions);
    accepted
}

/// Serves one listen until `stop`; the subscriptions it took are let go at the end.
pub(super) async fn serve(
    hub: &McpHub,
    access: &Access,
    who: &Requester,
    accepted: &SubscriptionFilter,
    sink: &SubscriptionSink,
    stop: &CancellationToken,
) {
    // Subscribe to the hub's events first, so no update after a subscription is missed.
    let mut events = hub.events();
    let mut held: Vec<(Target, String)> = Vec::new();
    for uri in accepted.resource_subscriptions.iter().flatten() {
        let Ok(target) = access.resource(who, hub, uri) else {
            tracing::debug!(%uri, "listen names a resource the role cannot see; never notified");
            continue;
        };
        match hub.subscribe(&target).await {
            Ok(()) => held.push((target, uri.clone())),
            Err(e) => tracing::warn!(%uri, error = %e.message, "could not subscribe for a listen"),
        }
    }
    let prompts = accepted.prompts_list_changed == Some(true);
    let resources = accepted.resources_list_changed == Some(true);
    loop {
        let event = tokio::select! {
            () = stop.cancelled() => break,
            event = events.recv() => event,
        };
        let sent = match event {
            Ok(McpEvent::ResourceUpdated { server, uri }) => {
                let asked = held
                    .iter()
                    .find(|(t, _)| t.server == server && t.raw == uri)
                    .map(|(_, asked)| asked.clone());
                match asked {
                    Some(asked) => sink.notify_resource_updated(asked).await.is_ok(),
                    None => true,
                }
            }
            Ok(McpEvent::OffersChanged { .. }) => {
                let p = !prompts || sink.notify_prompt_list_changed().await.is_ok();
                let r = !resources || sink.notify_resource_list_changed().await.is_ok();
                p && r
            }
            Ok(_) | Err(RecvError::Lagged(_)) => true,
            Err(RecvError::Closed) => break,
        };
        if !sent {
            break;
        }
    }
    for (target, _) in held {
        if let Err(e) = hub.unsubscribe(&target).await {
            tracing::debug!(uri = %target.raw, error = %e.message, "could not unsubscribe after a listen");
        }
    }
}

/// How often a session's watch looks whether its client is gone.
const GONE_CHECK: std::time::Duration = std::time::Duration::from_secs(1);

/// Sends a 2025-11-25 session `notifications/prompts/list_changed` and
/// `notifications/resources/list_changed` whenever a federated server's offers change, until
/// `stop` fires or the session is gone.
pub(super) async fn watch_session(hub: &McpHub, peer: &Peer<RoleServer>, stop: &CancellationToken) {
    let mut events = hub.events();
    let mut tick = tokio::time::interval(GONE_CHECK);
    loop {
        let event = tokio::select! {
            () = stop.cancelled() => return,
            _ = tick.tick() => {
                if peer.is_transport_closed() {
                    return;
                }
                continue;
            }
            event = events.recv() => event,
        };
        match event {
            Ok(McpEvent::OffersChanged { .. }) => {
                let delivered = peer.notify_prompt_list_changed().await.is_ok()
                    && peer.notify_resource_list_changed().await.is_ok();
                if !delivered {
                    return;
                }
            }
            Ok(_) | Err(RecvError::Lagged(_)) => {}
            Err(RecvError::Closed) => return,
        }
    }
}
