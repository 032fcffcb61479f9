//! The stand-in for a value too long to keep in the audit: `{"length", "sha256"}` of the value's
//! JSON text (as `serde_json` writes it), so a holder of the original can prove it matches
//! without the audit storing it.

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
