//! `edit_file`: replace an exact string in a UTF-8 text file, atomically.
//!
//! Output: `{path, replacements}`.
//!
//! The match must be unique unless `replace_all` is set, so that a model that quoted too
//! little context never edits the wrong spot. Binary and non-UTF-8 files are refused:
//! rewriting them through a lossy decode would corrupt them.

use std::io::Read;
use std::os::fd::AsFd;
use std::os::unix::fs::PermissionsExt;
use std::sync::Arc;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use toolgate_core::{Tool, ToolContext, ToolError};
use toolgate_protocol::{Annotations, Risk, ToolOutput, ToolSpec};

use super::atomic::replace_file;
use super::beneath::open_parent;
use super::regular::{Opened, looks_binary, open_regular, too_large};
use super::write::existing_mode;
use crate::Workspace;
use crate::args::{decode, idempotency_key_schema, run_blocking};

const NAME: &str = "edit_file";

/// Replaces exact text in an existing file inside the workspace.
#[derive(Debug)]
pub struct EditFileTool {
    ws: Arc<Workspace>,
    max_read_bytes: u64,
    spec: ToolSpec,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct EditArgs {
    path: String,
    old_string: String,
    new_string: String,
    #[serde(default)]
    replace_all: bool,
    /// Acted on by the gateway (R-EXE-3); accepted and ignored here.
    #[serde(default, rename = "idempotency_key")]
    _idempotency_key: Option<String>,
}

impl EditFileTool {
    /// Files over `max_read_bytes` are refused.
    pub fn new(ws: Arc<Workspace>, max_read_bytes: u64) -> Self {
        let spec = ToolSpec::new(
            NAME,
            "Replace an exact piece of text in an existing UTF-8 text file in the workspace. \
             old_string must match the file exactly (whitespace and indentation included) \
             and, unless replace_all is true, exactly once: include enough surrounding lines \
             to make it unique. Read the file with read_file first. Use this for targeted \
             changes; use write_file to create a file or rewrite it completely. Cannot edit \
             binary or non-UTF-8 files.",
            json!({
                "type": "object",
                "properties": {
                    "path": {
                        "type": "string",
                        "minLength": 1,
                        "description": "File path relative to the workspace root."
                    },
                    "old_string": {
                        "type": "string",
                        "minLength": 1,
                        "description": "Exact text to replace."
                    },
                    "new_string": {
                        "type": "string",
                        "description": "Replacement text; must differ from old_string."
                    },
                    "replace_all": {
                        "type": "boolean",
                        "default": false,
                        "description": "Replace every occurrence instead of requiring exactly one."
                    },
                    "idempotency_key": idempotency_key_schema()
                },
                "required": ["path", "old_string", "new_string"],
                "additionalProperties": false
            }),
        )
        .with_risk(Risk::Write)
        .with_annotations(Annotations {
            title: Some("Edit file".to_owned()),
            read_only_hint: Some(false),
            destructive_hint: Some(false),
            idempotent_hint: Some(false),
            open_world_hint: Some(false),
        })
        .with_tags(["files"]);
        EditFileTool {
            ws,
            max_read_bytes,
            spec,
        }
    }
}

#[async_trait]
impl Tool for EditFileTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn policy_paths(&self, args: &Value) -> Option<Vec<String>> {
        let args: EditArgs = decode(NAME, args).ok()?;
        let resolved = self.ws.resolve_existing(&args.path).ok()?;
        Some(vec![self.ws.relative(&resolved)])
    }

    fn check(&self, args: &Value, _ctx: &ToolContext) -> Result<(), ToolError> {
        let args: EditArgs = decode(NAME, args)?;
        check_strings(&args)?;
        let target = self.ws.resolve_existing(&args.path)?;
        let at = open_parent(&self.ws, &target, &args.path)?;
        existing_mode(at.dir.as_fd(), &at.name, &args.path).map(drop)
    }

    async fn call(&self, args: Value, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let args: EditArgs = decode(NAME, &args)?;
        let ws = Arc::clone(&self.ws);
        let max = self.max_read_bytes;
        run_blocking(move || edit(&ws, &args, max))
            .await
            .map(ToolOutput::json)
    }
}

fn check_strings(args: &EditArgs) -> Result<(), ToolError> {
    if args.old_string.is_empty() {
        return Err(ToolError::InvalidArguments(
            "old_string is empty; quote the exact text to replace".to_owned(),
        ));
    }
    if args.old_string == args.new_string {
        return Err(ToolError::InvalidArguments(
            "old_string and new_string are identical; nothing would change".to_owned(),
        ));
    }
    Ok(())
}

fn edit(ws: &Workspace, args: &EditArgs, max: u64) -> Result<Value, ToolError> {
    check_strings(args)?;
    let rel = args.path.as_str();
    let target = ws.resolve_existing(rel)?;
    let Opened { at, file, meta } = open_regular(ws, &target, rel)?;
    if meta.len() > max {
        return Err(too_large(rel, meta.len(), max, "edit_file cannot edit it"));
    }
    let mut bytes = Vec::new();
    file.take(max.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| ToolError::failed(format!("cannot read `{rel}`: {e}")))?;
    if looks_binary(&bytes) {
        return Err(ToolError::InvalidArguments(format!(
            "`{rel}` is a binary file; edit_file only edits UTF-8 text"
        )));
    }
    let text = String::from_utf8(bytes).map_err(|_| {
        ToolError::InvalidArguments(format!(
            "`{rel}` is not valid UTF-8; edit_file only edits UTF-8 text (use write_file to \
             replace it whole)"
        ))
    })?;

    let found = text.matches(args.old_string.as_str()).count();
    let updated = match found {
        0 => {
            return Err(ToolError::InvalidArguments(format!(
                "old_string not found in {rel}"
            )));
        }
        1 => text.replacen(args.old_string.as_str(), &args.new_string, 1),
        _ if args.replace_all => text.replace(args.old_string.as_str(), &args.new_string),
        n => {
            return Err(ToolError::InvalidArguments(format!(
                "old_string matches {n} times in {rel}; include more context to make it \
                 unique, or set replace_all"
            )));
        }
    };
    // The bits of the inode read (and refused if hard-linked) above, not of whatever the
    // name points to now: the rename replaces the name either way.
    let mode = meta.permissions().mode() & 0o7777;
    replace_file(at.dir.as_fd(), &at.name, updated.as_bytes(), Some(mode))
        .map_err(|e| ToolError::failed(format!("cannot write `{rel}`: {e}")))?;
    Ok(json!({"path": ws.relative(&target), "replacements": found}))
}
