//! `read_file`: a window of lines from a text file, or a fingerprint of a binary one.
//!
//! Output, text file:
//! `{path, content, start_line, lines_returned, total_lines, truncated, encoding}` —
//! `content` is the window's exact text (line terminators kept, no line numbers);
//! `total_lines` is `null` when the file is over the read limit (it is not scanned to the
//! end); `truncated` is true when the file goes on after the window; `encoding` is `utf-8`,
//! or `lossy-utf8` when invalid bytes were replaced by U+FFFD.
//!
//! Output, binary file (a NUL byte in the first 8 KiB): `{path, binary: true, size, sha256}`
//! with no content; `sha256` is `null` for a file over the read limit.
//!
//! The file is streamed: lines before the window are skipped without being kept, and the
//! window stops at `limit` lines or the byte limit, whichever comes first.

use std::io::{self, BufRead, BufReader, Cursor, Read};
use std::sync::Arc;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use toolgate_core::{Tool, ToolContext, ToolError};
use toolgate_protocol::{Annotations, Risk, ToolOutput, ToolSpec};

use super::regular::{Opened, SNIFF_LEN, looks_binary, open_regular, too_large};
use crate::Workspace;
use crate::args::{decode, run_blocking};

const NAME: &str = "read_file";
const DEFAULT_LIMIT: u64 = 2000;

/// Reads a window of a text file inside the workspace.
#[derive(Debug)]
pub struct ReadFileTool {
    ws: Arc<Workspace>,
    max_read_bytes: u64,
    spec: ToolSpec,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadArgs {
    path: String,
    offset: Option<u64>,
    limit: Option<u64>,
}

impl ReadFileTool {
    /// `max_read_bytes` bounds both the file size read whole and one window's bytes.
    pub fn new(ws: Arc<Workspace>, max_read_bytes: u64) -> Self {
        let spec = ToolSpec::new(
            NAME,
            "Read a text file in the workspace, returning its exact content for a window of \
             lines (default: the first 2000) plus the total line count. Use offset/limit to \
             page through long files. Use this before edit_file so that old_string matches \
             the file exactly. Do not use it to find which file contains something (use \
             search_files) or to see what is in a directory (use list_dir). Binary files \
             return only their size and SHA-256.",
            json!({
                "type": "object",
                "properties": {
                    "path": {
                        "type": "string",
                        "minLength": 1,
                        "description": "File path relative to the workspace root, e.g. `src/main.rs`."
                    },
                    "offset": {
                        "type": "integer",
                        "minimum": 1,
                        "description": "1-based line to start at (default 1)."
                    },
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "description": "Maximum number of lines to return (default 2000)."
                    }
                },
                "required": ["path"],
                "additionalProperties": false
            }),
        )
        .with_risk(Risk::Read)
        .with_annotations(Annotations {
            title: Some("Read file".to_owned()),
            read_only_hint: Some(true),
            open_world_hint: Some(false),
            ..Annotations::default()
        })
        .with_tags(["files"]);
        ReadFileTool {
            ws,
            max_read_bytes,
            spec,
        }
    }
}

#[async_trait]
impl Tool for ReadFileTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn policy_paths(&self, args: &Value) -> Option<Vec<String>> {
        let args: ReadArgs = decode(NAME, args).ok()?;
        let resolved = self.ws.resolve_existing(&args.path).ok()?;
        Some(vec![self.ws.relative(&resolved)])
    }

    fn check(&self, args: &Value, _ctx: &ToolContext) -> Result<(), ToolError> {
        let args: ReadArgs = decode(NAME, args)?;
        let resolved = self.ws.resolve_existing(&args.path)?;
        open_regular(&self.ws, &resolved, &self.ws.relative(&resolved)).map(drop)
    }

    async fn call(&self, args: Value, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let args: ReadArgs = decode(NAME, &args)?;
        let ws = Arc::clone(&self.ws);
        let max = self.max_read_bytes;
        run_blocking(move || read(&ws, &args, max))
            .await
            .map(ToolOutput::json)
    }
}

fn read(ws: &Workspace, args: &ReadArgs, max: u64) -> Result<Value, ToolError> {
    let resolved = ws.resolve_existing(&args.path)?;
    let rel = ws.relative(&resolved);
    let Opened { mut file, meta, .. } = open_regular(ws, &resolved, &rel)?;
    let size = meta.len();
    let io_err = |e: io::Error| ToolError::failed(format!("cannot read `{rel}`: {e}"));

    let mut head = Vec::with_capacity(SNIFF_LEN);
    (&mut file)
        .take(SNIFF_LEN as u64)
        .read_to_end(&mut head)
        .map_err(io_err)?;
    if looks_binary(&head) {
        let sha256 = if size <= max {
            Some(sha256_of(Cursor::new(&head).chain(file)).map_err(io_err)?)
        } else {
            None
        };
        return Ok(json!({"path": rel, "binary": true, "size": size, "sha256": sha256}));
    }
    let mut reader = BufReader::with_capacity(64 * 1024, Cursor::new(head).chain(file));
    if size > max && args.offset.is_none() && args.limit.is_none() {
        return Err(too_large(
            &rel,
            size,
            max,
            "read a window with offset and limit, or find the lines you need with search_files",
        ));
    }

    let offset = args.offset.unwrap_or(1);
    if offset == 0 {
        return Err(ToolError::InvalidArguments(
            "offset is 1-based; use 1 for the first line".to_owned(),
        ));
    }
    let limit = args.limit.unwrap_or(DEFAULT_LIMIT);
    if limit == 0 {
        return Err(ToolError::InvalidArguments(
            "limit must be at least 1".to_owned(),
        ));
    }

    let skipped = skip_lines(&mut reader, offset - 1).map_err(io_err)?;
    let at_end = reader.fill_buf().map_err(io_err)?.is_empty();
    if at_end && offset > 1 {
        return Err(ToolError::InvalidArguments(format!(
            "offset {offset} is past the end of `{rel}`, which has {skipped} lines"
        )));
    }
    let window = take_lines(&mut reader, limit, max).map_err(io_err)?;
    let more = window.cut || !reader.fill_buf().map_err(io_err)?.is_empty();
    let total_lines = if size <= max {
        let rest = count_lines(&mut reader, !window.mid_line).map_err(io_err)?;
        Some(skipped + window.lines + rest)
    } else {
        None
    };
    let (content, encoding) = match String::from_utf8(window.bytes) {
        Ok(text) => (text, "utf-8"),
        Err(e) => (
            String::from_utf8_lossy(e.as_bytes()).into_owned(),
            "lossy-utf8",
        ),
    };
    Ok(json!({
        "path": rel,
        "content": content,
        "start_line": offset,
        "lines_returned": window.lines,
        "total_lines": total_lines,
        "truncated": more,
        "encoding": encoding,
    }))
}

fn sha256_of(mut input: impl Read) -> io::Result<String> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = input.read(&mut buf)?;
        if n == 0 {
            return Ok(hex::encode(hasher.finalize()));
        }
        hasher.update(&buf[..n]);
    }
}

/// Skips up to `n` lines (a line ends at `\n` or at the end of the file); returns how many.
fn skip_lines(reader: &mut impl BufRead, n: u64) -> io::Result<u64> {
    let mut skipped = 0;
    let mut in_line = false;
    while skipped < n {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok(skipped + u64::from(in_line));
        }
        match buf.iter().position(|&b| b == b'\n') {
            Some(i) => {
                reader.consume(i + 1);
                skipped += 1;
                in_line = false;
            }
            None => {
                let len = buf.len();
                reader.consume(len);
                in_line = true;
            }
        }
    }
    Ok(skipped)
}

/// The lines of one window.
#[derive(Debug, Default)]
struct Window {
    bytes: Vec<u8>,
    lines: u64,
    /// The byte limit stopped the window early.
    cut: bool,
    /// The window ends inside a line (only when a single line exceeds the byte limit).
    mid_line: bool,
}

/// Takes up to `limit` whole lines and at most `max_bytes` bytes. A first line longer than
/// `max_bytes` is returned cut; otherwise the window ends at a line boundary.
fn take_lines(reader: &mut impl BufRead, limit: u64, max_bytes: u64) -> io::Result<Window> {
    let max_bytes = usize::try_from(max_bytes).unwrap_or(usize::MAX);
    let mut w = Window::default();
    let mut line_start = 0;
    while w.lines < limit {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            if w.bytes.len() > line_start {
                w.lines += 1;
            }
            return Ok(w);
        }
        let newline = buf.iter().position(|&b| b == b'\n');
        let take = newline.map_or(buf.len(), |i| i + 1);
        if w.bytes.len() + take > max_bytes {
            w.cut = true;
            if line_start == 0 {
                let room = max_bytes - w.bytes.len();
                w.bytes.extend_from_slice(&buf[..room]);
                reader.consume(room);
                w.lines = 1;
                w.mid_line = true;
            } else {
                w.bytes.truncate(line_start);
            }
            return Ok(w);
        }
        w.bytes.extend_from_slice(&buf[..take]);
        reader.consume(take);
        if newline.is_some() {
            w.lines += 1;
            line_start = w.bytes.len();
        }
    }
    Ok(w)
}

/// Counts the lines that start in the rest of the stream; `at_line_start` says whether the
/// next byte begins a new line.
fn count_lines(reader: &mut impl BufRead, mut at_line_start: bool) -> io::Result<u64> {
    let mut lines = 0u64;
    loop {
        let buf = reader.fill_buf()?;
        let Some((&last, before_last)) = buf.split_last() else {
            return Ok(lines);
        };
        let breaks = before_last.iter().filter(|&&b| b == b'\n').count() as u64;
        lines += u64::from(at_line_start) + breaks;
        at_line_start = last == b'\n';
        let len = buf.len();
        reader.consume(len);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_lines_like_an_editor() {
        let count = |s: &str| count_lines(&mut s.as_bytes(), true).unwrap();
        assert_eq!(
            [
                count(""),
                count("a"),
                count("a\n"),
                count("a\nb"),
                count("\n\n")
            ],
            [0, 1, 1, 2, 2]
        );
    }

    #[test]
    fn a_window_ends_at_a_line_boundary_unless_one_line_is_too_long() {
        let w = take_lines(&mut "ab\ncd\nef\n".as_bytes(), 10, 7).unwrap();
        assert_eq!(
            (w.bytes.as_slice(), w.lines, w.cut, w.mid_line),
            (&b"ab\ncd\n"[..], 2, true, false)
        );
        let w = take_lines(&mut "abcdef\n".as_bytes(), 10, 4).unwrap();
        assert_eq!(
            (w.bytes.as_slice(), w.lines, w.cut, w.mid_line),
            (&b"abcd"[..], 1, true, true)
        );
        let w = take_lines(&mut "a\nb".as_bytes(), 10, 100).unwrap();
        assert_eq!(
            (w.bytes.as_slice(), w.lines, w.cut),
            (&b"a\nb"[..], 2, false)
        );
    }

    #[test]
    fn skipping_counts_a_final_unterminated_line() {
        assert_eq!(skip_lines(&mut "a\nb".as_bytes(), 5).unwrap(), 2);
        assert_eq!(skip_lines(&mut "a\nb\nc".as_bytes(), 1).unwrap(), 1);
    }
}
