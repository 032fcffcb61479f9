//! Why one call (or the set-up of one worker) failed. Every failure is counted and fails the
//! run; the message names what the server answered so it can be reproduced with curl.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum LoadError {
    #[error("invalid target URL `{url}`: {reason} (expected http://HOST:PORT[/path])")]
    Url { url: String, reason: &'static str },
    #[error("cannot connect to {authority}: {source}")]
    Connect {
        authority: String,
        source: std::io::Error,
    },
    #[error("HTTP transport error: {0}")]
    Http(#[from] hyper::Error),
    #[error("cannot build the request: {0}")]
    Request(#[from] http::Error),
    #[error("HTTP {status} from {path}: {body}")]
    Status {
        status: u16,
        path: String,
        body: String,
    },
    #[error("the initialize answer carried no Mcp-Session-Id header")]
    NoSession,
    #[error("no JSON-RPC answer with id {id} in the response body: {body}")]
    NoAnswer { id: u64, body: String },
    #[error("response body is not JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("the call failed: {0}")]
    CallFailed(String),
}

/// At most `max` characters of `body`, for error messages.
pub fn excerpt(body: &[u8], max: usize) -> String {
    let text = String::from_utf8_lossy(body);
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpt_cuts_long_bodies_on_a_char_boundary() {
        assert_eq!(excerpt("héllo".as_bytes(), 2), "hé…");
        assert_eq!(excerpt(b"ok", 2), "ok");
    }
}
