//! `write_file`: create or replace a whole file, atomically.
//!
//! Output: `{path, bytes_written, created}` — `created` is false when an existing file was
//! replaced (its permission bits are kept).
//!
//! Sequence: resolve for write → refuse directories and non-regular files → create missing
//! parent directories (if allowed) → resolve again, so a directory swapped for a symlink
//! meanwhile is caught → temp file + rename.

use std::fs;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use toolgate_core::{Tool, ToolContext, ToolError};
use toolgate_protocol::{Annotations, Risk, ToolOutput, ToolSpec};

use super::atomic::replace_file;
use crate::Workspace;
use crate::args::{decode, idempotency_key_schema, run_blocking};

const NAME: &str = "write_file";

/// Creates or overwrites a file inside the workspace.
#[derive(Debug)]
pub struct WriteFileTool {
    ws: Arc<Workspace>,
    spec: ToolSpec,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WriteArgs {
    path: String,
    content: String,
    #[serde(default = "yes")]
    create_dirs: bool,
    /// Acted on by the gateway (R-EXE-3); accepted and ignored here.
    #[serde(default, rename = "idempotency_key")]
    _idempotency_key: Option<String>,
}

fn yes() -> bool {
    true
}

impl WriteFileTool {
    pub fn new(ws: Arc<Workspace>) -> Self {
        let spec = ToolSpec::new(
            NAME,
            "Create a file, or replace an existing file's whole content, in the workspace. \
             The write is atomic and keeps an existing file's permissions; missing parent \
             directories are created unless create_dirs is false. Use this for new files or \
             complete rewrites. To change part of an existing file use edit_file instead, \
             which does not risk dropping content you did not re-send.",
            json!({
                "type": "object",
                "properties": {
                    "path": {
                        "type": "string",
                        "minLength": 1,
                        "description": "File path relative to the workspace root."
                    },
                    "content": {
                        "type": "string",
                        "description": "The complete new content of the file."
                    },
                    "create_dirs": {
                        "type": "boolean",
                        "default": true,
                        "description": "Create missing parent directories (default true)."
                    },
                    "idempotency_key": idempotency_key_schema()
                },
                "required": ["path", "content"],
                "additionalProperties": false
            }),
        )
        .with_risk(Risk::Write)
        .with_annotations(Annotations {
            title: Some("Write file".to_owned()),
            read_only_hint: Some(false),
            destructive_hint: Some(true),
            idempotent_hint: Some(true),
            open_world_hint: Some(false),
        })
        .with_tags(["files"]);
        WriteFileTool { ws, spec }
    }
}

#[async_trait]
impl Tool for WriteFileTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn check(&self, args: &Value, _ctx: &ToolContext) -> Result<(), ToolError> {
        let args: WriteArgs = decode(NAME, args)?;
        let target = self.ws.resolve_for_write(&args.path)?;
        existing_mode(&target, &args.path).map(drop)
    }

    async fn call(&self, args: Value, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let args: WriteArgs = decode(NAME, &args)?;
        let ws = Arc::clone(&self.ws);
        run_blocking(move || write(&ws, &args))
            .await
            .map(ToolOutput::json)
    }
}

fn write(ws: &Workspace, args: &WriteArgs) -> Result<Value, ToolError> {
    let rel = args.path.as_str();
    let target = ws.resolve_for_write(rel)?;
    let mode = existing_mode(&target, rel)?;
    let parent = target.parent().ok_or_else(|| {
        ToolError::InvalidArguments(format!("`{rel}` is the workspace root, not a file"))
    })?;
    if !parent.is_dir() {
        if !args.create_dirs {
            return Err(ToolError::InvalidArguments(format!(
                "the parent directory of `{rel}` does not exist; create it first or set \
                 create_dirs to true"
            )));
        }
        fs::create_dir_all(parent).map_err(|e| {
            ToolError::failed(format!(
                "cannot create the parent directories of `{rel}`: {e}"
            ))
        })?;
    }
    let target = recheck(ws, rel, &target)?;
    replace_file(&target, args.content.as_bytes(), mode)
        .map_err(|e| ToolError::failed(format!("cannot write `{rel}`: {e}")))?;
    Ok(json!({
        "path": ws.relative(&target),
        "bytes_written": args.content.len(),
        "created": mode.is_none(),
    }))
}

/// Resolves `rel` again after directories were created; it must land where it did before.
pub(super) fn recheck(
    ws: &Workspace,
    rel: &str,
    before: &Path,
) -> Result<std::path::PathBuf, ToolError> {
    let now = ws.resolve_for_write(rel)?;
    if now != before {
        return Err(ToolError::PolicyDenied(format!(
            "`{rel}` changed while it was being written (a path component was replaced); \
             refusing to write"
        )));
    }
    Ok(now)
}

/// The permission bits of the file at `target`, `None` when there is none yet. Refuses
/// directories and anything else that is not a regular file.
pub(super) fn existing_mode(target: &Path, rel: &str) -> Result<Option<u32>, ToolError> {
    match target.symlink_metadata() {
        Ok(meta) if meta.is_file() => Ok(Some(meta.permissions().mode() & 0o7777)),
        Ok(meta) if meta.is_dir() => Err(ToolError::InvalidArguments(format!(
            "`{rel}` is a directory; write_file only writes files"
        ))),
        Ok(_) => Err(ToolError::InvalidArguments(format!(
            "`{rel}` is not a regular file (a device, socket or FIFO)"
        ))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(ToolError::failed(format!("cannot stat `{rel}`: {e}"))),
    }
}
