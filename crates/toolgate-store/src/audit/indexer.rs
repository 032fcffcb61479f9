//! The indexer thread: puts records the writer has fsynced into SQLite, many per transaction.
//! The index is derived data, so a failure here is not reported to appenders; the rows are
//! picked up again from the file by the next catch-up (every query and every open does one).

use std::fs::File;
use std::path::PathBuf;
use std::sync::mpsc::Receiver;

use rusqlite::Connection;

use super::index::{IndexRow, index_rows};

pub(crate) fn run(mut conn: Connection, file: File, path: PathBuf, rx: Receiver<Vec<IndexRow>>) {
    while let Ok(mut rows) = rx.recv() {
        while let Ok(more) = rx.try_recv() {
            rows.extend(more);
        }
        let _ = index_rows(&mut conn, &file, &path, &rows);
    }
}
