//! `list_dir`: the entries of a workspace directory, optionally recursive.
//!
//! Output: `{path, entries: [{path, type, size}], truncated}` — entry paths are
//! workspace-relative, `type` is `file`, `dir`, `symlink` or `other`, `size` is the byte
//! length of a file and `null` otherwise. Entries are sorted by path, component-wise (a
//! directory's contents follow it directly). Symlinks are listed, never followed;
//! protected paths are left out; `.git` is listed but not entered.

use std::ops::ControlFlow;
use std::sync::Arc;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use toolgate_core::{CancellationToken, Tool, ToolContext, ToolError};
use toolgate_protocol::{Annotations, Risk, ToolOutput, ToolSpec};

use super::beneath::open_dir;
use super::walk::{WalkScope, walk};
use crate::Workspace;
use crate::args::{decode, run_blocking};

const NAME: &str = "list_dir";
const DEFAULT_MAX_ENTRIES: usize = 1000;
const MAX_ENTRIES_LIMIT: u64 = 100_000;

/// Lists a directory inside the workspace.
#[derive(Debug)]
pub struct ListDirTool {
    ws: Arc<Workspace>,
    spec: ToolSpec,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ListArgs {
    #[serde(default = "dot")]
    path: String,
    #[serde(default)]
    recursive: bool,
    max_entries: Option<u64>,
}

fn dot() -> String {
    ".".to_owned()
}

impl ListDirTool {
    pub fn new(ws: Arc<Workspace>) -> Self {
        let spec = ToolSpec::new(
            NAME,
            "List the files and directories in a workspace directory (default: the root), \
             with each entry's type and size; set recursive to include subdirectories. Use \
             this to explore the project layout. Do not use it to find files by name pattern \
             or content across the tree (use search_files) or to read a file (use read_file).",
            json!({
                "type": "object",
                "properties": {
                    "path": {
                        "type": "string",
                        "minLength": 1,
                        "default": ".",
                        "description": "Directory relative to the workspace root; `.` is the root."
                    },
                    "recursive": {
                        "type": "boolean",
                        "default": false,
                        "description": "Include the contents of subdirectories."
                    },
                    "max_entries": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": MAX_ENTRIES_LIMIT,
                        "default": DEFAULT_MAX_ENTRIES,
                        "description": "Stop after this many entries (default 1000)."
                    }
                },
                "additionalProperties": false
            }),
        )
        .with_risk(Risk::Read)
        .with_annotations(Annotations {
            title: Some("List directory".to_owned()),
            read_only_hint: Some(true),
            open_world_hint: Some(false),
            ..Annotations::default()
        })
        .with_tags(["files"]);
        ListDirTool { ws, spec }
    }
}

#[async_trait]
impl Tool for ListDirTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn policy_paths(&self, args: &Value) -> Option<Vec<String>> {
        let args: ListArgs = decode(NAME, args).ok()?;
        let resolved = self.ws.resolve_existing(&args.path).ok()?;
        Some(vec![self.ws.relative(&resolved)])
    }

    fn check(&self, args: &Value, _ctx: &ToolContext) -> Result<(), ToolError> {
        let args: ListArgs = decode(NAME, args)?;
        self.ws.resolve_existing(&args.path).map(drop)
    }

    async fn call(&self, args: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let args: ListArgs = decode(NAME, &args)?;
        let ws = Arc::clone(&self.ws);
        run_blocking(move || list(&ws, &args, &ctx.cancel))
            .await
            .map(ToolOutput::json)
    }
}

fn list(ws: &Workspace, args: &ListArgs, cancel: &CancellationToken) -> Result<Value, ToolError> {
    let max = match args.max_entries {
        None => DEFAULT_MAX_ENTRIES,
        Some(n @ 1..=MAX_ENTRIES_LIMIT) => n as usize,
        Some(n) => {
            return Err(ToolError::InvalidArguments(format!(
                "max_entries must be between 1 and {MAX_ENTRIES_LIMIT}, got {n}"
            )));
        }
    };
    let dir = ws.resolve_existing(&args.path)?;
    let Some(dir_fd) = open_dir(ws, &dir, &args.path)? else {
        return Err(ToolError::InvalidArguments(format!(
            "`{}` is not a directory; use read_file to read a file",
            args.path
        )));
    };
    let mut entries = Vec::new();
    let mut truncated = false;
    let scope = WalkScope {
        recursive: args.recursive,
    };
    walk(ws, &dir, dir_fd, scope, cancel, |entry, _| {
        if entries.len() == max {
            truncated = true;
            return Ok(ControlFlow::Break(()));
        }
        entries.push(json!({
            "path": ws.relative(&entry.path),
            "type": entry.kind.as_str(),
            "size": entry.size,
        }));
        Ok(ControlFlow::Continue(()))
    })?;
    Ok(json!({"path": ws.relative(&dir), "entries": entries, "truncated": truncated}))
}
