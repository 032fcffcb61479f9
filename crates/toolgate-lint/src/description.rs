//! Description rules: long enough to choose by, short enough to be read whole, and with the
//! boundary — when *not* to use the tool, naming the sibling to use instead — because that
//! is what separates two tools a model would otherwise pick between by luck.

use crate::finding::{Finding, Rule, Severity};

/// Shorter than this says too little to choose by.
pub const MIN_CHARS: usize = 40;
/// Longer than this is rarely read whole; details belong in the parameters.
pub const MAX_CHARS: usize = 1200;

/// Phrases that state a boundary.
const BOUNDARY: &[&str] = &[
    "not for",
    "not to be used",
    "do not use",
    "don't use",
    "never use",
    "instead",
    "rather than",
    "only for",
    "only when",
    "only if",
    "use it only",
    "avoid",
    "not suitable",
    "unless",
];

/// The description rules for one tool; `sibling` is the tool it is most easily confused
/// with, when one is known (named in the fix).
pub fn check(tool: &str, description: &str, sibling: Option<&str>) -> Vec<Finding> {
    let text = description.trim();
    let chars = text.chars().count();
    let mut out = Vec::new();
    if chars < MIN_CHARS {
        out.push(Finding::new(
            tool,
            Rule::DescriptionLength,
            if chars == 0 { Severity::Error } else { Severity::Warning },
            format!("the description has {chars} characters; a model cannot tell from it when to call the tool"),
            "say what it does, what it returns, and when to use it, in one to three sentences",
        ));
    } else if chars > MAX_CHARS {
        out.push(Finding::new(
            tool,
            Rule::DescriptionLength,
            Severity::Note,
            format!("the description has {chars} characters (over {MAX_CHARS}); every call pays for it in tokens"),
            "keep what it does and when (not) to use it; move parameter details into the parameters' descriptions",
        ));
    }
    let lower = text.to_lowercase();
    let bounded = BOUNDARY.iter().any(|p| lower.contains(p)) || names_a_sibling(tool, text);
    if chars > 0 && !bounded {
        let fix = match sibling {
            Some(other) => format!(
                "add when not to use it, naming the alternative: \"Not for …; use {other} instead.\""
            ),
            None => {
                "add when not to use it: \"Not for …; use <the other tool> instead.\"".to_owned()
            }
        };
        out.push(Finding::new(
            tool,
            Rule::DescriptionBoundary,
            Severity::Warning,
            "the description never says when not to use the tool",
            fix,
        ));
    }
    out
}

/// Whether the text names another tool (a snake_case identifier other than the tool's
/// own name): "then url_read to read one" draws the line as well as "not for".
fn names_a_sibling(tool: &str, text: &str) -> bool {
    let own = crate::name::own_name(tool);
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map(|w| w.trim_matches('_'))
        .any(|w| {
            w != own
                && w != tool
                && w.contains('_')
                && w.starts_with(|c: char| c.is_ascii_lowercase())
                && w.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bounded_description_passes() {
        let d = "Search the web and return titles and URLs. Use it to find pages, then url_read to read one.";
        assert_eq!(check("web_search", d, None), []);
        let d = "Search the web and return titles and URLs; web_search ranks by relevance.";
        assert_eq!(check("web_search", d, None).len(), 1);
        let d = "Read a text file in the workspace. Not for directories; use list_dir instead.";
        assert_eq!(check("read_file", d, None), []);
    }

    #[test]
    fn short_long_and_unbounded_descriptions_are_found() {
        let got: Vec<(Rule, Severity, String)> =
            check("get_data", "Gets data.", Some("fetch_data"))
                .into_iter()
                .map(|f| (f.rule, f.severity, f.fix))
                .collect();
        assert_eq!(
            got,
            [
                (
                    Rule::DescriptionLength,
                    Severity::Warning,
                    "say what it does, what it returns, and when to use it, in one to three sentences".to_owned()
                ),
                (
                    Rule::DescriptionBoundary,
                    Severity::Warning,
                    "add when not to use it, naming the alternative: \"Not for …; use fetch_data instead.\"".to_owned()
                ),
            ]
        );
        let long = format!("{} Not for images.", "word ".repeat(300));
        assert_eq!(
            check("x", &long, None)
                .iter()
                .map(|f| (f.rule, f.severity))
                .collect::<Vec<_>>(),
            [(Rule::DescriptionLength, Severity::Note)]
        );
        assert_eq!(check("x", " ", None)[0].severity, Severity::Error);
    }
}
