//! How deeply a document nests, estimated from its tags before it is parsed. html5ever's
//! tree building slows quadratically with nesting depth (20 000 nested `<div>`s take
//! seconds), and a 2 MiB page can nest hundreds of thousands deep, so a page estimated
//! past [`MAX_PARSE_NESTING`] is not parsed (it is stripped to text instead).
//!
//! The estimate is the highest running balance of start tags over end tags, not counting
//! void elements, self-closing tags, or elements whose end tag is optional (`p`, `li`,
//! `td`, …: the parser closes those itself, so they do not nest). Comments are skipped.

/// Estimated nesting beyond which a page is not parsed as HTML.
pub const MAX_PARSE_NESTING: usize = 2048;

const NOT_NESTING: &[&str] = &[
    // void
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
    "wbr", "param", "keygen", "!doctype", // end tag optional
    "p", "li", "dt", "dd", "td", "th", "tr", "thead", "tbody", "tfoot", "option", "optgroup",
    "colgroup", "caption", "rt", "rp", "html", "head", "body",
];

/// The estimated deepest nesting of elements in `html`.
pub fn nesting_estimate(html: &str) -> usize {
    let bytes = html.as_bytes();
    let (mut depth, mut deepest, mut at) = (0usize, 0usize, 0usize);
    while let Some(open) = bytes[at..].iter().position(|&b| b == b'<').map(|i| at + i) {
        if bytes[open..].starts_with(b"<!--") {
            at = html[open..]
                .find("-->")
                .map_or(bytes.len(), |i| open + i + 3);
            continue;
        }
        let Some(close) = bytes[open..]
            .iter()
            .position(|&b| b == b'>')
            .map(|i| open + i)
        else {
            break;
        };
        let tag = &html[open + 1..close];
        at = close + 1;
        let (closing, tag) = match tag.strip_prefix('/') {
            Some(rest) => (true, rest),
            None => (false, tag),
        };
        let name: String = tag
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '!')
            .collect::<String>()
            .to_ascii_lowercase();
        if name.is_empty() || NOT_NESTING.contains(&name.as_str()) {
            continue;
        }
        if closing {
            depth = depth.saturating_sub(1);
        } else if !tag.ends_with('/') {
            depth += 1;
            deepest = deepest.max(depth);
        }
    }
    deepest
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_counts_only_elements_that_nest() {
        let deep = format!("{}x{}", "<div>".repeat(5000), "</div>".repeat(5000));
        assert_eq!(
            [
                nesting_estimate("<!doctype html><html><body><div><p>a<p>b<br><img src=x></div>"),
                nesting_estimate("<ul><li>a<li>b</ul><table><tr><td>1<td>2</table>"),
                nesting_estimate("<div><span>a</span><span>b</span></div><svg><path/></svg>"),
                nesting_estimate("<!-- <div><div><div> -->text"),
                nesting_estimate(&deep),
                nesting_estimate(&"<font>".repeat(3000)),
            ],
            [1, 1, 2, 0, 5000, 3000]
        );
    }
}
