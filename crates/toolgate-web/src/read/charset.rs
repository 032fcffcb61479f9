//! Bytes → text. The encoding is chosen in the order browsers use: a byte-order mark, then
//! the `charset` of `Content-Type`, then (HTML only) a `<meta>` declaration in the first
//! 1024 bytes, then UTF-8 when the bytes are valid UTF-8, else windows-1252 (the web's
//! legacy default). Labels are WHATWG Encoding Standard labels (`latin1`, `sjis`, `gbk`…).

use encoding_rs::{Encoding, UTF_8, WINDOWS_1252};

/// How far into an HTML document a `<meta charset>` is looked for (the HTML prescan limit).
const PRESCAN_LEN: usize = 1024;

/// Decoded text and the encoding it was decoded from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    pub text: String,
    /// The encoding's canonical name (`UTF-8`, `windows-1252`, `Shift_JIS`, `GBK`, …).
    pub charset: &'static str,
    /// Some bytes were not valid in that encoding and became U+FFFD.
    pub lossy: bool,
}

/// The encoding named by a `Content-Type` value's `charset` parameter, if it is a known label.
pub fn content_type_charset(content_type: &str) -> Option<&'static Encoding> {
    content_type.split(';').skip(1).find_map(|param| {
        let (name, value) = param.split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| label(value.trim().trim_matches(['"', '\''])))
            .flatten()
    })
}

/// The encoding an HTML document declares in a `<meta charset=…>` or
/// `<meta http-equiv="Content-Type" content="…; charset=…">` near its start.
pub fn meta_charset(html: &[u8]) -> Option<&'static Encoding> {
    let head = &html[..html.len().min(PRESCAN_LEN)];
    let lower: Vec<u8> = head.to_ascii_lowercase();
    let mut rest = lower.as_slice();
    while let Some(start) = find(rest, b"<meta") {
        let after = &rest[start + 5..];
        let end = after.iter().position(|&b| b == b'>').unwrap_or(after.len());
        let tag = &after[..end];
        if let Some(at) = find(tag, b"charset") {
            let value = tag[at + 7..]
                .trim_ascii_start()
                .strip_prefix(b"=")
                .map(<[u8]>::trim_ascii_start);
            if let Some(value) = value {
                let value = value
                    .strip_prefix(b"\"")
                    .or(value.strip_prefix(b"'"))
                    .unwrap_or(value);
                let len = value
                    .iter()
                    .position(|&b| {
                        matches!(b, b'"' | b'\'' | b';' | b'/') || b.is_ascii_whitespace()
                    })
                    .unwrap_or(value.len());
                if let Some(enc) = std::str::from_utf8(&value[..len]).ok().and_then(label) {
                    // A meta tag cannot truthfully declare UTF-16 (it would not be readable
                    // as ASCII); browsers take UTF-8 instead.
                    return Some(
                        if enc == encoding_rs::UTF_16LE || enc == encoding_rs::UTF_16BE {
                            UTF_8
                        } else {
                            enc
                        },
                    );
                }
            }
        }
        rest = &after[end..];
    }
    None
}

/// Decodes `bytes`: a byte-order mark wins, then `declared`, then UTF-8 if valid, else
/// windows-1252.
pub fn decode(bytes: &[u8], declared: Option<&'static Encoding>) -> Decoded {
    let encoding = match Encoding::for_bom(bytes) {
        Some((bom, _)) => bom,
        None => declared.unwrap_or_else(|| {
            if std::str::from_utf8(bytes).is_ok() {
                UTF_8
            } else {
                WINDOWS_1252
            }
        }),
    };
    let (text, used, lossy) = encoding.decode(bytes);
    Decoded {
        text: text.into_owned(),
        charset: used.name(),
        lossy,
    }
}

fn label(name: &str) -> Option<&'static Encoding> {
    Encoding::for_label(name.as_bytes())
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_type_parameters_name_the_charset() {
        let name = |ct: &str| content_type_charset(ct).map(Encoding::name);
        assert_eq!(
            [
                name("text/html; charset=ISO-8859-1"),
                name("text/plain;charset=\"shift_jis\""),
                name("text/html; boundary=x; Charset=gbk"),
                name("text/html"),
                name("text/html; charset=klingon"),
            ],
            [
                Some("windows-1252"),
                Some("Shift_JIS"),
                Some("GBK"),
                None,
                None
            ]
        );
    }

    #[test]
    fn meta_declarations_are_found_in_both_forms() {
        let name = |html: &str| meta_charset(html.as_bytes()).map(Encoding::name);
        let late = format!("{}<meta charset=gbk>", " ".repeat(PRESCAN_LEN));
        assert_eq!(
            [
                name("<html><head><META CHARSET='Shift_JIS'><title>x</title>"),
                name(
                    "<meta http-equiv=\"Content-Type\" content=\"text/html; charset=windows-1252\">"
                ),
                name(
                    "<meta name=\"viewport\" content=\"width=device-width\"><meta charset=\"gb2312\">"
                ),
                name("<meta charset=\"utf-16\">"),
                name("<p>charset=gbk</p>"),
                name(&late),
            ],
            [
                Some("Shift_JIS"),
                Some("windows-1252"),
                Some("GBK"),
                Some("UTF-8"),
                None,
                None
            ]
        );
    }

    #[test]
    fn a_bom_wins_then_the_declaration_then_utf8_then_windows_1252() {
        let bom = decode(b"\xEF\xBB\xBFcaf\xC3\xA9", Some(WINDOWS_1252));
        let declared = decode(b"caf\xE9", Some(WINDOWS_1252));
        let utf8 = decode("café".as_bytes(), None);
        let legacy = decode(b"caf\xE9", None);
        let bad = decode(b"caf\xE9", Some(UTF_8));
        let d = |text: &str, charset, lossy| Decoded {
            text: text.into(),
            charset,
            lossy,
        };
        assert_eq!(
            [bom, declared, utf8, legacy, bad],
            [
                d("café", "UTF-8", false),
                d("café", "windows-1252", false),
                d("café", "UTF-8", false),
                d("café", "windows-1252", false),
                d("caf\u{FFFD}", "UTF-8", true),
            ]
        );
    }
}
