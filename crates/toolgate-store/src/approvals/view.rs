//! What an approver reads: the arguments with everything that hides text made visible.
//!
//! An approval request holds the call's whole arguments (redacted, never digested), but the
//! whole text is not enough: `echo hi` followed by 2,100 spaces and `; echo SNEAKY > f` looks
//! like `echo hi` in any box narrower than the padding, and `\r`, ANSI escapes, zero-width and
//! bidi characters rewrite what a terminal or a browser shows. [`visible_text`] turns each of
//! these into a marker nobody can miss, so the dangerous part is on screen and findable:
//!
//! - a run of more than [`MAX_VISIBLE_RUN`] whitespace characters → `⟨2100 spaces⟩`
//!   (`tabs`, `newlines`, or `whitespace` for a mixed run);
//! - `\r` → `⟨CR⟩`, ESC → `⟨ESC⟩`, other control characters → `⟨U+0007⟩`;
//! - invisible and direction-changing characters (zero-width, bidi controls, soft hyphen,
//!   tag characters, non-ASCII spaces, …) → `⟨U+202E⟩`;
//! - a literal `⟨` → `⟨U+27E8⟩`, so a marker cannot be forged by the text itself.
//!
//! Newlines and tabs outside long runs are kept: they are visible where the text is shown
//! as lines. The transformation never drops a character without naming it.
//!
//! ```
//! use toolgate_store::approvals::visible_text;
//! let cmd = format!("echo hi{}; echo SNEAKY > f", " ".repeat(2100));
//! assert_eq!(visible_text(&cmd), "echo hi⟨2100 spaces⟩; echo SNEAKY > f");
//! ```

use std::fmt::Write as _;

use serde_json::Value;

/// The longest whitespace run shown as is (indentation stays readable).
pub const MAX_VISIBLE_RUN: usize = 16;

/// Whether `c` changes or hides what is shown without being visible itself (zero-width,
/// bidi controls, soft hyphen, tag characters, non-ASCII spaces).
pub fn invisible(c: char) -> bool {
    matches!(c,
        '\u{00A0}' | '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}'
        | '\u{1680}' | '\u{17B4}' | '\u{17B5}' | '\u{180B}'..='\u{180F}'
        | '\u{2000}'..='\u{200F}' | '\u{2028}'..='\u{202F}' | '\u{205F}'..='\u{206F}'
        | '\u{2800}' | '\u{3000}' | '\u{3164}' | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}'
        | '\u{FFA0}' | '\u{FFF0}'..='\u{FFFB}' | '\u{1D159}' | '\u{1D173}'..='\u{1D17A}'
        | '\u{E0000}'..='\u{E0FFF}')
}

/// Whitespace that may be folded into a run marker: ASCII blanks and line ends.
fn run_char(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n')
}

fn marker(out: &mut String, c: char) {
    match c {
        '\r' => out.push_str("⟨CR⟩"),
        '\u{1b}' => out.push_str("⟨ESC⟩"),
        _ => {
            let _ = write!(out, "⟨U+{:04X}⟩", u32::from(c));
        }
    }
}

fn push_run(out: &mut String, run: &str) {
    let n = run.chars().count();
    if n <= MAX_VISIBLE_RUN {
        out.push_str(run);
        return;
    }
    let kind = if run.bytes().all(|b| b == b' ') {
        "spaces"
    } else if run.bytes().all(|b| b == b'\t') {
        "tabs"
    } else if run.bytes().all(|b| b == b'\n') {
        "newlines"
    } else {
        "whitespace"
    };
    let _ = write!(out, "⟨{n} {kind}⟩");
}

/// `s` with long whitespace runs folded into markers and every hiding character named (see
/// the module documentation).
pub fn visible_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len().min(4096));
    let mut run_start: Option<usize> = None;
    for (i, c) in s.char_indices() {
        if run_char(c) {
            run_start.get_or_insert(i);
            continue;
        }
        if let Some(start) = run_start.take() {
            push_run(&mut out, &s[start..i]);
        }
        if c == '⟨' || (c.is_control() && c != '\t' && c != '\n') || invisible(c) {
            marker(&mut out, c);
        } else {
            out.push(c);
        }
    }
    if let Some(start) = run_start {
        push_run(&mut out, &s[start..]);
    }
    out
}

/// Whether [`visible_text`] changes `s`: it hides something from a plain rendering.
pub fn hides_text(s: &str) -> bool {
    let mut run = 0usize;
    for c in s.chars() {
        if run_char(c) {
            run += 1;
            if run > MAX_VISIBLE_RUN {
                return true;
            }
            continue;
        }
        run = 0;
        if c == '⟨' || (c.is_control() && c != '\t' && c != '\n') || invisible(c) {
            return true;
        }
    }
    false
}

/// `v` with every string (keys too) passed through [`visible_text`].
pub fn visible_value(v: &Value) -> Value {
    match v {
        Value::String(s) => Value::String(visible_text(s)),
        Value::Array(items) => Value::Array(items.iter().map(visible_value).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (visible_text(k), visible_value(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Whether any string (or key) in `v` hides something: the approver should read the
/// visible view, not only the plain one.
pub fn hides_value(v: &Value) -> bool {
    match v {
        Value::String(s) => hides_text(s),
        Value::Array(items) => items.iter().any(hides_value),
        Value::Object(map) => map.iter().any(|(k, v)| hides_text(k) || hides_value(v)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn hiding_characters_become_markers() {
        let cases = [
            ("plain text", "plain text"),
            (
                "indented\n    four\n\tand a tab",
                "indented\n    four\n\tand a tab",
            ),
            (
                &format!("a{}b", " ".repeat(16)),
                &format!("a{}b", " ".repeat(16)),
            ),
            (&format!("a{}b", " ".repeat(17)), "a⟨17 spaces⟩b"),
            (&format!("a{}b", "\n".repeat(40)), "a⟨40 newlines⟩b"),
            (&format!("a{}b", "\t".repeat(20)), "a⟨20 tabs⟩b"),
            (&format!("a{}b", " \t\n".repeat(10)), "a⟨30 whitespace⟩b"),
            (
                &format!("trailing{}", " ".repeat(30)),
                "trailing⟨30 spaces⟩",
            ),
            ("safe\rrm -rf ~", "safe⟨CR⟩rm -rf ~"),
            ("\u{1b}[2Kls", "⟨ESC⟩[2Kls"),
            (
                "bell\u{7}\u{0}\u{7f}\u{85}",
                "bell⟨U+0007⟩⟨U+0000⟩⟨U+007F⟩⟨U+0085⟩",
            ),
            ("a\u{200b}b\u{feff}c", "a⟨U+200B⟩b⟨U+FEFF⟩c"),
            ("x\u{202e}fdp.exe", "x⟨U+202E⟩fdp.exe"),
            ("\u{2066}a\u{2069}", "⟨U+2066⟩a⟨U+2069⟩"),
            ("nb\u{a0}sp\u{3000}", "nb⟨U+00A0⟩sp⟨U+3000⟩"),
            ("tag\u{e0041}", "tag⟨U+E0041⟩"),
            ("fake ⟨2 spaces⟩", "fake ⟨U+27E8⟩2 spaces⟩"),
            ("ünïcödé 日本", "ünïcödé 日本"),
        ];
        for (input, want) in cases {
            assert_eq!(visible_text(input), want, "{input:?}");
            assert_eq!(hides_text(input), input != want, "{input:?}");
        }
    }

    #[test]
    fn values_are_made_visible_throughout() {
        let v = json!({"cmd": format!("ok{}; bad", " ".repeat(20)), "n": 1,
                       "list": ["a\rb"], "k\u{200b}": null});
        assert_eq!(
            visible_value(&v),
            json!({"cmd": "ok⟨20 spaces⟩; bad", "n": 1, "list": ["a⟨CR⟩b"], "k⟨U+200B⟩": null})
        );
        assert!(hides_value(&v));
        assert!(!hides_value(&json!({"path": "a.md", "n": [1, 2]})));
    }
}
