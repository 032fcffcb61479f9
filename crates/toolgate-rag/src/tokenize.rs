//! Identifier-aware tokenisation for BM25.
//!
//! Tool catalogs are full of identifiers: `get_weather`, `listPullRequests`, `search-issues`,
//! `mcp__github__create_issue`, `HTTPServer`. Each is split into its words, lowercased, and
//! (with [`Tokenizer::keep_compounds`]) also kept whole, so that both "weather" and the exact
//! `get_weather` match. English stop words are dropped and a light suffix stemmer folds
//! plurals and verb forms ("calculates", "calculated", "calculating" → "calculat").
//!
//! The sequence for one piece of text:
//! 1. split on everything that is not a letter or digit (`_`, `-`, `.`, `/`, spaces, `__`);
//! 2. split each run at case changes (`fooBar` → foo|Bar, `HTTPServer` → HTTP|Server);
//! 3. lowercase, drop stop words, stem;
//! 4. if the run had more than one word and compounds are kept, add the whole run too.

/// Words too common in tool documentation to tell tools apart.
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "for", "from", "has",
    "have", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "of", "on", "or",
    "please", "that", "the", "their", "then", "there", "these", "this", "to", "was", "what",
    "when", "where", "which", "who", "will", "with", "would", "you", "your",
];

/// The tokeniser's switches (defaults are the measured best, see docs/rag.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tokenizer {
    /// Also emit a multi-word identifier whole (`get_weather`).
    pub keep_compounds: bool,
    /// Fold common English suffixes.
    pub stem: bool,
    /// Drop English stop words.
    pub stop_words: bool,
}

impl Default for Tokenizer {
    fn default() -> Self {
        Tokenizer {
            keep_compounds: true,
            stem: true,
            stop_words: true,
        }
    }
}

impl Tokenizer {
    /// The tokens of `text`, in order (repeats kept: BM25 counts them).
    pub fn tokens(&self, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        self.push_tokens(text, &mut out);
        out
    }

    /// Appends the tokens of `text` to `out`.
    pub fn push_tokens(&self, text: &str, out: &mut Vec<String>) {
        // An identifier is a run of letters/digits joined by `_` or `-` (single or doubled);
        // spaces and other punctuation end it.
        for ident in text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-')) {
            let ident = ident.trim_matches(|c| c == '_' || c == '-');
            if ident.is_empty() {
                continue;
            }
            let mut words = 0usize;
            for run in ident.split(|c: char| !c.is_alphanumeric()) {
                for word in split_case(run) {
                    let lower = word.to_lowercase();
                    words += 1;
                    if self.stop_words && STOP_WORDS.contains(&lower.as_str()) {
                        continue;
                    }
                    out.push(if self.stem { stem(&lower) } else { lower });
                }
            }
            if self.keep_compounds && words > 1 {
                out.push(ident.to_lowercase());
            }
        }
    }
}

/// Splits one alphanumeric run at case changes: `getHTTPResponse2` → get, HTTP, Response2.
fn split_case(run: &str) -> Vec<&str> {
    let chars: Vec<(usize, char)> = run.char_indices().collect();
    let mut parts = Vec::new();
    let mut start = 0;
    for i in 1..chars.len() {
        let (pos, c) = chars[i];
        let prev = chars[i - 1].1;
        let next_lower = chars.get(i + 1).is_some_and(|(_, n)| n.is_lowercase());
        let boundary = (c.is_uppercase() && prev.is_lowercase())
            || (c.is_uppercase() && prev.is_uppercase() && next_lower)
            || (c.is_uppercase() && prev.is_ascii_digit());
        if boundary {
            parts.push(&run[start..pos]);
            start = pos;
        }
    }
    if start < run.len() {
        parts.push(&run[start..]);
    }
    parts
}

/// A light suffix stemmer: enough to meet "calculates" with "calculate", not a Porter.
pub fn stem(word: &str) -> String {
    let n = word.chars().count();
    if n <= 3 || !word.is_ascii() {
        return word.to_owned();
    }
    for (suffix, keep) in [
        ("ations", 5usize),
        ("ation", 5),
        ("ings", 4),
        ("ing", 4),
        ("ies", 3),
        ("ied", 3),
        ("ed", 4),
        ("es", 4),
        ("s", 3),
        ("e", 4),
    ] {
        if let Some(base) = word.strip_suffix(suffix) {
            if base.len() < keep || (suffix == "s" && (base.ends_with('s') || base.ends_with('u')))
            {
                continue;
            }
            return match suffix {
                "ies" | "ied" => format!("{base}y"),
                _ => base.to_owned(),
            };
        }
    }
    word.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain() -> Tokenizer {
        Tokenizer {
            keep_compounds: false,
            stem: false,
            stop_words: false,
        }
    }

    #[test]
    fn splits_identifier_styles() {
        let t = plain();
        assert_eq!(t.tokens("get_weather"), ["get", "weather"]);
        assert_eq!(t.tokens("listPullRequests"), ["list", "pull", "requests"]);
        assert_eq!(t.tokens("search-issues"), ["search", "issues"]);
        assert_eq!(
            t.tokens("mcp__github__create_issue"),
            ["mcp", "github", "create", "issue"]
        );
        assert_eq!(t.tokens("HTTPServer"), ["http", "server"]);
        assert_eq!(t.tokens("getHTTPResponse2"), ["get", "http", "response2"]);
        assert_eq!(t.tokens("math.factorial(5)"), ["math", "factorial", "5"]);
        assert_eq!(
            t.tokens("  What's the WEATHER?  "),
            ["what", "s", "the", "weather"]
        );
    }

    #[test]
    fn compounds_stop_words_and_stems() {
        let t = Tokenizer::default();
        assert_eq!(
            t.tokens("get_weather for the cities"),
            ["get", "weather", "get_weather", "city"]
        );
        assert_eq!(
            t.tokens("mcp__fs__read-file"),
            ["mcp", "fs", "read", "file", "mcp__fs__read-file"]
        );
        assert_eq!(stem("calculates"), stem("calculated"));
        assert_eq!(stem("calculating"), stem("calculate"));
        assert_eq!(stem("files"), stem("file"));
        assert_eq!(stem("status"), "status");
        assert_eq!(stem("class"), "class");
    }
}
