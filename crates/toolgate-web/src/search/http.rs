//! The one GET both backends make: send through the guarded client, classify failures,
//! quote a short key-scrubbed excerpt of an error answer, decode the JSON of a good one.

use serde::de::DeserializeOwned;
use toolgate_net::egress_refusal;

use super::backend::SearchError;
use super::secret::ApiKey;
use crate::cause::causes;

/// Largest answer read (a results page is a few tens of KiB).
const MAX_ANSWER: usize = 4 << 20;
/// Characters of an error answer quoted in the message.
const EXCERPT: usize = 200;

/// Sends `request` and decodes a 2xx JSON answer. `hint` explains a status for this
/// backend (`"; check the API key"`); `key` is scrubbed from anything quoted.
pub(crate) async fn get_json<T: DeserializeOwned>(
    request: reqwest::RequestBuilder,
    backend: &'static str,
    key: Option<&ApiKey>,
    hint: &(dyn Fn(u16) -> String + Sync),
) -> Result<T, SearchError> {
    let scrub = |text: &str| key.map_or_else(|| text.to_owned(), |k| k.scrub(text));
    let network = |e: reqwest::Error| match egress_refusal(&e) {
        Some(refusal) => SearchError::Refused(refusal.clone()),
        None if e.is_timeout() => SearchError::Timeout { backend },
        None => SearchError::Network {
            backend,
            reason: scrub(&causes(&e)),
        },
    };
    let mut resp = request.send().await.map_err(network)?;
    let status = resp.status().as_u16();
    let mut body = Vec::new();
    while let Some(chunk) = resp.chunk().await.map_err(network)? {
        body.extend_from_slice(&chunk[..chunk.len().min(MAX_ANSWER - body.len())]);
        if body.len() >= MAX_ANSWER {
            break;
        }
    }
    if !(200..300).contains(&status) {
        let text = String::from_utf8_lossy(&body);
        let excerpt: String = scrub(&text)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .chars()
            .take(EXCERPT)
            .collect();
        return Err(SearchError::Status {
            backend,
            status,
            hint: hint(status),
            body: if excerpt.is_empty() {
                String::new()
            } else {
                format!(": {excerpt}")
            },
        });
    }
    serde_json::from_slice(&body).map_err(|e| SearchError::Decode {
        backend,
        reason: scrub(&e.to_string()),
    })
}
