//! The webhook approval channel: each NEW pending approval seen by the [feed](super::feed)
//! is POSTed as JSON to `[server.webhook] url`:
//!
//! ```json
//! {"event": "approval.requested", "approval": Approval,
//!  "approve_url": "<base>/v1/approvals/<id>/decision", "console_url": "<base>/#/approvals/<id>"}
//! ```
//!
//! Delivery never blocks a call (it runs on its own task), uses a short timeout, follows no
//! redirect, and tries [`ATTEMPTS`] times with growing pauses; failures are logged.
//!
//! The client comes from `toolgate_net` and obeys `[egress]`: https only unless the host is
//! in `allow_http`, and no loopback/private/link-local/metadata address (literal or resolved)
//! unless it is in `allow_hosts`. A URL the guard refuses outright stops the server at start;
//! a name that resolves to a refused address is refused at each delivery, without retries.

use std::time::Duration;

use reqwest::Url;
use serde_json::{Value, json};
use tokio::sync::broadcast::error::RecvError;
use toolgate_net::{EgressError, EgressPolicy};
use toolgate_store::approvals::{ApprovalRequest, ApprovalStatus};

use super::approvals::approval_json;
use crate::state::AppState;

/// Tries per event, the pause before each retry, and the deadline of one try.
pub const ATTEMPTS: usize = 3;
const BACKOFF: [Duration; ATTEMPTS - 1] = [Duration::from_millis(250), Duration::from_secs(1)];
const TIMEOUT_SECS: u64 = 5;

/// A webhook URL that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WebhookError {
    #[error("[server.webhook] url `{url}` is not a URL: {reason}")]
    Invalid { url: String, reason: String },
    #[error("[server.webhook] url `{url}` must use http or https, not `{scheme}`")]
    Scheme { url: String, scheme: String },
    #[error("[server.webhook] url {0}")]
    Refused(EgressError),
    #[error("cannot build the webhook client: {0}")]
    Client(String),
}

/// Checks a configured URL: absolute, `http` or `https`.
pub fn parse_url(url: &str) -> Result<Url, WebhookError> {
    let parsed = Url::parse(url).map_err(|e| WebhookError::Invalid {
        url: url.to_owned(),
        reason: e.to_string(),
    })?;
    match parsed.scheme() {
        "http" | "https" => Ok(parsed),
        other => Err(WebhookError::Scheme {
            url: url.to_owned(),
            scheme: other.to_owned(),
        }),
    }
}

/// [`parse_url`], then the `[egress]` check of the URL itself (scheme, literal address).
pub fn checked_url(url: &str, egress: &EgressPolicy) -> Result<Url, WebhookError> {
    let parsed = parse_url(url)?;
    toolgate_net::check_url(egress, &parsed).map_err(WebhookError::Refused)?;
    Ok(parsed)
}

/// The `[egress]` rules with the webhook's own timeout, and redirects not followed.
pub fn client_policy(egress: &EgressPolicy) -> EgressPolicy {
    EgressPolicy {
        max_redirects: 0,
        request_timeout_secs: TIMEOUT_SECS,
        ..egress.clone()
    }
}

/// What is POSTed for a new request.
pub fn payload(base: &str, r: &ApprovalRequest) -> Value {
    json!({
        "event": "approval.requested",
        "approval": approval_json(r),
        "approve_url": format!("{base}/v1/approvals/{}/decision", r.id),
        "console_url": format!("{base}/#/approvals/{}", r.id),
    })
}

/// Starts the delivery task if a webhook is configured: it listens to the feed until the
/// server shuts down. Errors if the URL is unusable.
pub async fn start(state: &AppState) -> Result<(), WebhookError> {
    let Some(cfg) = &state.config.webhook else {
        return Ok(());
    };
    let url = checked_url(&cfg.url, &state.config.egress)?;
    let client = toolgate_net::client(&client_policy(&state.config.egress))
        .map_err(|e| WebhookError::Client(e.to_string()))?;
    let mut rx = state
        .feed()
        .subscribe(&state.approvals, &state.shutdown)
        .await;
    let shutdown = state.shutdown.clone();
    let base = super::public_url(state);
    tokio::spawn(async move {
        loop {
            let received = tokio::select! {
                () = shutdown.cancelled() => return,
                received = rx.recv() => received,
            };
            match received {
                Ok(event) if event.is_new && event.request.status == ApprovalStatus::Pending => {
                    let body = payload(&base, &event.request);
                    tokio::spawn(deliver(
                        client.clone(),
                        url.clone(),
                        event.request.id.clone(),
                        body,
                    ));
                }
                Ok(_) => {}
                Err(RecvError::Lagged(n)) => {
                    tracing::warn!("webhook: {n} approval events were missed (too many at once)");
                }
                Err(RecvError::Closed) => return,
            }
        }
    });
    Ok(())
}

/// `error: cause: cause…` — reqwest's own message alone ("error sending request") does not
/// say what went wrong.
fn with_causes(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}

/// POSTs `body`, retrying on any failure; returns whether a try got a 2xx answer.
pub async fn deliver(client: reqwest::Client, url: Url, id: String, body: Value) -> bool {
    // Webhook URLs often carry a secret in the path (chat hooks): log the origin only.
    let shown = url.origin().ascii_serialization();
    for attempt in 0..ATTEMPTS {
        if attempt > 0 {
            tokio::time::sleep(BACKOFF[attempt - 1]).await;
        }
        let failure = match client.post(url.clone()).json(&body).send().await {
            Ok(resp) if resp.status().is_success() => return true,
            Ok(resp) => format!("answered {}", resp.status()),
            Err(e) => {
                if let Some(refusal) = toolgate_net::egress_refusal(&e) {
                    // Trying again cannot change the policy's answer.
                    tracing::error!(approval = %id, "webhook: not sent to {shown}: {refusal}");
                    return false;
                }
                with_causes(&e.without_url())
            }
        };
        tracing::warn!(
            approval = %id,
            "webhook: try {} of {ATTEMPTS} to {shown} failed: {failure}",
            attempt + 1
        );
    }
    tracing::error!(approval = %id, "webhook: giving up on {shown} after {ATTEMPTS} tries");
    false
}
