//! Slack's request signing: `X-Slack-Signature: v0=<hex HMAC-SHA256(signing secret,
//! "v0:" + X-Slack-Request-Timestamp + ":" + body)>`. A request is refused when a header is
//! missing, the timestamp is more than five minutes from now (a replay of an old capture),
//! the signature does not match (compared in constant time), or the same signature was
//! already accepted (a replay inside the window).

use std::collections::HashMap;
use std::sync::Mutex;

use aws_lc_rs::hmac;

use crate::secret::Secret;

/// How far a request's timestamp may be from now, as Slack recommends.
pub const WINDOW_SECS: u64 = 300;

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("X-Slack-Request-Timestamp or X-Slack-Signature is missing")]
    Missing,
    #[error(
        "the request's timestamp is more than 5 minutes from now (a replayed or delayed request)"
    )]
    Stale,
    #[error("the signature does not match the body (not signed with this app's signing secret)")]
    BadSignature,
    #[error("this signed request was already received (a replay)")]
    Replayed,
}

pub struct Verifier {
    key: hmac::Key,
    /// Accepted signatures → their timestamp, forgotten once outside the window.
    seen: Mutex<HashMap<Vec<u8>, u64>>,
}

impl std::fmt::Debug for Verifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Verifier([redacted])")
    }
}

impl Verifier {
    pub fn new(secret: &Secret) -> Verifier {
        Verifier {
            key: hmac::Key::new(hmac::HMAC_SHA256, secret.expose().as_bytes()),
            seen: Mutex::new(HashMap::new()),
        }
    }

    /// Checks one request received at `now_secs`.
    pub fn verify(
        &self,
        timestamp: Option<&str>,
        signature: Option<&str>,
        body: &[u8],
        now_secs: u64,
    ) -> Result<(), Refusal> {
        let (Some(timestamp), Some(signature)) = (timestamp, signature) else {
            return Err(Refusal::Missing);
        };
        let ts: u64 = timestamp.trim().parse().map_err(|_| Refusal::Stale)?;
        if ts.abs_diff(now_secs) > WINDOW_SECS {
            return Err(Refusal::Stale);
        }
        let tag = signature
            .strip_prefix("v0=")
            .and_then(|h| hex::decode(h).ok())
            .ok_or(Refusal::BadSignature)?;
        let mut message = format!("v0:{timestamp}:").into_bytes();
        message.extend_from_slice(body);
        hmac::verify(&self.key, &message, &tag).map_err(|_| Refusal::BadSignature)?;
        let mut seen = self
            .seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        seen.retain(|_, at| at.abs_diff(now_secs) <= WINDOW_SECS);
        if seen.insert(tag, ts).is_some() {
            return Err(Refusal::Replayed);
        }
        Ok(())
    }
}

/// The signature Slack would send (for tests and the fake).
pub fn sign(secret: &Secret, timestamp: &str, body: &[u8]) -> String {
    let key = hmac::Key::new(hmac::HMAC_SHA256, secret.expose().as_bytes());
    let mut message = format!("v0:{timestamp}:").into_bytes();
    message.extend_from_slice(body);
    format!("v0={}", hex::encode(hmac::sign(&key, &message).as_ref()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slacks_documented_example_verifies() {
        // The example from Slack's "Verifying requests from Slack" page.
        let secret = Secret::new("8f742231b10e8888abcd99yyyzzz85a5");
        let body = b"token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c";
        let expected = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503";
        assert_eq!(sign(&secret, "1531420618", body), expected);
        let v = Verifier::new(&secret);
        assert_eq!(
            v.verify(Some("1531420618"), Some(expected), body, 1_531_420_618 + 10),
            Ok(())
        );
    }

    #[test]
    fn forged_stale_and_replayed_requests_are_refused() {
        let secret = Secret::new("s3cret");
        let v = Verifier::new(&secret);
        let now = 1_800_000_000;
        let body = b"payload=%7B%7D";
        let ts = now.to_string();
        let good = sign(&secret, &ts, body);
        assert_eq!(
            v.verify(None, Some(&good), body, now),
            Err(Refusal::Missing)
        );
        let forged = sign(&Secret::new("guess"), &ts, body);
        assert_eq!(
            v.verify(Some(&ts), Some(&forged), body, now),
            Err(Refusal::BadSignature)
        );
        assert_eq!(
            v.verify(Some(&ts), Some("v0=zz"), body, now),
            Err(Refusal::BadSignature)
        );
        assert_eq!(
            v.verify(Some(&ts), Some(&good), b"payload=%7B%7Dx", now),
            Err(Refusal::BadSignature)
        );
        let old = (now - 301).to_string();
        let old_sig = sign(&secret, &old, body);
        assert_eq!(
            v.verify(Some(&old), Some(&old_sig), body, now),
            Err(Refusal::Stale)
        );
        assert_eq!(v.verify(Some(&ts), Some(&good), body, now), Ok(()));
        assert_eq!(
            v.verify(Some(&ts), Some(&good), body, now + 1),
            Err(Refusal::Replayed)
        );
    }
}
