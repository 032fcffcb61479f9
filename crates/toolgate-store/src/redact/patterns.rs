//! Token-shaped secrets inside free text: one combined [`Regex`] compiled once, so a string is
//! scanned a single time whatever the number of patterns. Only the matched substring is
//! replaced; for `Bearer`/`Basic` credentials and labelled AWS secret keys the scheme or label
//! is kept (`Bearer [REDACTED]`), so the text stays readable.
//!
//! Two patterns are too loose as regexes alone and are confirmed in code: a `Basic` credential
//! must be base64 of text containing `:` (so "Basic settings" stays), and a `Bearer` token
//! must contain a digit or a token punctuation mark, or be at least 20 characters long (so
//! "bearer authentication" stays).

use std::borrow::Cow;

use regex::{Captures, Regex};

use super::REDACTED;

/// Strings shorter than this cannot hold any of the patterns worth masking and skip the scan.
pub(crate) const MIN_SCAN_CHARS: usize = 16;

/// Alternatives in priority order. `(?-u:\b)` keeps word boundaries ASCII, which lets the
/// regex engine stay on its fast DFA path for any input.
const TOKEN_PATTERN: &str = r#"(?x)
    (?P<scheme>(?-u:\b)(?i:bearer|basic))[\ \t]+(?P<cred>[A-Za-z0-9\-._~+/]+=*)
  | eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*
  | (?-u:\b)sk-[A-Za-z0-9_-]{20,}
  | (?-u:\b)(?:AKIA|ASIA)[A-Z0-9]{16}(?-u:\b)
  | (?P<label>(?i:aws[_-]?secret[_-]?(?:access[_-]?)?key)["']?[\ \t]*[:=][\ \t]*["']?)[A-Za-z0-9/+=]{40}
  | (?-u:\b)(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})
  | (?-u:\b)xox[abprs]-[A-Za-z0-9-]{10,}
  | (?-u:\b)AIza[0-9A-Za-z_-]{35}
  | -----BEGIN[A-Z0-9\ ]*PRIVATE\ KEY-----(?s:.)*?(?:-----END[A-Z0-9\ ]*PRIVATE\ KEY-----|\z)
"#;

/// The compiled token matcher.
#[derive(Debug, Clone)]
pub(crate) struct TokenPatterns {
    regex: Regex,
}

impl TokenPatterns {
    pub(crate) fn new() -> Self {
        // The pattern is a constant covered by tests; failing to compile it is a programming
        // error caught by the first test run, never by user input.
        #[allow(clippy::expect_used)]
        let regex = Regex::new(TOKEN_PATTERN).expect("the token pattern compiles");
        TokenPatterns { regex }
    }

    /// `text` with every token-shaped substring masked; borrowed when nothing matched.
    pub(crate) fn mask<'a>(&self, text: &'a str) -> Cow<'a, str> {
        if text.len() < MIN_SCAN_CHARS {
            return Cow::Borrowed(text);
        }
        self.regex
            .replace_all(text, |caps: &Captures<'_>| replacement(caps))
    }
}

fn replacement(caps: &Captures<'_>) -> String {
    let whole = caps.get(0).map_or("", |m| m.as_str());
    if let (Some(scheme), Some(cred)) = (caps.name("scheme"), caps.name("cred")) {
        let scheme = scheme.as_str();
        let confirmed = if scheme.eq_ignore_ascii_case("basic") {
            is_basic_credential(cred.as_str())
        } else {
            is_bearer_token(cred.as_str())
        };
        return if confirmed {
            format!("{scheme} {REDACTED}")
        } else {
            whole.to_owned()
        };
    }
    if let Some(label) = caps.name("label") {
        return format!("{}{REDACTED}", label.as_str());
    }
    REDACTED.to_owned()
}

fn is_bearer_token(cred: &str) -> bool {
    cred.len() >= 8
        && (cred.len() >= 20
            || cred
                .bytes()
                .any(|b| b.is_ascii_digit() || b"-._~+/=".contains(&b)))
}

/// Basic credentials are base64 of `user:password`.
fn is_basic_credential(cred: &str) -> bool {
    decode_base64(cred).is_some_and(|bytes| bytes.contains(&b':'))
}

/// Standard base64 with optional padding; `None` if `text` is not base64.
fn decode_base64(text: &str) -> Option<Vec<u8>> {
    let body = text.trim_end_matches('=');
    if body.len() % 4 == 1 || text.len() - body.len() > 2 {
        return None;
    }
    let mut out = Vec::with_capacity(body.len() * 3 / 4);
    let mut acc = 0u32;
    let mut bits = 0u32;
    for b in body.bytes() {
        let v = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_decoding() {
        assert_eq!(decode_base64("dXNlcjpwYXNz"), Some(b"user:pass".to_vec()));
        assert_eq!(
            decode_base64("dXNlcjpwYXNzMQ=="),
            Some(b"user:pass1".to_vec())
        );
        assert_eq!(
            decode_base64("settings"),
            Some(vec![0xb1, 0xeb, 0x6d, 0x8a, 0x78, 0x2c])
        );
        assert_eq!(decode_base64("not base64!"), None);
    }

    #[test]
    fn short_text_is_not_scanned() {
        let patterns = TokenPatterns::new();
        assert!(matches!(patterns.mask("Bearer abc123"), Cow::Borrowed(_)));
    }
}
