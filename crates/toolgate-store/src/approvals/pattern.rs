//! The identity of a call's arguments ([`canonical_hash`]) and the argument patterns of
//! `always` grants ([`pattern_matches`]).
//!
//! The canonical text sorts object keys itself rather than relying on serde_json's map
//! ordering, so the hash does not change if some crate in the build turns on serde_json's
//! `preserve_order` feature.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// SHA-256 (lowercase hex) of the canonical JSON text of `v`: no whitespace, object keys
/// sorted by their UTF-8 bytes at every depth. Equal values give equal hashes whatever order
/// their keys were written in.
pub fn canonical_hash(v: &Value) -> String {
    let mut text = String::new();
    text.push_str(&toolgate_protocol::canonical_json(v));
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// Whether `args` match the argument `pattern` of an `always` grant.
///
/// The pattern is a JSON object. Every key it names must be present in `args`; a string
/// value is a glob matched against the whole string argument (`*` any run of characters,
/// `/` included; `?` exactly one character; no escapes), any other value must equal the
/// argument. Keys of `args` the pattern does not name are free. A pattern or `args` that is
/// not an object never matches.
pub fn pattern_matches(pattern: &Value, args: &Value) -> bool {
    let (Value::Object(pattern), Value::Object(args)) = (pattern, args) else {
        return false;
    };
    pattern
        .iter()
        .all(|(key, expected)| match (expected, args.get(key)) {
            (_, None) => false,
            (Value::String(glob), Some(Value::String(actual))) => glob_matches(glob, actual),
            (Value::String(_), Some(_)) => false,
            (expected, Some(actual)) => expected == actual,
        })
}

/// Whole-string glob match with `*` and `?`, linear backtracking over characters.
fn glob_matches(glob: &str, text: &str) -> bool {
    let glob: Vec<char> = glob.chars().collect();
    let text: Vec<char> = text.chars().collect();
    let (mut g, mut t) = (0, 0);
    // Position after the last `*` seen, and the text position it is currently matched up to.
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match glob.get(g) {
            Some('*') => {
                star = Some((g + 1, t));
                g += 1;
            }
            Some('?') => {
                g += 1;
                t += 1;
            }
            Some(&c) if c == text[t] => {
                g += 1;
                t += 1;
            }
            _ => match star {
                Some((after_star, matched_to)) => {
                    g = after_star;
                    t = matched_to + 1;
                    star = Some((after_star, matched_to + 1));
                }
                None => return false,
            },
        }
    }
    glob[g..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_cases() {
        let cases = [
            ("src/*", "src/a.rs", true),
            ("src/*", "src/", true),
            ("src/*", "src/deep/b.rs", true),
            ("src/*", "etc/x", false),
            ("src/*", "src", false),
            ("*.rs", "a.rs", true),
            ("*.rs", "a.rsx", false),
            ("a?c", "abc", true),
            ("a?c", "ac", false),
            ("a?c", "a漢c", true),
            ("*a*b*", "xxaxxbxx", true),
            ("*a*b", "xxaxxbxxc", false),
            ("", "", true),
            ("", "x", false),
            ("*", "", true),
            ("**", "anything", true),
            ("exact", "exact", true),
            ("exact", "exactly", false),
        ];
        let results: Vec<_> = cases
            .iter()
            .map(|(g, t, _)| (*g, *t, glob_matches(g, t)))
            .collect();
        assert_eq!(results, cases.to_vec());
    }
}
