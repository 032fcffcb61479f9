//! Percent-decoding for a second look: a credential spelled `https%3A%2F%2Fadmin%3Apw%40db`
//! (a URL inside a query parameter) or `password%3Dpw` is found in the decoded text, and its
//! place mapped back to the text as written.
//!
//! Only escapes of printable ASCII are decoded, so the decoded text is valid UTF-8 whatever
//! the input and every decoded byte maps to a whole character of the original.

/// Text with its printable-ASCII escapes decoded, and where each of its bytes came from.
pub(super) struct Decoded {
    pub(super) text: String,
    /// `origin[i]` is the offset in the original of decoded byte `i`; one more entry holds
    /// the original's length.
    origin: Vec<usize>,
}

impl Decoded {
    /// `None` if `text` holds no escape to decode.
    pub(super) fn of(text: &str) -> Option<Decoded> {
        let bytes = text.as_bytes();
        let escape_at = |i: usize| -> Option<u8> {
            let hex = bytes.get(i + 1..i + 3)?;
            let value = u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?;
            (0x20..0x7f).contains(&value).then_some(value)
        };
        let first = (0..bytes.len()).find(|&i| bytes[i] == b'%' && escape_at(i).is_some())?;
        let mut out = Vec::with_capacity(text.len());
        let mut origin = Vec::with_capacity(text.len() + 1);
        out.extend_from_slice(&bytes[..first]);
        origin.extend(0..first);
        let mut i = first;
        while i < bytes.len() {
            if bytes[i] == b'%'
                && let Some(value) = escape_at(i)
            {
                out.push(value);
                origin.push(i);
                i += 3;
            } else {
                out.push(bytes[i]);
                origin.push(i);
                i += 1;
            }
        }
        origin.push(bytes.len());
        // Only ASCII bytes replaced ASCII escapes; every other byte was copied as it was.
        let text = String::from_utf8(out).ok()?;
        Some(Decoded { text, origin })
    }

    /// The range of the original that decoded `start..end` came from.
    pub(super) fn original(&self, start: usize, end: usize) -> (usize, usize) {
        (self.origin[start], self.origin[end])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_printable_escapes_and_maps_back() {
        let d = Decoded::of("a%3Ab%40c%FF%zz").unwrap();
        assert_eq!(d.text, "a:b@c%FF%zz");
        assert_eq!(d.original(1, 4), (1, 8));
        assert!(Decoded::of("100% sure").is_none());
        assert_eq!(Decoded::of("100% sure: %3D").unwrap().text, "100% sure: =");
    }
}
