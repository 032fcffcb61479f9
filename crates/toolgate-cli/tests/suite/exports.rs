//! `toolgate tools export`: each of the five formats is JSON in its provider's shape, built
//! from the same specs `tools show` prints; a role exports only the tools it may call.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::harness::Env;

const FORMATS: [&str; 5] = [
    "openai-chat",
    "openai-responses",
    "anthropic",
    "mcp",
    "gemini",
];
const ALL_TOOLS: [&str; 7] = [
    "edit_file",
    "list_dir",
    "read_file",
    "read_result",
    "search_files",
    "shell",
    "write_file",
];

fn export(env: &Env, role: Option<&str>, format: &str) -> Value {
    let mut args = Vec::new();
    if let Some(role) = role {
        args.extend(["--role", role]);
    }
    args.extend(["tools", "export", "--format", format]);
    let run = env.run(&args);
    run.assert_code(0);
    run.json()
}

/// The tool definitions in an export (Gemini nests them in one `functionDeclarations`).
fn definitions(format: &str, exported: &Value) -> Vec<Value> {
    let list = exported.as_array().expect("an array").clone();
    if format == "gemini" {
        assert_eq!(list.len(), 1, "one declarations object: {exported}");
        let obj = list[0].as_object().expect("an object");
        assert_eq!(obj.keys().collect::<Vec<_>>(), vec!["functionDeclarations"]);
        return obj["functionDeclarations"]
            .as_array()
            .expect("declarations")
            .clone();
    }
    list
}

fn name_of(format: &str, def: &Value) -> String {
    let name = if format == "openai-chat" {
        &def["function"]["name"]
    } else {
        &def["name"]
    };
    name.as_str().expect("a name").to_owned()
}

fn keys(v: &Value) -> BTreeSet<&str> {
    v.as_object()
        .map(|m| m.keys().map(String::as_str).collect())
        .unwrap_or_default()
}

/// The definition `format` must hold for `spec` (Gemini: only the key shape; its schema is
/// rewritten to the OpenAPI subset and is golden-tested in toolgate-protocol).
fn check_shape(format: &str, spec: &Value, def: &Value) {
    let (name, description, schema) = (&spec["name"], &spec["description"], &spec["input_schema"]);
    match format {
        "openai-chat" => assert_eq!(
            def,
            &json!({"type": "function",
                    "function": {"name": name, "description": description, "parameters": schema}})
        ),
        "openai-responses" => {
            assert!(def["strict"].is_boolean(), "{def}");
            assert_eq!(
                def,
                &json!({"type": "function", "name": name, "description": description,
                        "parameters": schema, "strict": def["strict"]})
            );
        }
        "anthropic" => assert_eq!(
            def,
            &json!({"name": name, "description": description, "input_schema": schema})
        ),
        "mcp" => {
            assert_eq!(
                (&def["name"], &def["description"], &def["inputSchema"]),
                (name, description, schema)
            );
            let allowed: BTreeSet<&str> = [
                "name",
                "title",
                "description",
                "inputSchema",
                "outputSchema",
                "annotations",
            ]
            .into();
            assert!(keys(def).is_subset(&allowed), "{def}");
        }
        "gemini" => {
            assert_eq!(keys(def), ["description", "name", "parameters"].into());
            assert_eq!((&def["name"], &def["description"]), (name, description));
            assert_eq!(def["parameters"]["type"], json!("object"));
        }
        other => panic!("no shape for {other}"),
    }
}

#[test]
fn all_five_formats_have_their_provider_shape() {
    let env = Env::new();
    let specs: Vec<Value> = ALL_TOOLS
        .iter()
        .map(|name| {
            let run = env.run(&["tools", "show", name, "--json"]);
            run.assert_code(0);
            run.json()
        })
        .collect();
    for format in FORMATS {
        let exported = export(&env, None, format);
        let defs = definitions(format, &exported);
        let names: Vec<String> = defs.iter().map(|d| name_of(format, d)).collect();
        assert_eq!(names, ALL_TOOLS, "{format}");
        for (spec, def) in specs.iter().zip(&defs) {
            check_shape(format, spec, def);
        }
    }
}

#[test]
fn an_unknown_format_lists_the_formats() {
    let env = Env::new();
    let run = env.run(&["tools", "export", "--format", "openai"]);
    run.assert_code(1);
    assert_eq!(
        run.stderr,
        "toolgate: error: unknown export format `openai` (expected one of: openai-chat, \
         openai-responses, anthropic, mcp, gemini)\n"
    );
    assert_eq!(run.stdout, "");
}

#[test]
fn a_role_exports_only_its_allowed_tools() {
    let env = Env::with_config("[roles.reader]\ntools = [\"read_*\", \"list_dir\"]\n");
    for format in FORMATS {
        let exported = export(&env, Some("reader"), format);
        let names: Vec<String> = definitions(format, &exported)
            .iter()
            .map(|d| name_of(format, d))
            .collect();
        assert_eq!(names, ["list_dir", "read_file", "read_result"], "{format}");
    }
    let listed = env.run(&["--role", "reader", "tools", "list", "--json"]);
    listed.assert_code(0);
    let names: Vec<Value> = listed
        .json()
        .as_array()
        .expect("a list")
        .iter()
        .map(|t| t["name"].clone())
        .collect();
    assert_eq!(
        names,
        [json!("list_dir"), json!("read_file"), json!("read_result")]
    );
}
