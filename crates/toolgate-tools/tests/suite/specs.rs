//! The catalog entries: names, risks, annotations and schema discipline.

use std::sync::Arc;

use serde_json::{Value, json};
use toolgate_protocol::{Annotations, Risk};
use toolgate_tools::{BuiltinOptions, Workspace, builtin_tools};

fn hints(
    read_only: bool,
    destructive: Option<bool>,
    idempotent: Option<bool>,
) -> (bool, Option<bool>, Option<bool>, bool) {
    (read_only, destructive, idempotent, false)
}

#[test]
fn risks_and_annotations_match_what_each_tool_does() {
    let dir = tempfile::tempdir().unwrap();
    let ws = Arc::new(Workspace::new(dir.path(), Vec::new()).unwrap());
    let tools = builtin_tools(ws, &BuiltinOptions::default());
    let seen: Vec<_> = tools
        .iter()
        .map(|t| {
            let s = t.spec();
            let Annotations {
                read_only_hint,
                destructive_hint,
                idempotent_hint,
                open_world_hint,
                ..
            } = s.annotations.clone();
            (
                s.name.as_str(),
                s.risk,
                (
                    read_only_hint.unwrap(),
                    destructive_hint,
                    idempotent_hint,
                    open_world_hint.unwrap(),
                ),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("read_file", Risk::Read, hints(true, None, None)),
            (
                "write_file",
                Risk::Write,
                hints(false, Some(true), Some(true))
            ),
            (
                "edit_file",
                Risk::Write,
                hints(false, Some(false), Some(false))
            ),
            ("list_dir", Risk::Read, hints(true, None, None)),
            ("search_files", Risk::Read, hints(true, None, None)),
            (
                "shell",
                Risk::Dangerous,
                hints(false, Some(true), Some(false))
            ),
        ]
    );
}

#[test]
fn schemas_are_closed_objects_and_writes_take_an_idempotency_key() {
    let dir = tempfile::tempdir().unwrap();
    let ws = Arc::new(Workspace::new(dir.path(), Vec::new()).unwrap());
    for tool in builtin_tools(ws, &BuiltinOptions::default()) {
        let spec = tool.spec();
        assert_eq!(spec.validate(), Ok(()), "{}", spec.name);
        assert_eq!(spec.source, "builtin");
        let schema = &spec.input_schema;
        assert_eq!(
            schema["additionalProperties"],
            json!(false),
            "{}",
            spec.name
        );
        let props = schema["properties"].as_object().unwrap();
        for name in schema["required"].as_array().into_iter().flatten() {
            assert!(
                props.contains_key(name.as_str().unwrap()),
                "{}: {name}",
                spec.name
            );
        }
        let takes_key = props.get("idempotency_key").map(|p| p["type"].clone());
        let expected = (spec.risk != Risk::Read).then(|| Value::from("string"));
        assert_eq!(takes_key, expected, "{}", spec.name);
        assert!(
            spec.description.contains("Do not use") || spec.description.contains("use "),
            "{}",
            spec.name
        );
    }
}

#[test]
fn the_shell_timeout_bound_follows_the_options() {
    let dir = tempfile::tempdir().unwrap();
    let ws = Arc::new(Workspace::new(dir.path(), Vec::new()).unwrap());
    let mut opts = BuiltinOptions::default();
    opts.shell.max_timeout = std::time::Duration::from_secs(30);
    let tools = builtin_tools(ws, &opts);
    let shell = tools.iter().find(|t| t.spec().name == "shell").unwrap();
    assert_eq!(
        shell.spec().input_schema["properties"]["timeout_secs"],
        json!({
            "type": "integer",
            "minimum": 1,
            "maximum": 30,
            "description": "Kill the command after this many seconds."
        })
    );
}
