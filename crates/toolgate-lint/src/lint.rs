//! [`lint_catalog`]: every rule over every tool. The confusable pairs run first, so that a
//! description missing its boundary is told which sibling to name.

use std::collections::HashMap;

use toolgate_protocol::ToolSpec;

use crate::confusable::{ConfusablePair, confusable_pairs};
use crate::finding::{Finding, Rule, Severity};

/// Settings of a lint run.
#[derive(Debug, Clone)]
pub struct LintOptions {
    /// BM25 similarity (0–1) from which two tools are reported as confusable.
    pub confusable_threshold: f32,
    /// Pairs found some other way (Tool RAG's encoder), added to BM25's.
    pub extra_pairs: Vec<ConfusablePair>,
}

impl Default for LintOptions {
    fn default() -> Self {
        LintOptions {
            confusable_threshold: 0.8,
            extra_pairs: Vec::new(),
        }
    }
}

/// The findings for `specs`, by tool (catalog order), then severity, then rule.
pub fn lint_catalog(specs: &[ToolSpec], options: &LintOptions) -> Vec<Finding> {
    let mut pairs = confusable_pairs(specs, options.confusable_threshold);
    for extra in &options.extra_pairs {
        let known = pairs
            .iter()
            .any(|p| (p.a == extra.a && p.b == extra.b) || (p.a == extra.b && p.b == extra.a));
        if !known {
            pairs.push(extra.clone());
        }
    }
    let mut sibling: HashMap<&str, &str> = HashMap::new();
    for p in &pairs {
        sibling.entry(p.a.as_str()).or_insert(p.b.as_str());
        sibling.entry(p.b.as_str()).or_insert(p.a.as_str());
    }
    let mut out = Vec::new();
    for spec in specs {
        out.extend(crate::name::check(&spec.name));
        out.extend(crate::description::check(
            &spec.name,
            &spec.description,
            sibling.get(spec.name.as_str()).copied(),
        ));
        out.extend(crate::schema::check(&spec.name, &spec.input_schema));
        out.extend(crate::hints::check(
            &spec.name,
            spec.risk,
            &spec.annotations,
        ));
    }
    for p in &pairs {
        out.push(Finding {
            related: Some(p.b.clone()),
            ..Finding::new(
                &p.a,
                Rule::Confusable,
                Severity::Warning,
                format!(
                    "`{}` and `{}` are {:.0}% alike ({}): a model or Tool RAG will pick one for the other",
                    p.a,
                    p.b,
                    p.similarity * 100.0,
                    p.by
                ),
                format!(
                    "tell them apart in both descriptions: in `{a}` say when to use `{b}` instead, and in `{b}` when to use `{a}`; or merge them into one tool",
                    a = p.a,
                    b = p.b
                ),
            )
        });
    }
    let order: HashMap<&str, usize> = specs
        .iter()
        .enumerate()
        .map(|(i, s)| (s.name.as_str(), i))
        .collect();
    out.sort_by_key(|f| {
        (
            order.get(f.tool.as_str()).copied().unwrap_or(usize::MAX),
            f.severity,
            f.rule,
        )
    });
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_missing_boundary_names_the_confusable_sibling() {
        let schema = json!({"type": "object", "properties": {}, "required": []});
        let specs = [
            ToolSpec::new(
                "get_weather",
                "Get the current weather forecast for a city by name.",
                schema.clone(),
            ),
            ToolSpec::new(
                "fetch_weather",
                "Fetch the current weather forecast for a city by name.",
                schema.clone(),
            ),
            // Unrelated tools give BM25 a catalog to weigh words against.
            ToolSpec::new(
                "send_email",
                "Send an email message to one recipient. Not for chat messages.",
                schema.clone(),
            ),
            ToolSpec::new(
                "read_file",
                "Read a text file from the workspace. Not for directories; use list_dir instead.",
                schema,
            ),
        ];
        let options = LintOptions {
            confusable_threshold: 0.6,
            ..LintOptions::default()
        };
        let got: Vec<(String, Rule, String)> = lint_catalog(&specs, &options)
            .into_iter()
            .map(|f| (f.tool, f.rule, f.fix))
            .collect();
        assert_eq!(
            got,
            [
                ("get_weather".to_owned(), Rule::DescriptionBoundary,
                 "add when not to use it, naming the alternative: \"Not for …; use fetch_weather instead.\"".to_owned()),
                ("get_weather".to_owned(), Rule::Confusable,
                 "tell them apart in both descriptions: in `get_weather` say when to use `fetch_weather` instead, and in `fetch_weather` when to use `get_weather`; or merge them into one tool".to_owned()),
                ("fetch_weather".to_owned(), Rule::DescriptionBoundary,
                 "add when not to use it, naming the alternative: \"Not for …; use get_weather instead.\"".to_owned()),
            ]
        );
    }
}
