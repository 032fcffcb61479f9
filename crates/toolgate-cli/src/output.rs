//! Printing for humans and scripts: `--json` prints exactly one JSON document on stdout;
//! otherwise aligned columns. Diagnostics go to stderr.
//!
//! Every line to stdout goes through [`write_stdout`]. A closed stdout (the reader quit early:
//! `toolgate tools list --json | grep -q x`, `| head`) is not an error: printing stops
//! quietly and the command ends with its own exit status, as a filter's writer should; no
//! panic, nothing on stderr. Any other write failure (a full disk under a redirection) is
//! remembered and reported once by [`finish`], which turns the exit status into 1.

#![allow(clippy::print_stderr)]

use std::io::{ErrorKind, Write};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::Serialize;

/// Set once stdout has refused a write; nothing more is written.
static STDOUT_GONE: AtomicBool = AtomicBool::new(false);
/// The first write failure other than a closed pipe.
static WRITE_ERROR: Mutex<Option<String>> = Mutex::new(None);

/// Writes `text` to stdout and flushes it; see the module docs for a failing stdout.
pub fn write_stdout(text: &str) {
    if STDOUT_GONE.load(Ordering::Relaxed) {
        return;
    }
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        STDOUT_GONE.store(true, Ordering::Relaxed);
        if e.kind() != ErrorKind::BrokenPipe {
            let mut first = WRITE_ERROR
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            first.get_or_insert_with(|| e.to_string());
        }
    }
}

/// The exit status after the command returned `code`: 1 if stdout failed for a reason
/// other than a closed pipe (said on stderr), else `code`.
pub fn finish(code: i32) -> i32 {
    let failed = WRITE_ERROR
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take();
    match failed {
        Some(e) => {
            // stderr may be closed as well; there is no one left to tell then.
            let _ = writeln!(std::io::stderr(), "toolgate: error: writing to stdout: {e}");
            1
        }
        None => code,
    }
}

pub fn json<T: Serialize>(value: &T) -> anyhow::Result<()> {
    let mut text = serde_json::to_string_pretty(value)?;
    text.push('\n');
    write_stdout(&text);
    Ok(())
}

pub fn line(text: &str) {
    write_stdout(&format!("{text}\n"));
}

/// Prints rows as aligned columns; the last column is never padded.
pub fn table(header: &[&str], rows: &[Vec<String>]) {
    let cols = header.len();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate().take(cols) {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    let render = |cells: Vec<&str>| {
        let mut out = String::new();
        for (i, c) in cells.iter().enumerate() {
            if i + 1 == cells.len() {
                out.push_str(c);
            } else {
                out.push_str(&format!("{c:<w$}  ", w = widths[i]));
            }
        }
        out.trim_end().to_owned()
    };
    let mut text = render(header.to_vec());
    text.push('\n');
    for row in rows {
        text.push_str(&render(row.iter().map(String::as_str).collect()));
        text.push('\n');
    }
    write_stdout(&text);
}

/// First line of `text`, cut to `max` characters.
pub fn short(text: &str, max: usize) -> String {
    let first = text.lines().next().unwrap_or("");
    if first.chars().count() <= max {
        first.to_owned()
    } else {
        let cut: String = first.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}
