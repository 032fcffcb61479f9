//! Printing for humans and scripts: `--json` prints exactly one JSON document on stdout;
//! otherwise aligned columns. Diagnostics go to stderr.
//!
//! Every line to stdout goes through [`write_stdout`]. A closed stdout (the reader quit early:
//! `toolgate tools list --json | grep -q x`, `| head`) is not an error: printing stops
//! quietly and the command ends with its own exit status, as a filter's writer should; no
//! panic, nothing on stderr. Any other write failure (a full disk under a redirection) is
//! remembered and reported once by [`finish`], which turns the exit status into 1.
//!
//! Text for a terminal ([`table`], [`text_line`]) shows what a tool, a server or a caller
//! wrote, never what it would make a terminal do: control characters (ESC, CR, …) and
//! invisible or direction-changing ones (RLO, zero-width) become markers (`⟨ESC⟩`,
//! `⟨U+202E⟩`), as approval prompts mark them. `--json` output is printed exactly as
//! serialised.

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
        gone(&e);
    }
}

/// Stdout as an [`std::io::Write`] for commands that stream bytes (`audit export`): the same
/// rules as [`write_stdout`] — a closed stdout swallows what follows, another failure is
/// reported by [`finish`] — so a writer never sees an error and never stops with one.
pub struct StdoutSink;

impl Write for StdoutSink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if !STDOUT_GONE.load(Ordering::Relaxed) {
            let written = std::io::stdout().lock().write_all(buf);
            if let Err(e) = written {
                gone(&e);
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if !STDOUT_GONE.load(Ordering::Relaxed)
            && let Err(e) = std::io::stdout().lock().flush()
        {
            gone(&e);
        }
        Ok(())
    }
}

/// Stdout refused a write: nothing more is written; only a failure other than a closed
/// pipe is remembered for [`finish`].
fn gone(e: &std::io::Error) {
    STDOUT_GONE.store(true, Ordering::Relaxed);
    if e.kind() != ErrorKind::BrokenPipe {
        let mut first = WRITE_ERROR
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        first.get_or_insert_with(|| e.to_string());
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

/// A line of text someone else wrote (a tool's description, a record's field), with every
/// character that would act on the terminal shown as a marker (module docs).
pub fn text_line(text: &str) {
    line(&terminal_text(text, true));
}

/// `text` with each control character (but newlines and tabs where `lines` is set) and each
/// invisible or direction-changing character replaced by a marker: `⟨ESC⟩`, `⟨CR⟩`,
/// `⟨U+202E⟩`. Unlike `visible_text` (approvals) it folds no whitespace and leaves `⟨`
/// alone, so text already made visible (an approval's arguments) is shown as it is.
pub fn terminal_text(text: &str, lines: bool) -> String {
    let acts = |c: char| {
        (c.is_control() && !(lines && matches!(c, '\n' | '\t')))
            || toolgate_store::approvals::invisible(c)
    };
    if !text.chars().any(acts) {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            _ if !acts(c) => out.push(c),
            '\r' => out.push_str("⟨CR⟩"),
            '\u{1b}' => out.push_str("⟨ESC⟩"),
            _ => out.push_str(&format!("⟨U+{:04X}⟩", u32::from(c))),
        }
    }
    out
}

/// Prints rows as aligned columns; the last column is never padded. Cells are shown with
/// markers for control and invisible characters (module docs).
pub fn table(header: &[&str], rows: &[Vec<String>]) {
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|row| row.iter().map(|cell| terminal_text(cell, false)).collect())
        .collect();
    let cols = header.len();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in &rows {
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
    for row in &rows {
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

#[cfg(test)]
mod tests {
    use super::terminal_text;

    /// What `tools list` and `audit tail` render: a description's ESC, CR and RLO as markers.
    #[test]
    fn cells_show_control_and_bidi_characters_as_markers() {
        let cell = "reads a file\u{1b}[8m\rIGNORE PREVIOUS\u{202e}txt.exe\n\u{7}";
        assert_eq!(
            terminal_text(cell, false),
            "reads a file⟨ESC⟩[8m⟨CR⟩IGNORE PREVIOUS⟨U+202E⟩txt.exe⟨U+000A⟩⟨U+0007⟩"
        );
        // Lines keep their line ends; text already made visible is left as it is.
        assert_eq!(terminal_text("a\n\tb\r", true), "a\n\tb⟨CR⟩");
        assert_eq!(terminal_text("hi⟨2100 spaces⟩;", false), "hi⟨2100 spaces⟩;");
    }
}
