//! [`PaperHttp`]: the one GET every paper source makes, in this order:
//! wait for the source's spacing ([`Spacing`], arXiv's one request per 3 s) → send through
//! the guarded client (`toolgate_net`: every hop checked) → on 429 / 503 wait what
//! `Retry-After` says (else a doubling backoff) and try again, up to `max_retries`, never
//! longer than `max_wait` → any other non-2xx is an error quoting a scrubbed excerpt → the
//! body read up to `max_bytes` (over it: an error, not a cut document).

use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{HeaderValue, RETRY_AFTER, USER_AGENT};
use toolgate_net::egress_refusal;

use super::clock::Clock;
use super::source::PapersError;
use crate::cause::causes;
use crate::search::ApiKey;

/// Characters of an error answer quoted in the message.
const EXCERPT: usize = 200;
/// First backoff after a 429 without `Retry-After`; doubled per retry.
const BACKOFF: Duration = Duration::from_secs(1);

/// Limits shared by every source's requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpLimits {
    pub max_bytes: u64,
    pub max_retries: u32,
    /// The longest wait a 429 may ask for; a longer one fails at once.
    pub max_wait: Duration,
}

/// The client, clock and limits the sources share.
#[derive(Clone)]
pub struct PaperHttp {
    client: reqwest::Client,
    clock: Arc<dyn Clock>,
    limits: HttpLimits,
    user_agent: HeaderValue,
}

impl std::fmt::Debug for PaperHttp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PaperHttp")
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

/// A minimum interval between one source's requests (one per source, shared by its calls).
#[derive(Debug)]
pub struct Spacing {
    interval: Duration,
    /// When the next request may start (the clock's time).
    next: tokio::sync::Mutex<Option<Duration>>,
}

impl Spacing {
    pub fn new(interval: Duration) -> Self {
        Spacing {
            interval,
            next: tokio::sync::Mutex::new(None),
        }
    }
}

/// One request to make: the source's name, its URL, headers, and the key to scrub.
pub struct Get<'a> {
    pub source_name: &'static str,
    pub url: url::Url,
    pub accept: &'static str,
    /// Sent as `x-api-key` (marked sensitive) and scrubbed from anything quoted.
    pub key: Option<&'a ApiKey>,
    pub spacing: Option<&'a Spacing>,
}

/// A 2xx answer, or 404 (`None`: the index has no such paper).
pub type Body = Option<Vec<u8>>;

impl PaperHttp {
    /// `client` must come from `toolgate_net`.
    pub fn new(
        client: reqwest::Client,
        clock: Arc<dyn Clock>,
        limits: HttpLimits,
        user_agent: &str,
    ) -> Self {
        PaperHttp {
            client,
            clock,
            limits,
            user_agent: HeaderValue::from_str(user_agent)
                .unwrap_or_else(|_| HeaderValue::from_static("toolgate-retrieve-papers")),
        }
    }

    /// GETs `get.url`; `Ok(None)` on 404.
    pub async fn get(&self, get: Get<'_>) -> Result<Body, PapersError> {
        let name = get.source_name;
        let scrub = |text: &str| get.key.map_or_else(|| text.to_owned(), |k| k.scrub(text));
        let network = |e: reqwest::Error| match egress_refusal(&e) {
            Some(refusal) => PapersError::Refused(refusal.clone()),
            None if e.is_timeout() => PapersError::Timeout { source_name: name },
            None => PapersError::Network {
                source_name: name,
                reason: scrub(&causes(&e)),
            },
        };
        let mut attempt = 0;
        loop {
            self.wait_turn(get.spacing).await;
            let mut request = self
                .client
                .get(get.url.clone())
                .header(reqwest::header::ACCEPT, get.accept)
                .header(USER_AGENT, self.user_agent.clone());
            if let Some(value) = get.key.and_then(ApiKey::header_value) {
                request = request.header("x-api-key", value);
            }
            let mut resp = request.send().await.map_err(network)?;
            let status = resp.status().as_u16();
            if matches!(status, 429 | 503) {
                let asked = retry_after(resp.headers().get(RETRY_AFTER));
                let wait = asked.unwrap_or(BACKOFF * 2u32.saturating_pow(attempt));
                if attempt >= self.limits.max_retries || wait > self.limits.max_wait {
                    return Err(PapersError::RateLimited {
                        source_name: name,
                        retry_after_secs: asked.map(|d| d.as_secs()),
                    });
                }
                attempt += 1;
                self.clock.sleep(wait).await;
                continue;
            }
            if status == 404 {
                return Ok(None);
            }
            let cap = usize::try_from(self.limits.max_bytes).unwrap_or(usize::MAX);
            let mut body = Vec::new();
            while let Some(chunk) = resp.chunk().await.map_err(network)? {
                if body.len() + chunk.len() > cap {
                    if (200..300).contains(&status) {
                        return Err(PapersError::TooLarge {
                            source_name: name,
                            limit: self.limits.max_bytes,
                        });
                    }
                    break;
                }
                body.extend_from_slice(&chunk);
            }
            if !(200..300).contains(&status) {
                return Err(PapersError::Status {
                    source_name: name,
                    status,
                    body: excerpt(&scrub(&String::from_utf8_lossy(&body))),
                });
            }
            return Ok(Some(body));
        }
    }

    /// Waits until `spacing` lets the next request start, and books the slot after it.
    async fn wait_turn(&self, spacing: Option<&Spacing>) {
        let Some(spacing) = spacing else { return };
        let mut next = spacing.next.lock().await;
        let now = self.clock.now();
        if let Some(at) = *next
            && at > now
        {
            self.clock.sleep(at - now).await;
        }
        *next = Some(self.clock.now() + spacing.interval);
    }
}

/// `Retry-After` in seconds (the HTTP-date form is not waited on: the backoff applies).
fn retry_after(value: Option<&HeaderValue>) -> Option<Duration> {
    let secs: u64 = value?.to_str().ok()?.trim().parse().ok()?;
    Some(Duration::from_secs(secs))
}

fn excerpt(text: &str) -> String {
    let short: String = text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .take(EXCERPT)
        .collect();
    if short.is_empty() {
        String::new()
    } else {
        format!(": {short}")
    }
}

/// Parses a JSON answer, naming the source on failure.
pub fn decode_json<T: serde::de::DeserializeOwned>(
    source_name: &'static str,
    body: &[u8],
) -> Result<T, PapersError> {
    serde_json::from_slice(body).map_err(|e| PapersError::Decode {
        source_name,
        format: "JSON",
        reason: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_is_read_in_seconds_only() {
        let v = |s: &'static str| HeaderValue::from_static(s);
        assert_eq!(retry_after(Some(&v(" 7 "))), Some(Duration::from_secs(7)));
        assert_eq!(retry_after(Some(&v("Wed, 21 Oct 2015 07:28:00 GMT"))), None);
        assert_eq!(retry_after(None), None);
    }
}
