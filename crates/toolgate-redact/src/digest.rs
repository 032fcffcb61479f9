//! The stand-in for a value too long to keep in the audit: `{"length", "sha256"}` of the value's
//! JSON text (as `serde_json` writes it), so a holder of the original can prove it matches
//! without the audit storing it.

use std::borrow::Cow;
use std::io;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// `{"length": <chars of the JSON text>, "sha256": "<hex of the JSON text>"}`.
pub(crate) fn digest_of(value: &Value) -> Value {
    let text = value.to_string();
    let sha = hex::encode(Sha256::digest(text.as_bytes()));
    json!({"length": text.chars().count(), "sha256": sha})
}

/// Whether the JSON text of `value` is longer than `limit` characters. Stops serialising as
/// soon as the answer is known, so small values cost little and huge ones are never copied.
pub(crate) fn json_text_exceeds(value: &Value, limit: usize) -> bool {
    match value {
        Value::Null | Value::Bool(_) | Value::Number(_) => false,
        Value::String(s) if s.len() + 2 <= limit => false,
        _ => {
            let mut counter = CharCounter { chars: 0, limit };
            serde_json::to_writer(&mut counter, value).is_err()
        }
    }
}

/// Counts UTF-8 characters written (bytes that do not continue a character) and fails once
/// the count passes `limit`.
struct CharCounter {
    chars: usize,
    limit: usize,
}

impl io::Write for CharCounter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.chars += buf.iter().filter(|&&b| b & 0xC0 != 0x80).count();
        if self.chars > self.limit {
            return Err(io::Error::other("over the limit"));
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Longest run of word characters an audited text keeps; longer runs (a path, a blob echoed
/// by an error message) become their [`text_digest`].
pub(crate) const MAX_TEXT_WORD_CHARS: usize = 200;

/// `[<chars> chars sha256:<hex>]` of `text`: the stand-in for a long value inside free text.
pub(crate) fn text_digest(text: &str) -> String {
    let sha = hex::encode(Sha256::digest(text.as_bytes()));
    format!("[{} chars sha256:{sha}]", text.chars().count())
}

/// Characters that end a word: whitespace and the quotes and brackets messages put around
/// values, so `cannot open \`<path>\`` keeps its quotes and only the path goes.
fn ends_word(c: char) -> bool {
    c.is_whitespace() || "`'\"()[]{}<>,;".contains(c)
}

/// `text` with every word longer than `limit` characters replaced by its [`text_digest`].
pub(crate) fn digest_long_words(text: &str, limit: usize) -> Cow<'_, str> {
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut word_start = 0;
    let mut word_chars = 0usize;
    let mut flush = |out: &mut Option<String>, start: usize, end: usize, chars: usize| {
        if chars > limit {
            let buf = out.get_or_insert_with(|| String::with_capacity(text.len()));
            buf.push_str(&text[copied..start]);
            buf.push_str(&text_digest(&text[start..end]));
            copied = end;
        }
    };
    for (i, c) in text.char_indices() {
        if ends_word(c) {
            flush(&mut out, word_start, i, word_chars);
            word_start = i + c.len_utf8();
            word_chars = 0;
        } else {
            word_chars += 1;
        }
    }
    flush(&mut out, word_start, text.len(), word_chars);
    match out {
        Some(mut buf) => {
            buf.push_str(&text[copied..]);
            Cow::Owned(buf)
        }
        None => Cow::Borrowed(text),
    }
}

/// `text` cut to at most `limit` characters: its head, `…` and the [`text_digest`] of the
/// whole.
pub(crate) fn cap_text(text: &str, limit: usize) -> Cow<'_, str> {
    if text.chars().count() <= limit {
        return Cow::Borrowed(text);
    }
    let tail = format!("… {}", text_digest(text));
    let head: String = text
        .chars()
        .take(limit.saturating_sub(tail.chars().count()))
        .collect();
    Cow::Owned(head + &tail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_characters_not_bytes() {
        // 1,998 two-byte characters plus two quotes: 2,000 characters, 3,998 bytes.
        let s = Value::String("é".repeat(1998));
        assert!(!json_text_exceeds(&s, 2000));
        let s = Value::String("é".repeat(1999));
        assert!(json_text_exceeds(&s, 2000));
    }

    #[test]
    fn digest_of_a_small_value() {
        assert_eq!(
            digest_of(&json!("abc")),
            // sha256 of the five bytes `"abc"`.
            json!({"length": 5, "sha256": "6cc43f858fbb763301637b5af970e2a46b46f461f27e5a0f41e009c59b827b25"})
        );
    }
}
