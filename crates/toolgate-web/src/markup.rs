//! Markup removed without parsing: for search snippets (`<strong>` highlights) and for HTML
//! too deeply nested to parse safely. Tags go, the contents of `script`, `style`,
//! `noscript` and `template` go with them, common entities are decoded, whitespace is
//! collapsed. Linear in the input.

const RAW_TEXT: &[&str] = &["script", "style", "noscript", "template"];

const ENTITIES: &[(&str, &str)] = &[
    ("&quot;", "\""),
    ("&#x27;", "'"),
    ("&#39;", "'"),
    ("&apos;", "'"),
    ("&lt;", "<"),
    ("&gt;", ">"),
    ("&nbsp;", " "),
    ("&amp;", "&"),
];

/// The text of `html` with every tag removed.
pub(crate) fn strip_tags(html: &str) -> String {
    let lower = html.to_ascii_lowercase();
    let mut text = String::with_capacity(html.len());
    let mut at = 0;
    while let Some(open) = html[at..].find('<').map(|i| at + i) {
        text.push_str(&html[at..open]);
        let Some(close) = html[open..].find('>').map(|i| open + i) else {
            at = html.len();
            break;
        };
        text.push(' ');
        at = close + 1;
        let name: String = lower[open + 1..close]
            .chars()
            .take_while(char::is_ascii_alphanumeric)
            .collect();
        if RAW_TEXT.contains(&name.as_str()) {
            let end_tag = format!("</{name}");
            at = lower[at..]
                .find(&end_tag)
                .and_then(|i| lower[at + i..].find('>').map(|j| at + i + j + 1))
                .unwrap_or(html.len());
        }
    }
    text.push_str(&html[at..]);
    let decoded = ENTITIES
        .iter()
        .fold(text, |t, (entity, c)| t.replace(entity, c));
    decoded.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_and_raw_text_go_entities_are_decoded() {
        assert_eq!(
            [
                strip_tags("The <strong>Rust</strong>\n book &amp; more &#x27;x&#x27; &lt;T&gt;"),
                strip_tags("a<SCRIPT type=x>if (a<b) {}</script >b<style>p{}</style>c"),
                strip_tags("<div>x<div>y</div></div><unclosed"),
            ],
            ["The Rust book & more 'x' <T>", "a b c", "x y"]
        );
    }
}
