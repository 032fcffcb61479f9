//! Where the value is inside a label or header match, found by hand: these matches are the
//! common ones (`"api_key": "…"`, `Authorization: Bearer …`), and a capture-group regex
//! costs about a microsecond a match where this costs tens of nanoseconds.
//!
//! Each match was produced by its rule's pattern (`rules`), so its shape is known: a label or
//! header name, an operator, optional whitespace and scheme word, then the value, quoted or
//! bare.

use std::ops::Range;

/// A value found in a match.
pub(super) struct Value {
    /// The value, inside its quotes if quoted.
    pub(super) range: Range<usize>,
    /// Quoted with backticks (`` `cat /run/pw` `` may be a command, not a secret).
    pub(super) backticks: bool,
}

/// Scheme words after a label's operator that are not part of its value.
const LABEL_SCHEMES: &[&str] = &["bearer", "basic", "token"];

/// Scheme words of an `Authorization` header.
const HEADER_SCHEMES: &[&str] = &[
    "bearer",
    "basic",
    "token",
    "digest",
    "apikey",
    "api-key",
    "key",
    "bot",
    "sso-key",
    "aws4-hmac-sha256",
    "negotiate",
    "ntlm",
];

/// The value of a labelled match (`label op value`): after the first operator (`=`, `:`,
/// `:=`, `::=`, `?=`, `.=`, `=>`, or `,` after a quoted label), spaces and a scheme word.
pub(super) fn label_value(whole: &str) -> Option<Value> {
    let op = whole.find([':', '=', ','])?;
    let after_op = op
        + whole[op..]
            .bytes()
            .take_while(|b| b"=:>,".contains(b))
            .count();
    let start = skip_scheme(whole, skip_blanks(whole, after_op), LABEL_SCHEMES, false);
    Some(quoted_or_bare(whole, start))
}

/// The value of an `Authorization`/`Cookie` header match: after `:`/`=`, spaces, an opening
/// quote and a scheme word.
pub(super) fn header_value(whole: &str) -> Option<Value> {
    let op = whole.find([':', '='])?;
    let start = skip_blanks(whole, op + 1);
    let after_scheme = skip_scheme(whole, start, HEADER_SCHEMES, true);
    if after_scheme != start {
        return Some(Value {
            range: after_scheme..whole.len(),
            backticks: false,
        });
    }
    Some(quoted_or_bare(whole, start))
}

fn skip_blanks(s: &str, from: usize) -> usize {
    from + s[from..]
        .bytes()
        .take_while(|b| *b == b' ' || *b == b'\t')
        .count()
}

/// `from` past one of `schemes` (case-insensitive, after an optional quote if `quote`) and
/// the blanks after it; `from` itself if none is there.
fn skip_scheme(s: &str, from: usize, schemes: &[&str], quote: bool) -> usize {
    let bytes = s.as_bytes();
    let word_at = if quote && matches!(bytes.get(from), Some(b'"' | b'\'')) {
        from + 1
    } else {
        from
    };
    for scheme in schemes {
        let end = word_at + scheme.len();
        let followed_by_blank = matches!(bytes.get(end), Some(b' ' | b'\t'));
        if followed_by_blank
            && s.get(word_at..end)
                .is_some_and(|w| w.eq_ignore_ascii_case(scheme))
        {
            return skip_blanks(s, end);
        }
    }
    from
}

/// The value starting at `start`: inside its quotes (closed or not), or the rest.
fn quoted_or_bare(s: &str, start: usize) -> Value {
    match s.as_bytes().get(start) {
        Some(&q @ (b'"' | b'\'' | b'`')) => {
            let inner = start + 1;
            let end = s[inner..]
                .find(char::from(q))
                .map_or(s.len(), |i| inner + i);
            Value {
                range: inner..end,
                backticks: q == b'`',
            }
        }
        _ => Value {
            range: start..s.len(),
            backticks: false,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn label(s: &str) -> &str {
        let v = label_value(s).unwrap_or(Value {
            range: 0..0,
            backticks: false,
        });
        &s[v.range]
    }

    fn header(s: &str) -> &str {
        let v = header_value(s).unwrap_or(Value {
            range: 0..0,
            backticks: false,
        });
        &s[v.range]
    }

    #[test]
    fn label_values() {
        assert_eq!(label("password=hunter2"), "hunter2");
        assert_eq!(label("\"token\": \"abc def\""), "abc def");
        assert_eq!(label("x_TOKEN :::= \"v\""), "v");
        assert_eq!(label("\"xToken\" => \"v\""), "v");
        assert_eq!(label("$xToken .= \"v\""), "v");
        assert_eq!(label("X_TOKEN\", \"v\""), "v");
        assert_eq!(label("token: Bearer abc"), "abc");
        assert_eq!(label("password = 'unclosed"), "unclosed");
        assert_eq!(label("var xToken string = `v`"), "v");
    }

    #[test]
    fn header_values() {
        assert_eq!(header("Authorization: Bearer abc"), "abc");
        assert_eq!(header("authorization:\"token abc"), "abc");
        assert_eq!(header("Cookie: \"a=1; b=2\""), "a=1; b=2");
        assert_eq!(header("Cookie: a=1; b=2"), "a=1; b=2");
        assert_eq!(
            header("Authorization: Digest username=\"x\""),
            "username=\"x\""
        );
    }
}
