//! `url_read`'s body conversion (`toolgate_web::read::convert`: charset sniffing, HTML →
//! Markdown or text, JSON pretty-printing) on arbitrary bytes, then the untrusted-content
//! wrapper the tool puts around the result.
//!
//! Input: one control byte (output format and `Content-Type`), then the body. Properties:
//! no panic, no hang (libFuzzer's `-timeout`), and the wrapped text holds exactly one
//! opening and one closing `untrusted-content` tag whatever the page says, so a page
//! cannot end the block early and speak outside it (nor forge one through the source
//! attribute).

use std::sync::LazyLock;

use toolgate_web::read::convert::convert;
use toolgate_web::read::html::HtmlFormat;
use toolgate_web::wrap_untrusted;
use url::Url;

const CONTENT_TYPES: [Option<&str>; 8] = [
    None,
    Some("text/html"),
    Some("text/html; charset=utf-8"),
    Some("text/html; charset=windows-1252"),
    Some("text/html; charset=shift_jis"),
    Some("application/xhtml+xml"),
    Some("application/json"),
    Some("text/plain; charset=utf-16le"),
];

static URL: LazyLock<Url> = LazyLock::new(|| {
    Url::parse("https://example.com/docs/page.html?q=1").unwrap_or_else(|e| panic!("{e}"))
});

/// One input: see the module doc for the properties checked.
pub fn run(data: &[u8]) {
    let Some((&ctl, body)) = data.split_first() else {
        return;
    };
    let format = if ctl & 1 == 0 {
        HtmlFormat::Markdown
    } else {
        HtmlFormat::Text
    };
    let content_type = CONTENT_TYPES[usize::from(ctl >> 1) % CONTENT_TYPES.len()];
    let Ok(converted) = convert(body, content_type, &URL, format) else {
        return;
    };
    assert_one_block(&wrap_untrusted(URL.as_str(), &converted.text));
    // The source attribute is escaped, whatever text it is given (here: the page's title).
    if let Some(title) = &converted.title {
        assert_one_block(&wrap_untrusted(title, &converted.text));
    }
}

/// Exactly one opening tag, first, and one closing tag, last (ASCII case-insensitive, as a
/// model would read them).
fn assert_one_block(wrapped: &str) {
    let lower = wrapped.to_ascii_lowercase();
    assert_eq!(
        (
            lower.matches("<untrusted-content").count(),
            lower.matches("</untrusted-content").count()
        ),
        (1, 1),
        "a page forged an untrusted-content tag:\n{wrapped}"
    );
    assert!(
        lower.starts_with("<untrusted-content source=\""),
        "{wrapped}"
    );
    assert!(lower.ends_with("\n</untrusted-content>"), "{wrapped}");
}
