//! `search_files`: find lines by regex and/or files by glob under a workspace directory.
//!
//! Output with `pattern`: `{matches: [{path, line, text}], files_searched, truncated}` —
//! `line` is 1-based, `text` the matching line without its terminator, cut to 500
//! characters (marked with `…`). Output with `glob` only: `{files: [path], truncated}`.
//! Paths are workspace-relative and come in path order.
//!
//! The walk never follows symlinks, leaves out protected paths and does not enter `.git`.
//! Only regular files are considered; with `pattern`, binary files (a NUL byte in the first
//! 8 KiB), files over the read limit and unreadable files are skipped.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Cursor, Read};
use std::ops::ControlFlow;
use std::os::fd::{AsFd, BorrowedFd};
use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use globset::{GlobBuilder, GlobMatcher};
use regex::bytes::{Regex, RegexBuilder};
use serde::Deserialize;
use serde_json::{Value, json};
use toolgate_core::{CancellationToken, Tool, ToolContext, ToolError};
use toolgate_protocol::{Annotations, Risk, ToolOutput, ToolSpec};

use super::beneath::{open_dir, open_parent};
use super::regular::{SNIFF_LEN, looks_binary, open_regular_at};
use super::walk::{EntryKind, WalkEntry, WalkScope, walk};
use crate::Workspace;
use crate::args::{decode, run_blocking};

const NAME: &str = "search_files";
const DEFAULT_MAX_RESULTS: usize = 200;
const MAX_RESULTS_LIMIT: u64 = 10_000;
/// Longest line text returned, in characters.
const LINE_TEXT_CHARS: usize = 500;

/// Searches file contents and names inside the workspace.
#[derive(Debug)]
pub struct SearchFilesTool {
    ws: Arc<Workspace>,
    max_read_bytes: u64,
    spec: ToolSpec,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    pattern: Option<String>,
    glob: Option<String>,
    #[serde(default = "dot")]
    path: String,
    #[serde(default)]
    case_insensitive: bool,
    max_results: Option<u64>,
}

fn dot() -> String {
    ".".to_owned()
}

impl SearchFilesTool {
    /// Files over `max_read_bytes` are not searched for `pattern`.
    pub fn new(ws: Arc<Workspace>, max_read_bytes: u64) -> Self {
        let spec = ToolSpec::new(
            NAME,
            "Search the workspace: with pattern, find the lines matching a regular expression \
             (Rust regex syntax) and return file, line number and text; with glob only, \
             find files whose path matches (e.g. `**/*.rs`; `*` does not cross `/`). Give \
             both to search only matching files. Use this to locate code or text before \
             reading or editing it. Do not use it to read a whole file (use read_file) or to \
             list one directory (use list_dir). Binary files and `.git` are skipped.",
            json!({
                "type": "object",
                "properties": {
                    "pattern": {
                        "type": "string",
                        "minLength": 1,
                        "description": "Regular expression matched against each line."
                    },
                    "glob": {
                        "type": "string",
                        "minLength": 1,
                        "description": "Glob over paths relative to `path`, e.g. `**/*.md`."
                    },
                    "path": {
                        "type": "string",
                        "minLength": 1,
                        "default": ".",
                        "description": "Directory (or file) to search, relative to the workspace root."
                    },
                    "case_insensitive": {
                        "type": "boolean",
                        "default": false,
                        "description": "Match pattern and glob ignoring case."
                    },
                    "max_results": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": MAX_RESULTS_LIMIT,
                        "default": DEFAULT_MAX_RESULTS,
                        "description": "Stop after this many matches or files (default 200)."
                    }
                },
                "additionalProperties": false
            }),
        )
        .with_risk(Risk::Read)
        .with_annotations(Annotations {
            title: Some("Search files".to_owned()),
            read_only_hint: Some(true),
            open_world_hint: Some(false),
            ..Annotations::default()
        })
        .with_tags(["files"]);
        SearchFilesTool {
            ws,
            max_read_bytes,
            spec,
        }
    }
}

#[async_trait]
impl Tool for SearchFilesTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn policy_paths(&self, args: &Value) -> Option<Vec<String>> {
        let args: SearchArgs = decode(NAME, args).ok()?;
        let resolved = self.ws.resolve_existing(&args.path).ok()?;
        Some(vec![self.ws.relative(&resolved)])
    }

    fn check(&self, args: &Value, _ctx: &ToolContext) -> Result<(), ToolError> {
        let args: SearchArgs = decode(NAME, args)?;
        Query::compile(&args)?;
        self.ws.resolve_existing(&args.path).map(drop)
    }

    async fn call(&self, args: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let args: SearchArgs = decode(NAME, &args)?;
        let ws = Arc::clone(&self.ws);
        let max_read = self.max_read_bytes;
        run_blocking(move || search(&ws, &args, max_read, &ctx.cancel))
            .await
            .map(ToolOutput::json)
    }
}

/// The compiled arguments.
struct Query {
    regex: Option<Regex>,
    glob: Option<GlobMatcher>,
    max_results: usize,
}

impl Query {
    fn compile(args: &SearchArgs) -> Result<Self, ToolError> {
        if args.pattern.is_none() && args.glob.is_none() {
            return Err(ToolError::InvalidArguments(
                "give pattern (to search file contents), glob (to find files by path), or both"
                    .to_owned(),
            ));
        }
        let max_results = match args.max_results {
            None => DEFAULT_MAX_RESULTS,
            Some(n @ 1..=MAX_RESULTS_LIMIT) => n as usize,
            Some(n) => {
                return Err(ToolError::InvalidArguments(format!(
                    "max_results must be between 1 and {MAX_RESULTS_LIMIT}, got {n}"
                )));
            }
        };
        let regex = args
            .pattern
            .as_deref()
            .map(|p| {
                RegexBuilder::new(p)
                    .case_insensitive(args.case_insensitive)
                    .build()
                    .map_err(|e| ToolError::InvalidArguments(format!("invalid regex: {e}")))
            })
            .transpose()?;
        let glob = args
            .glob
            .as_deref()
            .map(|g| {
                GlobBuilder::new(g)
                    .literal_separator(true)
                    .case_insensitive(args.case_insensitive)
                    .build()
                    .map(|g| g.compile_matcher())
                    .map_err(|e| ToolError::InvalidArguments(format!("invalid glob: {e}")))
            })
            .transpose()?;
        Ok(Query {
            regex,
            glob,
            max_results,
        })
    }
}

fn search(
    ws: &Workspace,
    args: &SearchArgs,
    max_read: u64,
    cancel: &CancellationToken,
) -> Result<Value, ToolError> {
    let query = Query::compile(args)?;
    let base = ws.resolve_existing(&args.path)?;
    let mut files = Vec::new();
    let mut matches = Vec::new();
    let mut files_searched = 0u64;
    let mut truncated = false;

    let mut visit = |entry: WalkEntry,
                     dir: BorrowedFd<'_>,
                     rel_to_base: &Path|
     -> Result<ControlFlow<()>, ToolError> {
        if entry.kind != EntryKind::File
            || query
                .glob
                .as_ref()
                .is_some_and(|g| !g.is_match(rel_to_base))
        {
            return Ok(ControlFlow::Continue(()));
        }
        let rel = ws.relative(&entry.path);
        let Some(regex) = &query.regex else {
            if files.len() == query.max_results {
                truncated = true;
                return Ok(ControlFlow::Break(()));
            }
            files.push(Value::String(rel));
            return Ok(ControlFlow::Continue(()));
        };
        if entry.size.is_some_and(|s| s > max_read) {
            return Ok(ControlFlow::Continue(()));
        }
        // Binary, unreadable and hard-linked files (or one swapped for a symlink mid-walk)
        // are skipped; one bad file must not sink the whole search.
        let Ok(Some(lines)) = matching_lines(dir, &entry.name, &rel, regex) else {
            return Ok(ControlFlow::Continue(()));
        };
        files_searched += 1;
        for (line, text) in lines {
            if matches.len() == query.max_results {
                truncated = true;
                return Ok(ControlFlow::Break(()));
            }
            matches.push(json!({"path": rel, "line": line, "text": text}));
        }
        Ok(ControlFlow::Continue(()))
    };

    if let Some(base_dir) = open_dir(ws, &base, &args.path)? {
        let scope = WalkScope { recursive: true };
        walk(ws, &base, base_dir, scope, cancel, |entry, dir| {
            let rel_to_base = entry
                .path
                .strip_prefix(&base)
                .unwrap_or(&entry.path)
                .to_owned();
            visit(entry, dir, &rel_to_base)
        })?;
    } else {
        let at = open_parent(ws, &base, &args.path)?;
        let entry = WalkEntry::stat(at.dir.as_fd(), &at.name, base.clone())
            .map_err(|e| ToolError::failed(format!("cannot stat `{}`: {e}", args.path)))?;
        let _single_file_done = visit(entry, at.dir.as_fd(), Path::new(&at.name))?;
    }

    Ok(match query.regex {
        Some(_) => {
            json!({"matches": matches, "files_searched": files_searched, "truncated": truncated})
        }
        None => json!({"files": files, "truncated": truncated}),
    })
}

/// The 1-based numbers and capped texts of the lines that match in the file `name` of
/// `dir`; `None` for a binary file.
fn matching_lines(
    dir: BorrowedFd<'_>,
    name: &OsStr,
    rel: &str,
    regex: &Regex,
) -> Result<Option<Vec<(u64, String)>>, ToolError> {
    let io_err = |e: std::io::Error| ToolError::failed(format!("cannot read `{rel}`: {e}"));
    let (mut file, _) = open_regular_at(dir, name, rel)?;
    let mut head = Vec::with_capacity(SNIFF_LEN);
    (&mut file)
        .take(SNIFF_LEN as u64)
        .read_to_end(&mut head)
        .map_err(io_err)?;
    if looks_binary(&head) {
        return Ok(None);
    }
    let mut reader = BufReader::new(Cursor::new(head).chain(file));
    let mut found = Vec::new();
    let mut line = Vec::new();
    let mut number = 0u64;
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line).map_err(io_err)? == 0 {
            return Ok(Some(found));
        }
        number += 1;
        let text = line.strip_suffix(b"\n").unwrap_or(&line);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        if regex.is_match(text) {
            found.push((number, cap_chars(&String::from_utf8_lossy(text))));
        }
    }
}

fn cap_chars(text: &str) -> String {
    match text.char_indices().nth(LINE_TEXT_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}
