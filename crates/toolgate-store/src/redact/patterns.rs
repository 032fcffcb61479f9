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
pub(crate) const MIN_SCAN_CHARS: usize = 8;

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
  | [A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@?\#"'<>]*:[^\s/?\#"'<>]+@
  | (?-u:\b)(?:mysql[a-z]*|mariadb[a-z\-]*)(?:[\ \t]+[^\s;|&]+)*?[\ \t]+-p[^\s;|&]+
  | (?-u:\b)sshpass[\ \t]+-p[\ \t]*[^\s;|&]+
  | (?-u:\b)curl(?:[\ \t]+[^\s;|&]+)*?[\ \t]+(?:-u|--user)[\ \t]*["']?[^\s:"']+:[^\s"']+
  | (?-u:\b)(?i:[a-z0-9_\-]*(?:password|passwd|passphrase|pwd|secret|token|api[_\-]?key|access[_\-]?key|private[_\-]?key))
    ["']?[\ \t]*[:=][\ \t]*(?:(?i:bearer|basic|token)[\ \t]+)?(?:"[^"\n]*"?|'[^'\n]*'?|[^\s"'&;,$`(](?:[^\s"'&;,]*[^\s"'&;,)\]}>])?)
"#;

/// For the credential alternatives that keep their context (a URL's user, a label, a
/// command): which part of a match is the secret. Tried in order on the matched text only,
/// so their capture groups cost nothing on text without a match. Groups: `h` kept before,
/// `s` masked, `t` kept after.
const REFINERS: &[&str] = &[
    r#"^(?P<h>[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/@?\#"'<>]*:)(?P<s>.+)(?P<t>@)$"#,
    r#"^(?P<h>(?:mysql|mariadb).*[ \t]-p)(?P<s>.+)(?P<t>)$"#,
    r#"^(?P<h>sshpass[ \t]+-p[ \t]*)(?P<s>.+)(?P<t>)$"#,
    r#"^(?P<h>curl.*[ \t](?:-u|--user)[ \t]*["']?[^\s:"']+:)(?P<s>[^\s"']+)(?P<t>)$"#,
    r#"(?s)^(?P<h>[A-Za-z0-9_\-]+["']?[ \t]*[:=][ \t]*(?:(?i:bearer|basic|token)[ \t]+)?)(?:"(?P<dq>.*)"|'(?P<sq>.*)'|(?P<oq>["']?)(?P<s>.*))(?P<t>)$"#,
];

/// The compiled token matcher.
#[derive(Debug, Clone)]
pub(crate) struct TokenPatterns {
    regex: Regex,
    refiners: Vec<Regex>,
}

impl TokenPatterns {
    pub(crate) fn new() -> Self {
        // The pattern is a constant covered by tests; failing to compile it is a programming
        // error caught by the first test run, never by user input.
        #[allow(clippy::expect_used)]
        let regex = Regex::new(TOKEN_PATTERN).expect("the token pattern compiles");
        #[allow(clippy::expect_used)]
        let refiners = REFINERS
            .iter()
            .map(|p| Regex::new(p).expect("the refiner patterns compile"))
            .collect();
        TokenPatterns { regex, refiners }
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
            // Not a credential after all ("basic sk-…"): the word after the scheme is
            // scanned on its own, so a secret in it is not swallowed.
            if !self.push_refined(&mut out, m.as_str())
                && let Some(rest) = push_replacement(&mut out, m.as_str())
            {
                out.push_str(&self.mask(rest));
            }
            copied = m.end();
        }
        out.push_str(&text[copied..]);
        Cow::Owned(out)
    }
}

impl TokenPatterns {
    /// Masks a credential match that keeps its context; `false` if `whole` is another kind.
    fn push_refined(&self, out: &mut String, whole: &str) -> bool {
        let Some(caps) = self.refiners.iter().find_map(|r| r.captures(whole)) else {
            return false;
        };
        let part = |name| caps.name(name).map_or("", |m| m.as_str());
        let (quote, secret) = if let Some(m) = caps.name("dq") {
            ("\"", m.as_str())
        } else if let Some(m) = caps.name("sq") {
            ("'", m.as_str())
        } else {
            ("", part("s"))
        };
        out.push_str(part("h"));
        out.push_str(quote);
        out.push_str(part("oq"));
        if is_placeholder(part("h"), secret) {
            out.push_str(secret);
        } else {
            out.push_str(REDACTED);
        }
        out.push_str(quote);
        out.push_str(part("t"));
        true
    }
}

/// Values after a label (`head`) that are no secret: counters after a `token` label
/// (`max_tokens: 512`; an all-digit password, PIN or URL password is still a secret),
/// `null`, booleans, nothing, or an already masked value.
fn is_placeholder(head: &str, value: &str) -> bool {
    let head = head.to_ascii_lowercase();
    let counter_label = head.contains("token") && !head.contains("://");
    value.is_empty()
        || (counter_label && value.bytes().all(|b| b.is_ascii_digit()))
        || ["null", "none", "true", "false", REDACTED]
            .iter()
            .any(|w| value.eq_ignore_ascii_case(w))
}

/// Length of the AWS secret that ends a labelled match.
const AWS_SECRET_LEN: usize = 40;

/// Appends what replaces the match `whole`; for a `Bearer`/`Basic` match that is no
/// credential, appends the scheme and returns the rest, still to be scanned. Every pattern is
/// ASCII up to where the slices below cut, so the byte offsets fall on character boundaries.
fn push_replacement<'a>(out: &mut String, whole: &'a str) -> Option<&'a str> {
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
        // Sentence punctuation after a credential (`Basic dXNlcjpwYXNz.`) is not part of it.
        let core = cred.trim_end_matches(['.', '-', '_', '~']);
        let confirmed = if len == "basic".len() {
            is_basic_credential(cred) || is_basic_credential(core)
        } else {
            is_bearer_token(cred)
        };
        if confirmed {
            out.push_str(scheme);
            out.push(' ');
            out.push_str(REDACTED);
            if len == "basic".len() && !is_basic_credential(cred) {
                out.push_str(&cred[core.len()..]);
            }
        } else {
            out.push_str(&whole[..whole.len() - cred.len()]);
            return Some(cred);
        }
    } else if starts_with("aws") && whole.len() > AWS_SECRET_LEN {
        out.push_str(&whole[..whole.len() - AWS_SECRET_LEN]);
        out.push_str(REDACTED);
    } else {
        out.push_str(REDACTED);
    }
    None
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
        assert!(matches!(patterns.mask("pwd=abc"), Cow::Borrowed(_)));
    }
}
