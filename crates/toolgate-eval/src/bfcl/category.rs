//! [`Category`]: the single-turn BFCL categories this crate loads and scores, with the
//! language and checker each one uses (the same substring rules as `bfcl_eval`:
//! "parallel" before "multiple"; "irrelevance"/"relevance" never reach the AST checker).

use std::fmt;
use std::str::FromStr;

/// A single-turn BFCL category (file `BFCL_v4_<name>.json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Category {
    /// `simple_python` (400)
    SimplePython,
    /// `simple_java` (100)
    SimpleJava,
    /// `simple_javascript` (50)
    SimpleJavascript,
    /// `multiple` (200)
    Multiple,
    /// `parallel` (200)
    Parallel,
    /// `parallel_multiple` (200)
    ParallelMultiple,
    /// `irrelevance` (240)
    Irrelevance,
    /// `live_simple` (258)
    LiveSimple,
    /// `live_multiple` (1053)
    LiveMultiple,
    /// `live_parallel` (16)
    LiveParallel,
    /// `live_parallel_multiple` (24)
    LiveParallelMultiple,
    /// `live_irrelevance` (884)
    LiveIrrelevance,
    /// `live_relevance` (16)
    LiveRelevance,
}

/// How a category's outputs are judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckKind {
    /// Exactly one call, checked against the first function doc.
    Simple,
    /// Exactly one call, of the function the answer names, among several docs.
    Multiple,
    /// Several calls, matched to the answers in any order.
    Parallel,
    /// Passes only when the output has no call.
    Irrelevance,
    /// Passes only when the output has at least one call (no answer to compare with).
    Relevance,
}

/// The language the checker assumes for argument values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    /// Values are JSON values of Python types.
    Python,
    /// Values are Java source strings (`"5L"`, `new ArrayList<>(...)`).
    Java,
    /// Values are JavaScript source strings.
    JavaScript,
}

impl Category {
    /// Every category, in the order BFCL lists them.
    pub const ALL: [Category; 13] = [
        Category::SimplePython,
        Category::SimpleJava,
        Category::SimpleJavascript,
        Category::Multiple,
        Category::Parallel,
        Category::ParallelMultiple,
        Category::Irrelevance,
        Category::LiveSimple,
        Category::LiveMultiple,
        Category::LiveParallel,
        Category::LiveParallelMultiple,
        Category::LiveIrrelevance,
        Category::LiveRelevance,
    ];

    /// The categories judged by the AST checker (they have a ground-truth file).
    pub const AST: [Category; 10] = [
        Category::SimplePython,
        Category::SimpleJava,
        Category::SimpleJavascript,
        Category::Multiple,
        Category::Parallel,
        Category::ParallelMultiple,
        Category::LiveSimple,
        Category::LiveMultiple,
        Category::LiveParallel,
        Category::LiveParallelMultiple,
    ];

    /// The name BFCL uses (`simple_python`, `live_multiple`, …).
    pub fn name(self) -> &'static str {
        match self {
            Category::SimplePython => "simple_python",
            Category::SimpleJava => "simple_java",
            Category::SimpleJavascript => "simple_javascript",
            Category::Multiple => "multiple",
            Category::Parallel => "parallel",
            Category::ParallelMultiple => "parallel_multiple",
            Category::Irrelevance => "irrelevance",
            Category::LiveSimple => "live_simple",
            Category::LiveMultiple => "live_multiple",
            Category::LiveParallel => "live_parallel",
            Category::LiveParallelMultiple => "live_parallel_multiple",
            Category::LiveIrrelevance => "live_irrelevance",
            Category::LiveRelevance => "live_relevance",
        }
    }

    /// How outputs of this category are judged.
    pub fn check_kind(self) -> CheckKind {
        let name = self.name();
        if name.contains("irrelevance") {
            CheckKind::Irrelevance
        } else if name.contains("relevance") {
            CheckKind::Relevance
        } else if name.contains("parallel") {
            CheckKind::Parallel
        } else if name.contains("multiple") {
            CheckKind::Multiple
        } else {
            CheckKind::Simple
        }
    }

    /// The language of argument values.
    pub fn language(self) -> Language {
        match self {
            Category::SimpleJava => Language::Java,
            Category::SimpleJavascript => Language::JavaScript,
            _ => Language::Python,
        }
    }

    /// Whether the category has a `possible_answer` file.
    pub fn has_answers(self) -> bool {
        !matches!(
            self.check_kind(),
            CheckKind::Irrelevance | CheckKind::Relevance
        )
    }

    /// Names of categories, or groups: `all`, `ast`, `python`, `live`, `non_live`.
    pub fn parse_list(spec: &str) -> Result<Vec<Category>, UnknownCategory> {
        let mut out: Vec<Category> = Vec::new();
        for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let group: Vec<Category> = match part {
                "all" => Category::ALL.to_vec(),
                "ast" => Category::AST.to_vec(),
                "python" => Category::ALL
                    .into_iter()
                    .filter(|c| c.language() == Language::Python)
                    .collect(),
                "live" => Category::ALL
                    .into_iter()
                    .filter(|c| c.name().starts_with("live_"))
                    .collect(),
                "non_live" => Category::ALL
                    .into_iter()
                    .filter(|c| !c.name().starts_with("live_"))
                    .collect(),
                one => vec![one.parse()?],
            };
            for c in group {
                if !out.contains(&c) {
                    out.push(c);
                }
            }
        }
        if out.is_empty() {
            return Err(UnknownCategory(spec.to_owned()));
        }
        Ok(out)
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl serde::Serialize for Category {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// A category name that is not one of [`Category::ALL`] (nor a group).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown BFCL category `{0}`; expected one of: {names}, or a group: all, ast, python, live, non_live",
    names = Category::ALL.map(Category::name).join(", ")
)]
pub struct UnknownCategory(pub String);

impl FromStr for Category {
    type Err = UnknownCategory;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        // "simple" is the v3 name of simple_python.
        if s == "simple" {
            return Ok(Category::SimplePython);
        }
        Category::ALL
            .into_iter()
            .find(|c| c.name() == s)
            .ok_or_else(|| UnknownCategory(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_follow_bfcl_substring_rules() {
        assert_eq!(Category::ParallelMultiple.check_kind(), CheckKind::Parallel);
        assert_eq!(Category::LiveMultiple.check_kind(), CheckKind::Multiple);
        assert_eq!(
            Category::LiveIrrelevance.check_kind(),
            CheckKind::Irrelevance
        );
        assert_eq!(Category::LiveRelevance.check_kind(), CheckKind::Relevance);
        assert_eq!(Category::SimpleJava.language(), Language::Java);
        assert_eq!(
            Category::AST.len(),
            Category::ALL.iter().filter(|c| c.has_answers()).count()
        );
    }

    #[test]
    fn parses_names_and_groups() {
        assert_eq!("live_simple".parse(), Ok(Category::LiveSimple));
        assert_eq!(
            Category::parse_list("parallel, ast").unwrap()[0],
            Category::Parallel
        );
        assert_eq!(Category::parse_list("live").unwrap().len(), 6);
        let err = "simple_rust".parse::<Category>().unwrap_err().to_string();
        assert!(
            err.contains("simple_rust") && err.contains("live_multiple"),
            "{err}"
        );
    }
}
