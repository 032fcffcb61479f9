//! Checks in code for what a regex alone would over-match: whether a `Bearer`/`Basic` word is
//! followed by a credential, whether a labelled value looks like a token, and which values
//! are placeholders rather than secrets.

/// Values after a label (`head`) that are no secret: counters after a `token` label
/// (`max_tokens: 512`, up to 12 digits; an all-digit password, PIN or URL password, or an
/// 18-digit token, is still a secret), `null` (`~` in YAML), booleans, nothing, or an already
/// masked value.
pub(super) fn is_placeholder(head: &str, value: &str, label: bool) -> bool {
    let counter_label = label && {
        let head = head.to_ascii_lowercase();
        head.contains("token") && !head.contains("://")
    };
    value.is_empty()
        || (counter_label && value.len() <= 12 && value.bytes().all(|b| b.is_ascii_digit()))
        || ["null", "none", "true", "false", "~", super::REDACTED]
            .iter()
            .any(|w| value.eq_ignore_ascii_case(w))
}

pub(super) fn is_bearer_token(cred: &str) -> bool {
    cred.len() >= 8
        && (cred.len() >= 20
            || cred
                .bytes()
                .any(|b| b.is_ascii_digit() || b"-._~+/=".contains(&b)))
}

/// Basic credentials are base64 of `user:password`.
pub(super) fn is_basic_credential(cred: &str) -> bool {
    decode_base64(cred).is_some_and(|bytes| bytes.contains(&b':'))
}

/// A value under a label naming a service: long enough, not a path or URL, with a digit
/// (or mixed case), and not a low-entropy word.
pub(super) fn is_service_token(value: &str) -> bool {
    let v = Shape::of(value);
    value.len() >= 10 && !v.path_like && (v.digit || (v.upper && v.lower)) && entropy(value) >= 2.5
}

/// A value under a generic label (`key`, `auth`): a random-looking string of letters and
/// digits (gitleaks' `generic-api-key` asks for Shannon entropy 3.5), or base64 of
/// `user:password` (docker's `"auth"`).
pub(super) fn is_generic_token(value: &str) -> bool {
    let v = Shape::of(value);
    (value.len() >= 16 && !v.path_like && v.digit && (v.upper || v.lower) && entropy(value) >= 3.5)
        || (value.len() >= 8 && is_basic_credential(value))
}

/// An `Authorization`/`Cookie` value: after a scheme word (`head` ends with it) always;
/// without one, only if it has a digit or a `=`, or 20 characters (`Cookie: a=b`, a raw
/// token; not the prose of `the authorization: required field`).
pub(super) fn is_header_value(head: &str, value: &str) -> bool {
    let after_scheme = head
        .trim_end()
        .ends_with(|c: char| c.is_ascii_alphanumeric());
    after_scheme || value.len() >= 20 || value.bytes().any(|b| b.is_ascii_digit() || b == b'=')
}

/// A URL's user name that is a token (`https://<token>@github.com`), not a login name.
pub(super) fn is_url_user_token(user: &str) -> bool {
    let v = Shape::of(user);
    user.len() >= 16 && v.digit && (v.upper || v.lower) && entropy(user) >= 3.0
}

struct Shape {
    digit: bool,
    upper: bool,
    lower: bool,
    path_like: bool,
}

impl Shape {
    fn of(value: &str) -> Shape {
        let has = |f: fn(&u8) -> bool| value.as_bytes().iter().any(f);
        Shape {
            digit: has(u8::is_ascii_digit),
            upper: has(u8::is_ascii_uppercase),
            lower: has(u8::is_ascii_lowercase),
            path_like: value.contains("://")
                || value.starts_with(['/', '~', '.'])
                || (value.contains('/') && value.contains('.')),
        }
    }
}

/// Shannon entropy of the bytes of `s`, in bits per byte.
fn entropy(s: &str) -> f64 {
    let mut counts = [0u32; 256];
    for b in s.bytes() {
        counts[usize::from(b)] += 1;
    }
    let n = s.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / n;
            -p * p.log2()
        })
        .sum()
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
    fn token_shapes() {
        assert!(is_generic_token("f3a9c1e07b2d4c58a6e1"));
        assert!(is_generic_token("dXNlcjpwYXNzd29yZA=="));
        assert!(!is_generic_token("user_profile_settings"));
        assert!(!is_generic_token("2024-06-01"));
        assert!(!is_generic_token("https://api.example.com/v1"));
        assert!(is_service_token("a1b2c3d4e5f6a7b8c9d0"));
        assert!(!is_service_token("us-east-1"));
        assert!(!is_url_user_token("deploy-bot"));
        assert!(is_url_user_token("0f3a9c1e07b2d4c58a6e1b9d"));
    }

    #[test]
    fn entropy_of_simple_strings() {
        assert_eq!(entropy("aaaa"), 0.0);
        assert!((entropy("abcd") - 2.0).abs() < 1e-9);
    }
}
