//! Golden tests: each export format compared whole against a file checked by hand against the
//! provider's documented shape. `UPDATE_GOLDEN=1 cargo test -p toolgate-protocol` rewrites
//! the files; review the diff before committing.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

use std::path::PathBuf;

use serde_json::{Value, json};
use toolgate_protocol::export::export_deferred;
use toolgate_protocol::{Annotations, ExportFormat, Risk, ToolSpec, export};

fn catalog() -> Vec<ToolSpec> {
    vec![
        ToolSpec::new(
            "get_weather",
            "Current weather for a city. Use for present conditions, not forecasts.",
            json!({
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "City name, e.g. Beijing"},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}
                },
                "required": ["city", "unit"],
                "additionalProperties": false
            }),
        )
        .with_risk(Risk::Read)
        .with_annotations(Annotations {
            title: Some("Weather".into()),
            read_only_hint: Some(true),
            open_world_hint: Some(true),
            ..Annotations::default()
        })
        .with_output_schema(json!({
            "type": "object",
            "properties": {"temperature": {"type": "number"}},
            "required": ["temperature"]
        })),
        ToolSpec::new(
            "write_note",
            "Append a note to the notebook.",
            json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "properties": {
                    "text": {"type": "string", "minLength": 1},
                    "tag": {"type": ["string", "null"]},
                    "priority": {"type": "integer", "minimum": 1, "maximum": 5}
                },
                "required": ["text"]
            }),
        )
        .with_risk(Risk::Write),
    ]
}

fn check(format: ExportFormat) {
    let specs = catalog();
    let refs: Vec<&ToolSpec> = specs.iter().collect();
    compare(&export(&refs, format), &format!("{}.json", format.as_str()));
}

/// The deferred form with `get_weather` loaded from the start and `write_note` deferred.
fn check_deferred(format: ExportFormat) {
    let specs = catalog();
    let refs: Vec<&ToolSpec> = specs.iter().collect();
    let got = export_deferred(&refs, &["get_weather"], format).unwrap();
    compare(&got, &format!("{}-deferred.json", format.as_str()));
}

fn compare(got: &Value, file: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(file);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, serde_json::to_string_pretty(got).unwrap() + "\n").unwrap();
    }
    let want: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(*got, want, "the export differs from {}", path.display());
}

#[test]
fn openai_chat_matches_golden() {
    check(ExportFormat::OpenAiChat);
}

#[test]
fn openai_responses_matches_golden() {
    check(ExportFormat::OpenAiResponses);
}

#[test]
fn anthropic_matches_golden() {
    check(ExportFormat::Anthropic);
}

#[test]
fn mcp_matches_golden() {
    check(ExportFormat::Mcp);
}

#[test]
fn gemini_matches_golden() {
    check(ExportFormat::Gemini);
}

/// Anthropic's tool search tool (BM25 variant) plus `defer_loading` on the deferred tools.
#[test]
fn anthropic_deferred_matches_golden() {
    check_deferred(ExportFormat::Anthropic);
}

/// OpenAI Responses' hosted `tool_search` plus `defer_loading` on the deferred functions.
#[test]
fn openai_responses_deferred_matches_golden() {
    check_deferred(ExportFormat::OpenAiResponses);
}
