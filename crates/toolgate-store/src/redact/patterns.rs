//! Token-shaped secrets inside free text: one combined [`Regex`] compiled once, so a string is
//! scanned a single time whatever the number of patterns. Only the matched substring is
//! replaced; for `Bearer`/`Basic` credentials and labelled AWS secret keys the scheme or label
//! is kept (`Bearer [REDACTED]`), so the text stays readable.
//!
//! Two patterns are too loose as regexes alone and are confirmed in code: a `Basic` credential
//! must be base64 of text containing `:` (so "Basic settings" stays), and a `Bearer` token
//! must contain a digit or a token punctuation mark, or be at least 20 characters long (so
//! "bearer authentication" stays).
//!
//! Matches are found without capture groups (the regex's DFA alone; resolving groups costs
//! about 2 µs a match): which alternative matched, and where its scheme or label ends, is
//! read off the matched text, since only the credential alternative starts with
//! `bearer`/`basic` and only the labelled AWS secret starts with `aws`.

use std::borrow::Cow;

use regex::Regex;

use super::REDACTED;

/// Strings shorter than this cannot hold any of the patterns worth masking and skip the scan.
pub(crate) const MIN_SCAN_CHARS: usize = 16;

/// Alternatives in priority order. `(?-u:\b)` keeps word boundaries ASCII, which lets the
/// regex engine stay on its fast DFA path for any input.
const TOKEN_PATTERN: &str = r#"(?x)
    (?-u:\b)(?i:bearer|basic)[\ \t]+[A-Za-z0-9\-._~+/]+=*
  | eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*
  | (?-u:\b)sk-[A-Za-z0-9_-]{20,}
  | (?-u:\b)(?:AKIA|ASIA)[A-Z0-9]{16}(?-u:\b)
  | (?i:aws[_-]?secret[_-]?(?:access[_-]?)?key)["']?[\ \t]*[:=][\ \t]*["']?[A-Za-z0-9/+=]{40}
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
        let mut matches = self.regex.find_iter(text).peekable();
        if matches.peek().is_none() {
            return Cow::Borrowed(text);
        }
        let mut out = String::with_capacity(text.len());
        let mut copied = 0;
        for m in matches {
            out.push_str(&text[copied..m.start()]);
            push_replacement(&mut out, m.as_str());
            copied = m.end();
        }
        out.push_str(&text[copied..]);
        Cow::Owned(out)
    }
}

/// Length of the AWS secret that ends a labelled match.
const AWS_SECRET_LEN: usize = 40;

/// Appends what replaces the match `whole`. Every pattern is ASCII up to where the slices
/// below cut, so the byte offsets fall on character boundaries.
fn push_replacement(out: &mut String, whole: &str) {
    let starts_with = |prefix: &str| {
        whole
            .get(..prefix.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(prefix))
    };
    let scheme_len = if starts_with("bearer") {
        Some("bearer".len())
    } else if starts_with("basic") {
        Some("basic".len())
    } else {
        None
    };
    if let Some(len) = scheme_len {
        let (scheme, rest) = whole.split_at(len);
        let cred = rest.trim_start_matches([' ', '\t']);
        let confirmed = if len == "basic".len() {
            is_basic_credential(cred)
        } else {
            is_bearer_token(cred)
        };
        if confirmed {
            out.push_str(scheme);
            out.push(' ');
            out.push_str(REDACTED);
        } else {
            out.push_str(whole);
        }
    } else if starts_with("aws") && whole.len() > AWS_SECRET_LEN {
        out.push_str(&whole[..whole.len() - AWS_SECRET_LEN]);
        out.push_str(REDACTED);
    } else {
        out.push_str(REDACTED);
    }
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
