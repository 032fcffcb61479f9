//! CDP `Fetch` interception on the browser target: every request of every page, frame and
//! worker is paused until the guard decided. Redirects arrive as new paused requests for the
//! target URL, so each hop is checked like a first request.
//!
//! Requests are decided concurrently (a page's subresources do not wait on each other);
//! an unparseable URL is refused, never continued.

use std::sync::{Arc, Weak};

use chromiumoxide::Browser;
use chromiumoxide::cdp::browser_protocol::fetch::{
    ContinueRequestParams, EnableParams, EventRequestPaused, FailRequestParams, RequestPattern,
    RequestStage,
};
use chromiumoxide::cdp::browser_protocol::network::{ErrorReason, ResourceType};
use futures_util::StreamExt;
use tokio::task::JoinHandle;
use url::Url;

use super::{GuardRefusal, Refusal, Refusals, RequestGuard, authority, display_url};
use crate::error::BrowserError;

/// Turns interception on for the whole browser and spawns the task that decides each
/// paused request. The task ends when the browser goes away.
pub async fn start(
    browser: &Arc<Browser>,
    guard: RequestGuard,
    refusals: Refusals,
) -> Result<JoinHandle<()>, BrowserError> {
    let mut paused = browser.event_listener::<EventRequestPaused>().await?;
    let all = RequestPattern::builder()
        .url_pattern("*")
        .request_stage(RequestStage::Request)
        .build();
    browser
        .execute(EnableParams::builder().pattern(all).build())
        .await?;
    let weak = Arc::downgrade(browser);
    Ok(tokio::spawn(async move {
        while let Some(event) = paused.next().await {
            let weak = Weak::clone(&weak);
            let guard = guard.clone();
            let refusals = refusals.clone();
            tokio::spawn(async move { decide(weak, &guard, &refusals, &event).await });
        }
    }))
}

async fn decide(
    browser: Weak<Browser>,
    guard: &RequestGuard,
    refusals: &Refusals,
    event: &EventRequestPaused,
) {
    let verdict = match Url::parse(&event.request.url) {
        Ok(url) => {
            let checked = guard.check(&url).await;
            if checked.is_ok()
                && let (Some(host), Some(port)) = (url.host_str(), url.port_or_known_default())
            {
                refusals.note_page_authority(authority(host, port));
            }
            checked.map(|_| ()).map_err(|r| (display_url(&url), r))
        }
        Err(e) => Err((
            event.request.url.chars().take(200).collect(),
            GuardRefusal::Unresolved {
                host: String::new(),
                error: format!("not a URL: {e}"),
            },
        )),
    };
    let Some(browser) = browser.upgrade() else {
        return;
    };
    let id = event.request_id.clone();
    let sent = match verdict {
        Ok(()) => browser
            .execute(ContinueRequestParams::new(id))
            .await
            .map(|_| ()),
        Err((url, refusal)) => {
            let reason = if refusal.is_policy() {
                refusals.record(Refusal {
                    url,
                    reason: refusal.to_string(),
                    navigation: event.resource_type == ResourceType::Document,
                    frame: Some(event.frame_id.inner().clone()),
                });
                ErrorReason::BlockedByClient
            } else {
                ErrorReason::NameNotResolved
            };
            browser
                .execute(FailRequestParams::new(id, reason))
                .await
                .map(|_| ())
        }
    };
    if let Err(e) = sent {
        // The request's page may have gone away meanwhile; nothing was sent for it.
        tracing::debug!("browser guard: answering a paused request failed: {e}");
    }
}
