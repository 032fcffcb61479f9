//! The phrase patterns and the invisible characters [`super::description_flags`] looks for.
//! Patterns are case-insensitive and kept narrow: each one should almost never occur in an
//! honest description (the negative cases in the tests are real tools' descriptions).

use std::sync::LazyLock;

use regex::Regex;

use super::FlagKind;

/// `(kind, pattern)`; compiled once.
const PATTERNS: &[(FlagKind, &str)] = &[
    // Addressing the model instead of describing the tool.
    (
        FlagKind::Instruction,
        r"\b(ignore|disregard|forget|override)\s+(all\s+|any\s+)?(of\s+)?(the\s+|your\s+|my\s+)?(previous|prior|above|earlier|preceding|other|system)\s+(instructions?|directions?|rules|prompts?|messages|guidelines)\b",
    ),
    (
        FlagKind::Instruction,
        r"\b(do\s+not|don'?t|never|must\s+not|should\s+not)\s+(tell|inform|notify|alert|mention|reveal|disclose)\b",
    ),
    (
        FlagKind::Instruction,
        r"\bwithout\s+(telling|informing|notifying|alerting|asking)\s+(the\s+)?user\b",
    ),
    (
        FlagKind::Instruction,
        r"\b(system|developer)\s+(prompt|message|instructions?)\b",
    ),
    (
        FlagKind::Instruction,
        r"<\s*/?\s*(important|system|instructions?|secret|hidden|admin|critical)\s*>",
    ),
    (
        FlagKind::Instruction,
        r"\bbefore\s+(using|calling|invoking|running)\s+(this|the|any|other)\s+tools?\b,?\s*(you\s+(must|need\s+to|should)\s+|always\s+|first\s+)?(read|open|call|send|fetch|include|access|run|cat)\b",
    ),
    (
        FlagKind::Instruction,
        r"\b(the|this)\s+tool\s+will\s+not\s+work\b",
    ),
    (
        FlagKind::Instruction,
        r"\b(you\s+are\s+now|from\s+now\s+on|secretly|covertly)\b",
    ),
    // Credential files a tool description has no business naming.
    (
        FlagKind::SecretAccess,
        r"(~/\.ssh\b|\.ssh/|\bid_(rsa|dsa|ecdsa|ed25519)\b|\.aws/credentials|\.netrc\b|\.git-credentials|/etc/(passwd|shadow)\b|\bmcp\.json\b|~/\.cursor\b|claude_desktop_config\.json|\.docker/config\.json|\.kube/config|\.npmrc\b|\.pypirc\b|wallet\.dat)",
    ),
    // Smuggling data out through arguments or messages.
    (
        FlagKind::Exfiltration,
        r"\bpass\s+(its|their|the\s+file'?s?|the)\s+contents?\s+(as|in|into|to)\b",
    ),
    (
        FlagKind::Exfiltration,
        // "of" must lead to a path or a secret: "include the contents of subdirectories" is
        // an honest option of a directory listing.
        r"\b(include|append|attach|embed|put|add|copy)\s+(the\s+)?(full\s+|entire\s+|complete\s+|whole\s+)?(contents?|text)\s+of\s+([`'\x22]?[~/$]|[`'\x22]?\.\w|(the|any|all|every|your)\s+(\w+\s+)?(files?|keys?|credentials|secrets?|config(uration)?|environment|tokens?|passwords?)\b)",
    ),
    (
        FlagKind::Exfiltration,
        r"\b((entire|full|whole|complete)\s+(conversation|chat)(\s+history)?|(conversation|chat)\s+history|previous\s+messages)\b",
    ),
    (
        FlagKind::Exfiltration,
        r"\b(send|forward|bcc|cc|copy|redirect)\b[^.\n]{0,60}?\b[\w.+-]+@[\w-]+(\.[\w-]+)+",
    ),
    // Markup a person reviewing rendered text does not see.
    (FlagKind::HiddenText, r"<!--"),
];

pub(super) static PHRASES: LazyLock<Vec<(FlagKind, Regex)>> = LazyLock::new(|| {
    PATTERNS
        .iter()
        .filter_map(|(kind, p)| Regex::new(&format!("(?i){p}")).ok().map(|r| (*kind, r)))
        .collect()
});

/// What `c` is, if a reviewer would not see it: zero-width and joiner characters, bidi
/// embeddings, overrides and isolates, Unicode tag characters ("ASCII smuggling"),
/// supplementary variation selectors, and control characters other than tab and newline.
pub(super) fn hidden_character(c: char) -> Option<&'static str> {
    match c {
        '\u{200B}' => Some("zero-width space"),
        '\u{200C}' | '\u{200D}' => Some("zero-width joiner"),
        '\u{200E}' | '\u{200F}' | '\u{061C}' => Some("bidi mark"),
        '\u{202A}'..='\u{202E}' => Some("bidi override"),
        '\u{2066}'..='\u{2069}' => Some("bidi isolate"),
        '\u{2060}'..='\u{2064}' | '\u{FEFF}' | '\u{180E}' => Some("invisible character"),
        '\u{E0000}'..='\u{E007F}' => Some("tag character"),
        '\u{E0100}'..='\u{E01EF}' => Some("variation selector"),
        '\t' | '\n' | '\r' => None,
        c if c.is_control() => Some("control character"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pattern_compiles() {
        assert_eq!(PHRASES.len(), PATTERNS.len());
    }
}
