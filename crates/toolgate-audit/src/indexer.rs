//! The indexer thread: puts records the writer has fsynced into SQLite. It gathers rows for
//! [`GATHER`] before each transaction, so a busy log costs a few large transactions a second
//! rather than one per write batch. The index is derived data, so a failure here is not
//! reported to appenders; the rows are picked up again from the file by the next catch-up
//! (every query and every open does one).

use std::fs::File;
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use rusqlite::Connection;

use super::anchor::AnchorFile;
use super::index::{IndexRow, index_rows};

/// How long rows are gathered before they are written in one transaction.
const GATHER: Duration = Duration::from_millis(50);

/// With `anchor` (a keyed log), the head anchor is moved to the last record of each
/// transaction's rows: they are fsynced, so the anchor never runs ahead of the file.
pub(crate) fn run(
    mut conn: Connection,
    file: File,
    path: PathBuf,
    mut anchor: Option<AnchorFile>,
    rx: Receiver<Vec<IndexRow>>,
) {
    while let Ok(mut rows) = rx.recv() {
        let deadline = Instant::now() + GATHER;
        let mut closed = false;
        loop {
            match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(more) => rows.extend(more),
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => {
                    closed = true;
                    break;
                }
            }
        }
        let _ = index_rows(&mut conn, &file, &path, &rows);
        if let (Some(anchor), Some(first)) = (anchor.as_mut(), rows.first())
            && first.seq == 1
        {
            anchor.note_first(&first.hash);
        }
        if let (Some(anchor), Some(last)) = (&anchor, rows.last())
            && let Err(e) = anchor.advance(last.seq, &last.hash, last.seq)
        {
            tracing_free_warning(&e);
        }
        if closed {
            return;
        }
    }
}

/// The store has no logger; an anchor that cannot be written shows up in `verify` (the anchor
/// lags the file, which is allowed), so the failure is only noted on stderr.
fn tracing_free_warning(e: &toolgate_store::StoreError) {
    #[allow(clippy::print_stderr)]
    {
        eprintln!("toolgate: cannot update the audit head anchor: {e}");
    }
}
