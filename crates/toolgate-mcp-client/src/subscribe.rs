//! Holding a resource subscription on a server, in either era: `resources/subscribe` on a
//! 2025-11-25 session; on 2026-07-28 (no such method) a `subscriptions/listen` stream for
//! the URI, open while the subscription is held. Either way each
//! `notifications/resources/updated` becomes a [`McpEvent::ResourceUpdated`].

// resources/subscribe and /unsubscribe are legacy (2025-11-25) but still served.
#![allow(deprecated)]

use std::sync::PoisonError;

use rmcp::ServiceError;
use rmcp::model::{
    ServerNotification, SubscribeRequestParams, SubscriptionFilter, UnsubscribeRequestParams,
};
use rmcp::service::{Peer, RoleClient};

use crate::McpEvent;
use crate::connect::error_chain;
use crate::link::{AbortOnDrop, ServerLink};

fn legacy(peer: &Peer<RoleClient>) -> bool {
    peer.peer_info()
        .is_none_or(|info| info.protocol_version.has_initialize())
}

/// Subscribes `peer`'s connection to `uri`.
pub(crate) async fn subscribe(
    link: &ServerLink,
    peer: &Peer<RoleClient>,
    uri: &str,
) -> Result<(), ServiceError> {
    if legacy(peer) {
        return peer.subscribe(SubscribeRequestParams::new(uri)).await;
    }
    let filter = SubscriptionFilter::builder()
        .resource_subscriptions([uri.to_owned()])
        .build();
    let mut stream = peer.listen(filter).await?;
    let (server, events) = (link.server.clone(), link.events.clone());
    let watched = uri.to_owned();
    let task = tokio::spawn(async move {
        loop {
            match stream.next().await {
                Ok(Some(ServerNotification::ResourceUpdatedNotification(n))) => {
                    let _ = events.send(McpEvent::ResourceUpdated {
                        server: server.clone(),
                        uri: n.params.uri,
                    });
                }
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(e) => {
                    tracing::warn!(%server, uri = %watched, error = %error_chain(&e), "resource subscription ended");
                    break;
                }
            }
        }
    });
    link.listens
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(uri.to_owned(), AbortOnDrop(task));
    Ok(())
}

/// Ends `peer`'s connection's subscription to `uri`.
pub(crate) async fn unsubscribe(
    link: &ServerLink,
    peer: &Peer<RoleClient>,
    uri: &str,
) -> Result<(), ServiceError> {
    let listening = link
        .listens
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .remove(uri);
    if listening.is_some() || !legacy(peer) {
        // Dropping the stream's task drops the subscription, which cancels the listen.
        return Ok(());
    }
    peer.unsubscribe(UnsubscribeRequestParams::new(uri)).await
}
