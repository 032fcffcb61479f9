//! `write_file`: create or replace a whole file, atomically.
//!
//! Output: `{path, bytes_written, created}` — `created` is false when an existing file was
//! replaced (its permission bits are kept).
//!
//! Sequence: resolve for write → open the parent directory beneath the root, making the
//! missing ones one at a time (if allowed) → refuse directories, non-regular and hard-linked
//! files → temp file + rename, both relative to that directory's descriptor. A directory
//! swapped for a symlink meanwhile fails the open instead of being followed.

use std::ffi::OsStr;
use std::os::fd::{AsFd, BorrowedFd};
use std::sync::Arc;

use rustix::fs::{AtFlags, FileType, statat};
use rustix::io::Errno;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use toolgate_core::{Tool, ToolContext, ToolError};
use toolgate_protocol::{Annotations, Risk, ToolOutput, ToolSpec};

use super::atomic::replace_file;
use super::beneath::{create_parent, open_parent_if_exists};
use super::regular::{became_symlink, deny_hard_links};
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

    fn policy_paths(&self, args: &Value) -> Option<Vec<String>> {
        let args: WriteArgs = decode(NAME, args).ok()?;
        let resolved = self.ws.resolve_for_write(&args.path).ok()?;
        Some(vec![self.ws.relative(&resolved)])
    }

    fn check(&self, args: &Value, _ctx: &ToolContext) -> Result<(), ToolError> {
        let args: WriteArgs = decode(NAME, args)?;
        let target = self.ws.resolve_for_write(&args.path)?;
        match open_parent_if_exists(&self.ws, &target, &args.path)? {
            Some(at) => existing_mode(at.dir.as_fd(), &at.name, &args.path).map(drop),
            None => Ok(()),
        }
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
    let at = match open_parent_if_exists(ws, &target, rel)? {
        Some(at) => at,
        None if args.create_dirs => create_parent(ws, &target, rel)?,
        None => {
            return Err(ToolError::InvalidArguments(format!(
                "the parent directory of `{rel}` does not exist; create it first or set \
                 create_dirs to true"
            )));
        }
    };
    let mode = existing_mode(at.dir.as_fd(), &at.name, rel)?;
    replace_file(at.dir.as_fd(), &at.name, args.content.as_bytes(), mode)
        .map_err(|e| ToolError::failed(format!("cannot write `{rel}`: {e}")))?;
    Ok(json!({
        "path": ws.relative(&target),
        "bytes_written": args.content.len(),
        "created": mode.is_none(),
    }))
}

/// The permission bits of the entry `name` of `dir`, `None` when there is none yet.
/// Refuses directories, anything else that is not a regular file, hard-linked files, and
/// a symlink (the checked path had none: one appeared since).
pub(super) fn existing_mode(
    dir: BorrowedFd<'_>,
    name: &OsStr,
    rel: &str,
) -> Result<Option<u32>, ToolError> {
    let st = match statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => st,
        Err(Errno::NOENT) => return Ok(None),
        Err(e) => return Err(ToolError::failed(format!("cannot stat `{rel}`: {e}"))),
    };
    match FileType::from_raw_mode(st.st_mode) {
        FileType::RegularFile => {
            deny_hard_links(rel, st.st_nlink)?;
            Ok(Some(st.st_mode & 0o7777))
        }
        FileType::Directory => Err(ToolError::InvalidArguments(format!(
            "`{rel}` is a directory; write_file only writes files"
        ))),
        FileType::Symlink => Err(became_symlink(rel)),
        _ => Err(ToolError::InvalidArguments(format!(
            "`{rel}` is not a regular file (a device, socket or FIFO)"
        ))),
    }
}
