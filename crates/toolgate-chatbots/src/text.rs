//! Long text split for a service's message limit: at a line break when one is near the
//! limit, else at a space, else between characters — never inside one.

/// Telegram's limit on a message's text, in UTF-16 code units.
pub const TELEGRAM_UNITS: usize = 4_096;

/// `text` in pieces of at most `max` UTF-16 code units each (Telegram's measure), in order;
/// nothing is lost but the line break or space a piece was split at.
pub fn split(text: &str, max: usize) -> Vec<String> {
    split_by(text, max, char::len_utf16)
}

/// `text` in pieces of at most `max` UTF-8 bytes each (WeCom's measure), split as [`split`]
/// does.
pub fn split_bytes(text: &str, max: usize) -> Vec<String> {
    split_by(text, max, char::len_utf8)
}

/// Splits at a line break in the last quarter of the longest prefix within `max` (as
/// `measure` counts a character), else at a space there, else between characters.
fn split_by(text: &str, max: usize, measure: fn(char) -> usize) -> Vec<String> {
    let max = max.max(4);
    let mut pieces = Vec::new();
    let mut rest = text;
    while rest.chars().map(measure).sum::<usize>() > max {
        let mut end = 0;
        let mut used = 0;
        for (i, c) in rest.char_indices() {
            if used + measure(c) > max {
                break;
            }
            used += measure(c);
            end = i + c.len_utf8();
        }
        let window = &rest[..end];
        let floor = window.len() * 3 / 4;
        let cut = window
            .rfind('\n')
            .filter(|&i| i >= floor)
            .or_else(|| window.rfind(' ').filter(|&i| i >= floor));
        match cut {
            Some(i) => {
                pieces.push(rest[..i].to_owned());
                rest = &rest[i + 1..];
            }
            None => {
                pieces.push(window.to_owned());
                rest = &rest[end..];
            }
        }
    }
    if !rest.is_empty() || pieces.is_empty() {
        pieces.push(rest.to_owned());
    }
    pieces
}

/// The length Telegram counts.
pub fn units(text: &str) -> usize {
    text.chars().map(char::len_utf16).sum()
}

/// `text` cut to at most `max` units from its start, with `…` when cut.
pub fn head(text: &str, max: usize) -> String {
    if units(text) <= max {
        return text.to_owned();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        if used + c.len_utf16() + 1 > max {
            break;
        }
        used += c.len_utf16();
        out.push(c);
    }
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_one_piece() {
        assert_eq!(split("hello", 10), vec!["hello"]);
        assert_eq!(split("", 10), vec![""]);
    }

    #[test]
    fn pieces_respect_the_limit_in_utf16_units_and_lose_nothing() {
        // 😀 is two UTF-16 units: a split never lands inside it.
        let text = "😀".repeat(5_000);
        let pieces = split(&text, TELEGRAM_UNITS);
        assert!(pieces.iter().all(|p| units(p) <= TELEGRAM_UNITS));
        assert_eq!(pieces.concat(), text);
        assert_eq!(pieces.len(), 3);
    }

    #[test]
    fn a_line_break_near_the_limit_is_preferred() {
        let text = format!("{}\n{}", "a".repeat(90), "b".repeat(50));
        let pieces = split(&text, 100);
        assert_eq!(pieces, vec!["a".repeat(90), "b".repeat(50)]);
        let words = "word ".repeat(100);
        let pieces = split(words.trim_end(), 42);
        assert!(pieces.iter().all(|p| units(p) <= 42 && !p.starts_with(' ')));
        assert_eq!(pieces.join(" "), words.trim_end());
    }

    #[test]
    fn byte_pieces_never_split_a_character() {
        let text = "长".repeat(1_500);
        let pieces = split_bytes(&text, 2_048);
        assert!(pieces.iter().all(|p| p.len() <= 2_048));
        assert_eq!(pieces.concat(), text);
    }

    #[test]
    fn head_cuts_with_an_ellipsis() {
        assert_eq!(head("abcdef", 4), "abc…");
        assert_eq!(head("abc", 4), "abc");
    }
}
