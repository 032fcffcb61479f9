//! The three outputs of `toolgate tools lint`: rows for a text table, one JSON document, and
//! SARIF 2.1.0 for code-scanning tools. A tool is not a file: SARIF results point at it with
//! a logical location (`tool` or `tool/properties/param`).

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::finding::{Finding, Rule, Severity};

/// Columns of the text table.
pub const TEXT_HEADER: [&str; 5] = ["TOOL", "SEVERITY", "RULE", "WHERE", "FINDING → FIX"];

/// One row per finding.
pub fn text_rows(findings: &[Finding]) -> Vec<Vec<String>> {
    findings
        .iter()
        .map(|f| {
            vec![
                f.tool.clone(),
                f.severity.as_str().to_owned(),
                f.rule.id().to_owned(),
                f.path
                    .clone()
                    .filter(|p| !p.is_empty())
                    .unwrap_or_else(|| "-".to_owned()),
                format!("{} → {}", f.message, f.fix),
            ]
        })
        .collect()
}

/// Findings per severity (`{"error": 1, "warning": 3, "note": 0}`).
pub fn counts(findings: &[Finding]) -> BTreeMap<&'static str, usize> {
    let mut by: BTreeMap<&'static str, usize> =
        [Severity::Error, Severity::Warning, Severity::Note]
            .iter()
            .map(|s| (s.as_str(), 0))
            .collect();
    for f in findings {
        *by.entry(f.severity.as_str()).or_default() += 1;
    }
    by
}

/// `{"tools": N, "counts": {…}, "findings": [...]}`.
pub fn json(tools: usize, findings: &[Finding]) -> Value {
    json!({
        "tools": tools,
        "counts": counts(findings),
        "findings": findings,
    })
}

/// A SARIF 2.1.0 log with one run.
pub fn sarif(findings: &[Finding], version: &str) -> Value {
    let rules: Vec<Value> = Rule::ALL
        .iter()
        .map(|r| {
            json!({
                "id": r.id(),
                "shortDescription": {"text": r.summary()},
            })
        })
        .collect();
    let results: Vec<Value> = findings
        .iter()
        .map(|f| {
            let name = match f.path.as_deref().filter(|p| !p.is_empty()) {
                Some(p) => format!("{}{p}", f.tool),
                None => f.tool.clone(),
            };
            let mut result = json!({
                "ruleId": f.rule.id(),
                "ruleIndex": Rule::ALL.iter().position(|r| *r == f.rule).unwrap_or(0),
                "level": f.severity.as_str(),
                "message": {"text": format!("{}. Fix: {}", f.message, f.fix)},
                "locations": [{"logicalLocations": [{
                    "name": f.tool, "fullyQualifiedName": name, "kind": "function"
                }]}],
                "properties": {"fix": f.fix},
            });
            if let Some(other) = &f.related {
                result["relatedLocations"] = json!([{"id": 1, "logicalLocations": [{
                    "name": other, "fullyQualifiedName": other, "kind": "function"
                }]}]);
            }
            result
        })
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "toolgate-lint",
                "version": version,
                "rules": rules,
            }},
            "results": results,
        }],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sarif_points_at_the_tool_and_parameter() {
        let f = Finding::new(
            "get_x",
            Rule::ParamUnit,
            Severity::Warning,
            "`t` is a quantity without a unit",
            "say the unit",
        )
        .at("/properties/t");
        let log = sarif(std::slice::from_ref(&f), "0.1.0");
        let result = &log["runs"][0]["results"][0];
        assert_eq!(
            result,
            &json!({
                "ruleId": "param-unit",
                "ruleIndex": 6,
                "level": "warning",
                "message": {"text": "`t` is a quantity without a unit. Fix: say the unit"},
                "locations": [{"logicalLocations": [{
                    "name": "get_x", "fullyQualifiedName": "get_x/properties/t", "kind": "function"
                }]}],
                "properties": {"fix": "say the unit"},
            })
        );
        assert_eq!(
            log["runs"][0]["tool"]["driver"]["rules"]
                .as_array()
                .unwrap()
                .len(),
            13
        );
        assert_eq!(
            json(1, &[f])["counts"],
            json!({"error": 0, "note": 0, "warning": 1})
        );
    }
}
