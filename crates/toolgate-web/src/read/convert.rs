//! A fetched body → text, by content type: HTML to Markdown or plain text, JSON
//! pretty-printed, other text as it is, binary refused.
//!
//! The media type comes from `Content-Type`; without one, the bytes are sniffed (a NUL byte
//! or a known binary signature means binary; `<!doctype html`/`<html` means HTML). Types
//! that are text in all but name (`application/xml`, `application/javascript`, `+json`,
//! `+xml`, YAML, TOML, CSV…) are read as text.

use serde_json::Value;
use url::Url;

use super::charset::{content_type_charset, decode, meta_charset};
use super::html::{HtmlFormat, MAX_DEPTH, convert_html};

/// What kind of document a body is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Html,
    Json,
    Text,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Html => "html",
            Kind::Json => "json",
            Kind::Text => "text",
        }
    }
}

/// A body this tool does not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "url_read reads web pages, JSON and text; {url} is `{media_type}`{why}, a binary type it \
     does not read"
)]
pub struct BinaryContent {
    pub url: String,
    pub media_type: String,
    /// How the type was learnt, when not from `Content-Type`.
    pub why: String,
}

/// A converted document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Converted {
    pub kind: Kind,
    pub title: Option<String>,
    pub text: String,
    pub charset: &'static str,
    /// Facts the reader should know (undecodable bytes, JSON that did not parse).
    pub notes: Vec<String>,
}

/// Converts `body` fetched from `url` with the given `Content-Type`.
pub fn convert(
    body: &[u8],
    content_type: Option<&str>,
    url: &Url,
    format: HtmlFormat,
) -> Result<Converted, BinaryContent> {
    let kind = kind_of(content_type, body).map_err(|(media_type, why)| BinaryContent {
        url: url.to_string(),
        media_type,
        why,
    })?;
    let declared = content_type.and_then(content_type_charset);
    let declared = match kind {
        Kind::Html => declared.or_else(|| meta_charset(body)),
        Kind::Json | Kind::Text => declared,
    };
    let decoded = decode(body, declared);
    let mut notes = Vec::new();
    if decoded.lossy {
        notes.push(format!(
            "some bytes are not valid {} and were replaced by U+FFFD",
            decoded.charset
        ));
    }
    let (title, text) = match kind {
        Kind::Html => {
            // The HTML parser (html5ever) can panic on hostile markup (a `<meta
            // http-equiv>` whose content ends in `charset`, found by the fuzz smoke): the
            // page is then shown as its source, never a failed call.
            let parsed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                convert_html(&decoded.text, url, format)
            }));
            let Ok(page) = parsed else {
                notes.push("the page's HTML could not be parsed; shown as its source".to_owned());
                return Ok(Converted {
                    kind,
                    title: None,
                    text: decoded.text,
                    charset: decoded.charset,
                    notes,
                });
            };
            if page.too_deep {
                notes.push(format!(
                    "the page nests elements too deeply to convert whole (more than {MAX_DEPTH} \
                     levels); deep parts may be missing, or only its text is shown"
                ));
            }
            (page.title, page.text)
        }
        Kind::Json => match serde_json::from_str::<Value>(&decoded.text) {
            Ok(value) => (None, pretty(&value).unwrap_or(decoded.text)),
            Err(e) => {
                notes.push(format!("the body is not valid JSON ({e}); shown as it is"));
                (None, decoded.text)
            }
        },
        Kind::Text => (None, decoded.text),
    };
    Ok(Converted {
        kind,
        title,
        text,
        charset: decoded.charset,
        notes,
    })
}

fn pretty(value: &Value) -> Option<String> {
    serde_json::to_string_pretty(value).ok()
}

/// The body's kind, or the binary media type (and how it was learnt) that is refused.
fn kind_of(content_type: Option<&str>, body: &[u8]) -> Result<Kind, (String, String)> {
    let essence = content_type
        .and_then(|ct| ct.split(';').next())
        .map(|e| e.trim().to_ascii_lowercase())
        .filter(|e| !e.is_empty());
    let Some(media) = essence else {
        return sniff(body);
    };
    let (top, sub) = media.split_once('/').unwrap_or((media.as_str(), ""));
    let kind = match (top, sub) {
        ("text", "html") | ("application", "xhtml+xml") => Some(Kind::Html),
        ("application" | "text", "json") => Some(Kind::Json),
        (_, s) if s.ends_with("+json") => Some(Kind::Json),
        ("text", _) => Some(Kind::Text),
        (_, s) if s.ends_with("+xml") => Some(Kind::Text),
        (
            "application",
            "xml"
            | "javascript"
            | "ecmascript"
            | "x-javascript"
            | "yaml"
            | "x-yaml"
            | "toml"
            | "x-sh"
            | "csv"
            | "sql"
            | "graphql"
            | "x-ndjson"
            | "jsonl"
            | "x-www-form-urlencoded",
        ) => Some(Kind::Text),
        _ => None,
    };
    kind.ok_or((media, String::new()))
}

const SIGNATURES: &[(&[u8], &str)] = &[
    (b"%PDF-", "application/pdf"),
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"GIF8", "image/gif"),
    (b"\xFF\xD8\xFF", "image/jpeg"),
    (b"PK\x03\x04", "application/zip"),
    (b"\x1F\x8B", "application/gzip"),
    (b"RIFF", "application/octet-stream"),
    (b"\x7FELF", "application/octet-stream"),
];

fn sniff(body: &[u8]) -> Result<Kind, (String, String)> {
    let why = " (no Content-Type; the bytes look binary)".to_owned();
    if let Some((_, media)) = SIGNATURES.iter().find(|(sig, _)| body.starts_with(sig)) {
        return Err(((*media).to_owned(), why));
    }
    let head = &body[..body.len().min(1024)];
    if head.contains(&0) && encoding_rs::Encoding::for_bom(body).is_none() {
        return Err(("application/octet-stream".to_owned(), why));
    }
    let start = String::from_utf8_lossy(head);
    let start = start
        .trim_start_matches('\u{FEFF}')
        .trim_start()
        .to_ascii_lowercase();
    if start.starts_with("<!doctype html") || start.starts_with("<html") {
        Ok(Kind::Html)
    } else if (start.starts_with('{') || start.starts_with('['))
        && serde_json::from_slice::<Value>(body).is_ok()
    {
        Ok(Kind::Json)
    } else {
        Ok(Kind::Text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by the fuzz smoke (seed 8919): html5ever indexes past the end of a `<meta
    /// http-equiv>` content ending in `charset`; the page is shown as its source instead.
    #[test]
    fn markup_that_panics_the_html_parser_is_shown_as_source() {
        let url = Url::parse("https://example.com/").unwrap();
        let page = b"<html><meta http-equiv=\"content-type\" content=\"text/html; charset\"><p>hi";
        let out = convert(page, Some("text/html"), &url, HtmlFormat::Markdown).unwrap();
        assert!(out.text.contains("<p>hi"), "{}", out.text);
        assert_eq!(
            out.notes,
            ["the page's HTML could not be parsed; shown as its source"]
        );
    }

    #[test]
    fn kinds_follow_the_media_type_or_the_bytes() {
        let k = |ct: Option<&str>, body: &[u8]| kind_of(ct, body);
        let binary = |m: &str, why: &str| Err((m.to_owned(), why.to_owned()));
        let sniffed = " (no Content-Type; the bytes look binary)";
        assert_eq!(
            [
                k(Some("text/html; charset=utf-8"), b""),
                k(Some("application/xhtml+xml"), b""),
                k(Some("Application/JSON"), b""),
                k(Some("application/problem+json"), b""),
                k(Some("text/csv"), b""),
                k(Some("application/rss+xml"), b""),
                k(Some("application/javascript"), b""),
                k(Some("image/png"), b""),
                k(Some("application/octet-stream"), b"plain"),
                k(Some("application/pdf"), b""),
                k(None, b"%PDF-1.7"),
                k(None, b"ab\0cd"),
                k(None, b"  <!DOCTYPE html><p>x"),
                k(None, b"{\"a\": 1}"),
                k(None, b"{not json"),
                k(None, b"hello"),
            ],
            [
                Ok(Kind::Html),
                Ok(Kind::Html),
                Ok(Kind::Json),
                Ok(Kind::Json),
                Ok(Kind::Text),
                Ok(Kind::Text),
                Ok(Kind::Text),
                binary("image/png", ""),
                binary("application/octet-stream", ""),
                binary("application/pdf", ""),
                binary("application/pdf", sniffed),
                binary("application/octet-stream", sniffed),
                Ok(Kind::Html),
                Ok(Kind::Json),
                Ok(Kind::Text),
                Ok(Kind::Text),
            ]
        );
    }

    #[test]
    fn json_is_pretty_printed_and_bad_json_kept_with_a_note() {
        let url = Url::parse("https://api.test/v1").unwrap();
        let good = convert(
            b"{\"a\":[1,2]}",
            Some("application/json"),
            &url,
            HtmlFormat::Markdown,
        );
        let bad = convert(
            b"{\"a\":[1,",
            Some("application/json"),
            &url,
            HtmlFormat::Markdown,
        );
        assert_eq!(
            [good, bad],
            [
                Ok(Converted {
                    kind: Kind::Json,
                    title: None,
                    text: "{\n  \"a\": [\n    1,\n    2\n  ]\n}".into(),
                    charset: "UTF-8",
                    notes: vec![],
                }),
                Ok(Converted {
                    kind: Kind::Json,
                    title: None,
                    text: "{\"a\":[1,".into(),
                    charset: "UTF-8",
                    notes: vec![
                        "the body is not valid JSON (EOF while parsing a value at line 1 column 8); \
                         shown as it is"
                            .into()
                    ],
                }),
            ]
        );
    }

    #[test]
    fn binary_types_are_refused_by_name() {
        let url = Url::parse("https://img.test/a.png").unwrap();
        let err = convert(b"\x89PNG", Some("image/png"), &url, HtmlFormat::Text).unwrap_err();
        assert_eq!(
            err.to_string(),
            "url_read reads web pages, JSON and text; https://img.test/a.png is `image/png`, \
             a binary type it does not read"
        );
    }
}
