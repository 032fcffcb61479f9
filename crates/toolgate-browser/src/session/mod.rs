//! One toolgate session's browser (`BrowserSession`) and the pool that keeps one per
//! session id ([`SessionPool`]): launched on first use, closed by the `close` action, after
//! `idle_timeout_secs` without an action, or when the pool is dropped.

mod launch;
mod pool;

use std::time::Instant;

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::browser::CloseParams;
use chromiumoxide::cdp::js_protocol::runtime::{EvaluateParams, ExecutionContextId};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::config::BrowserConfig;
use crate::error::BrowserError;
use crate::guard::{Refusals, RequestGuard};
use crate::snapshot::{ElementInfo, PAGE_JS, nonce};

pub use launch::chromium_flags;
pub use pool::SessionPool;

/// A session's Chromium, its page and what the session remembers between actions.
pub(crate) struct BrowserSession {
    launched: launch::Launched,
    pub refusals: Refusals,
    /// Refusals before this mark were already reported to the model.
    pub reported: usize,
    /// The elements the last snapshot listed, to check that an index still means the same.
    pub elements: Vec<ElementInfo>,
    /// The untrusted-content marker nonce of this session.
    pub nonce: String,
    pub last_used: Instant,
}

impl BrowserSession {
    pub(crate) async fn launch(
        cfg: &BrowserConfig,
        guard: RequestGuard,
    ) -> Result<Self, BrowserError> {
        let refusals = Refusals::default();
        let launched = launch::launch(cfg, guard, refusals.clone()).await?;
        Ok(BrowserSession {
            launched,
            refusals,
            reported: 0,
            elements: Vec::new(),
            nonce: nonce(),
            last_used: Instant::now(),
        })
    }

    pub(crate) fn page(&self) -> &Page {
        &self.launched.page
    }

    /// Runs one `page.js` operation in the page's isolated world and decodes its answer.
    ///
    /// After a navigation (a history step restored from the back-forward cache above all)
    /// the isolated world's id known to chromiumoxide can be stale for a moment: then it is
    /// asked again, and as a last resort the page's main world is used (page scripts could
    /// then interfere with the snapshot, never with the guard).
    pub(crate) async fn run_js<T: DeserializeOwned>(&self, args: Value) -> Result<T, BrowserError> {
        let expression = format!("({PAGE_JS})({args})");
        let mut raw = None;
        for attempt in 0..3 {
            if attempt > 0 {
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
            let context = self.page().secondary_execution_context().await?;
            let Some(id) = context else {
                continue;
            };
            match self.evaluate(&expression, Some(id)).await {
                Ok(v) => {
                    raw = Some(v);
                    break;
                }
                Err(BrowserError::Protocol(m)) if m.contains("Cannot find context") => continue,
                Err(e) => return Err(e),
            }
        }
        let raw = match raw {
            Some(v) => v,
            None => self.evaluate(&expression, None).await?,
        };
        if let Some(err) = raw.get("error").and_then(Value::as_str) {
            return Err(BrowserError::NoElement(err.to_owned()));
        }
        serde_json::from_value(raw)
            .map_err(|e| BrowserError::Protocol(format!("unexpected page answer: {e}")))
    }

    /// Evaluates `expression` in a context (`None`: the main frame's default world).
    async fn evaluate(
        &self,
        expression: &str,
        context: Option<ExecutionContextId>,
    ) -> Result<Value, BrowserError> {
        let mut params = EvaluateParams::builder()
            .expression(expression)
            .return_by_value(true)
            .await_promise(true);
        if let Some(id) = context {
            params = params.context_id(id);
        }
        let params = params
            .build()
            .map_err(|e| BrowserError::Protocol(format!("bad evaluation: {e}")))?;
        let reply = self.page().execute(params).await?.result;
        if let Some(exception) = reply.exception_details {
            return Err(BrowserError::Protocol(format!(
                "the page script failed: {}",
                exception.text
            )));
        }
        Ok(reply.result.value.unwrap_or(Value::Null))
    }

    /// Asks Chromium to exit; the drop that follows kills it if it did not.
    pub(crate) async fn close(self) {
        let _ = self.launched.browser.execute(CloseParams::default()).await;
    }
}
