//! The HTTP side every provider shares: a POST of a JSON body through the SSRF-guarded
//! client, retried after 429 (honouring `retry-after` / `retry-after-ms`) and 5xx answers with
//! a capped exponential backoff, and error bodies turned into messages.

use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;

use crate::client::ModelError;

/// An API key. Never shown: `Debug` prints `***`.
#[derive(Clone)]
pub struct ApiKey(String);

impl ApiKey {
    pub fn new(key: String) -> Self {
        ApiKey(key)
    }

    /// A header carrying the key, marked sensitive so that nothing prints it.
    pub(crate) fn header(&self, prefix: &str) -> Result<HeaderValue, ModelError> {
        let mut v = HeaderValue::from_str(&format!("{prefix}{}", self.0)).map_err(|_| {
            ModelError::Config("the API key contains characters a header cannot carry".into())
        })?;
        v.set_sensitive(true);
        Ok(v)
    }

    /// `Authorization: Bearer <key>` when there is a key (OpenAI-style APIs), else no header.
    pub(crate) fn bearer_headers(key: Option<&ApiKey>) -> Result<HeaderMap, ModelError> {
        let mut h = HeaderMap::new();
        if let Some(k) = key {
            h.insert(reqwest::header::AUTHORIZATION, k.header("Bearer ")?);
        }
        Ok(h)
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey(***)")
    }
}

/// `headers` with the request's trace context, when it has one.
pub(crate) fn traced(mut headers: HeaderMap, request: &crate::types::ModelRequest) -> HeaderMap {
    if let Some(t) = &request.trace {
        if let Ok(v) = HeaderValue::from_str(t.traceparent()) {
            headers.insert(HeaderName::from_static("traceparent"), v);
        }
        if let Some(state) = t.tracestate()
            && let Ok(v) = HeaderValue::from_str(state)
        {
            headers.insert(HeaderName::from_static("tracestate"), v);
        }
    }
    headers
}

#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    pub max_retries: u32,
    pub base: Duration,
    pub max: Duration,
}

impl RetryPolicy {
    fn backoff(&self, attempt: u32) -> Duration {
        let factor = 1u32.checked_shl(attempt.min(16)).unwrap_or(u32::MAX);
        self.base.saturating_mul(factor).min(self.max)
    }
}

#[derive(Debug, Clone)]
pub struct Http {
    client: reqwest::Client,
    base: url::Url,
    retry: RetryPolicy,
}

impl Http {
    pub fn new(client: reqwest::Client, base: url::Url, retry: RetryPolicy) -> Self {
        Http {
            client,
            base,
            retry,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("{}/{}", self.base.as_str().trim_end_matches('/'), path)
    }

    /// [`Http::post`] of a non-streaming request, its answer read as JSON; `what` names the
    /// answer in the error ("the completion is not JSON").
    pub async fn post_json(
        &self,
        path: &str,
        headers: &HeaderMap,
        body: &Value,
        what: &str,
    ) -> Result<Value, ModelError> {
        self.post(path, headers, body)
            .await?
            .json()
            .await
            .map_err(|e| ModelError::Protocol(format!("{what} is not JSON: {e}")))
    }

    /// POSTs `body` to `path` under the base URL; returns the first 2xx answer.
    pub async fn post(
        &self,
        path: &str,
        headers: &HeaderMap,
        body: &Value,
    ) -> Result<reqwest::Response, ModelError> {
        let url = self.url(path);
        let bytes = serde_json::to_vec(body)
            .map_err(|e| ModelError::Protocol(format!("cannot encode the request: {e}")))?;
        let mut attempt = 0u32;
        loop {
            let sent = self
                .client
                .post(&url)
                .headers(headers.clone())
                .header(
                    HeaderName::from_static("content-type"),
                    HeaderValue::from_static("application/json"),
                )
                .body(bytes.clone())
                .send()
                .await;
            let response = match sent {
                Ok(r) => r,
                Err(e) => return Err(transport_error(&e)),
            };
            let status = response.status().as_u16();
            if response.status().is_success() {
                return Ok(response);
            }
            let retryable = status == 429 || status == 408 || status >= 500;
            let wait = retry_after(response.headers());
            let message = error_message(response).await;
            if !retryable {
                return Err(ModelError::Status { status, message });
            }
            if attempt >= self.retry.max_retries {
                return Err(ModelError::RetriesExhausted {
                    status,
                    attempts: attempt + 1,
                    message,
                });
            }
            let pause = wait
                .unwrap_or_else(|| self.retry.backoff(attempt))
                .min(self.retry.max);
            tracing::warn!(status, attempt, ?pause, %message, "model server error; retrying");
            tokio::time::sleep(pause).await;
            attempt += 1;
        }
    }
}

fn transport_error(e: &reqwest::Error) -> ModelError {
    if let Some(refusal) = toolgate_net::egress_refusal(e) {
        return ModelError::Transport(refusal.to_string());
    }
    if e.is_timeout() {
        return ModelError::Transport(
            "the request timed out (raise [model] timeout_secs for slow models)".into(),
        );
    }
    let mut msg = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        msg.push_str(": ");
        msg.push_str(&s.to_string());
        source = s.source();
    }
    ModelError::Transport(msg)
}

/// `retry-after-ms`, else `retry-after` in seconds (HTTP dates fall back to the backoff).
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let get = |name: &str| headers.get(name)?.to_str().ok()?.trim().parse::<f64>().ok();
    if let Some(ms) = get("retry-after-ms").filter(|v| v.is_finite() && *v >= 0.0) {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    get("retry-after")
        .filter(|v| v.is_finite() && *v >= 0.0)
        .map(Duration::from_secs_f64)
}

/// `error.message` of an OpenAI or Anthropic error body, else the start of the body.
async fn error_message(response: reqwest::Response) -> String {
    let reason = response
        .status()
        .canonical_reason()
        .unwrap_or("error")
        .to_owned();
    let text = response.text().await.unwrap_or_default();
    let from_json = serde_json::from_str::<Value>(&text).ok().and_then(|v| {
        let e = v.get("error")?;
        e.get("message")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .or_else(|| e.as_str().map(str::to_owned))
    });
    // A server may echo (part of) the key or other credentials: masked like the audit log.
    let redact = |s: &str| toolgate_redact::Redactor::shared().redact_text(s);
    match from_json {
        Some(m) => format!("{reason}: {}", redact(&m)),
        None if text.trim().is_empty() => reason,
        None => {
            let mut end = text.len().min(300);
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            format!("{reason}: {}", redact(text[..end].trim()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap_and_retry_after_is_read() {
        let p = RetryPolicy {
            max_retries: 5,
            base: Duration::from_millis(100),
            max: Duration::from_millis(350),
        };
        let waits: Vec<u128> = (0..4).map(|a| p.backoff(a).as_millis()).collect();
        assert_eq!(waits, vec![100, 200, 350, 350]);
        let mut h = HeaderMap::new();
        h.insert("retry-after", HeaderValue::from_static("2"));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after-ms", HeaderValue::from_static("150"));
        assert_eq!(retry_after(&h), Some(Duration::from_millis(150)));
        let mut h = HeaderMap::new();
        h.insert(
            "retry-after",
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(retry_after(&h), None);
    }

    #[test]
    fn the_key_is_never_shown() {
        let k = ApiKey::new("sk-secret".into());
        assert_eq!(format!("{k:?}"), "ApiKey(***)");
        let h = k.header("Bearer ").unwrap();
        assert!(h.is_sensitive());
        assert!(!format!("{h:?}").contains("sk-secret"));
    }
}
