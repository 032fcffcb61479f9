//! Checking the chain end to end. [`verify`] reads the file once and reports the first bad
//! record: a line that is not a chain record, whose hash does not match its bytes (edited),
//! whose `prev` is not the previous line's hash (deleted, inserted or reordered), whose `seq`
//! does not follow, or a torn last line. A chain alone cannot show that its last records were
//! cut off; given the index, `verify` also compares the two, since the index only ever learns
//! fsynced records.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use rusqlite::{Connection, OpenFlags, OptionalExtension};

use super::chain::{GENESIS_HASH, LineFault, braced_text, decode_line};
use crate::{StoreError, StoreResult};

/// What [`verify`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyReport {
    /// Records checked and found good, in file order, before the first bad one (all of them
    /// when the log is intact).
    pub records: u64,
    /// Hash of the last good record; `None` for an empty log.
    pub head: Option<String>,
    /// The first problem, if any.
    pub first_bad: Option<BadRecord>,
}

impl VerifyReport {
    /// Whether the log (and the index, if one was given) is intact.
    pub fn ok(&self) -> bool {
        self.first_bad.is_none()
    }
}

/// Where the log first goes wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadRecord {
    /// 1-based line number in the file (one past the last line for records missing at the end).
    pub line: u64,
    /// The record's seq, when it can be read.
    pub seq: Option<u64>,
    pub reason: String,
}

const REASON_PREV: &str =
    "prev does not match the previous record (record deleted, inserted or reordered)";
const REASON_TORN: &str = "torn record at end of file";

/// Verifies the chain in `jsonl` and, with `db`, that the index agrees with it.
pub fn verify(jsonl: &Path, db: Option<&Path>) -> StoreResult<VerifyReport> {
    let read_err = |e| StoreError::io(format!("cannot read the audit log {}", jsonl.display()), e);
    // Pin the index's snapshot before sizing the file: the index never knows a record the
    // file lacks, so records appended meanwhile cannot look like a truncation.
    let index = match db {
        Some(db) => IndexView::open(db)?,
        None => None,
    };
    let file = File::open(jsonl).map_err(read_err)?;
    let len = complete_len(&file).map_err(read_err)?;
    let mut reader = BufReader::with_capacity(256 * 1024, (&file).take(len));
    let mut cursor = match &index {
        Some(view) => Some(view.cursor()?),
        None => None,
    };

    let mut report = VerifyReport {
        records: 0,
        head: None,
        first_bad: None,
    };
    let mut prev_hash = GENESIS_HASH.to_owned();
    let mut prev_seq = 0u64;
    let mut line = Vec::new();
    let mut line_no = 0u64;
    loop {
        line.clear();
        let n = reader.read_until(b'\n', &mut line).map_err(read_err)?;
        if n == 0 {
            break;
        }
        line_no += 1;
        let bad = |seq, reason: &str| {
            Some(BadRecord {
                line: line_no,
                seq,
                reason: reason.to_owned(),
            })
        };
        if line.last() != Some(&b'\n') {
            report.first_bad = bad(None, REASON_TORN);
            break;
        }
        let content = &line[..n - 1];
        let rec = match decode_line(content) {
            Ok(rec) => rec,
            Err(fault) => {
                report.first_bad = bad(declared_seq(content, fault), fault.reason());
                break;
            }
        };
        if rec.prev != prev_hash {
            report.first_bad = bad(Some(rec.seq), REASON_PREV);
            break;
        }
        if rec.seq != prev_seq + 1 {
            report.first_bad = bad(
                Some(rec.seq),
                &format!("seq jumps from {prev_seq} to {}", rec.seq),
            );
            break;
        }
        if let Some(cursor) = cursor.as_mut()
            && let Some(indexed) = cursor.hash_at(rec.seq)?
            && indexed != rec.hash
        {
            report.first_bad = bad(
                Some(rec.seq),
                "the index holds a different hash for this record (replaced after it was indexed)",
            );
            break;
        }
        report.records += 1;
        prev_seq = rec.seq;
        prev_hash = rec.hash;
        report.head = Some(prev_hash.clone());
    }
    if report.first_bad.is_none()
        && let Some(view) = &index
    {
        report.first_bad = view.missing_from_file(prev_seq, line_no + 1)?;
    }
    Ok(report)
}

/// The seq a damaged line claims, if it says one.
fn declared_seq(content: &[u8], fault: LineFault) -> Option<u64> {
    let value: serde_json::Value = match fault {
        LineFault::HashMismatch => serde_json::from_str(&braced_text(content)?).ok()?,
        LineFault::MissingHash => serde_json::from_slice(content).ok()?,
        LineFault::NotJson => return None,
    };
    value.get("seq")?.as_u64()
}

/// The file's length under a shared lock, so no batch is half written.
fn complete_len(file: &File) -> std::io::Result<u64> {
    file.lock_shared()?;
    let len = file.metadata().map(|m| m.len());
    file.unlock()?;
    len
}

/// A read-only snapshot of the index.
struct IndexView {
    conn: Connection,
}

impl IndexView {
    /// `None` when the database has no audit index (nothing to compare).
    fn open(db: &Path) -> StoreResult<Option<IndexView>> {
        if !db.exists() {
            return Err(StoreError::NotFound(format!(
                "audit index database {}",
                db.display()
            )));
        }
        let conn = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY)?;
        conn.execute_batch("BEGIN")?;
        let has_index: bool = conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'audit_records')",
            [],
            |r| r.get(0),
        )?;
        Ok(has_index.then_some(IndexView { conn }))
    }

    fn cursor(&self) -> StoreResult<IndexCursor<'_>> {
        let stmt = self
            .conn
            .prepare("SELECT hash FROM audit_records WHERE seq = ?1 AND superseded = 0")?;
        Ok(IndexCursor { stmt })
    }

    /// A problem for records the index knows but the file no longer has: live rows past the
    /// file's last seq, or rows kept as superseded when the file diverged from the index.
    fn missing_from_file(&self, last_seq: u64, next_line: u64) -> StoreResult<Option<BadRecord>> {
        let beyond: Option<(i64, i64)> = self
            .conn
            .query_row(
                "SELECT MIN(seq), MAX(seq) FROM audit_records WHERE superseded = 0 AND seq > ?1",
                [last_seq as i64],
                |r| Ok(r.get::<_, Option<i64>>(0)?.zip(r.get::<_, Option<i64>>(1)?)),
            )
            .optional()?
            .flatten();
        if let Some((min, max)) = beyond {
            return Ok(Some(BadRecord {
                line: next_line,
                seq: Some(min as u64),
                reason: format!(
                    "the index knows records up to seq {max} but the file ends at seq {last_seq} \
                     (records removed from the end)"
                ),
            }));
        }
        let (count, min): (i64, Option<i64>) = self.conn.query_row(
            "SELECT COUNT(*), MIN(seq) FROM audit_records WHERE superseded = 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        Ok(min.map(|min| BadRecord {
            line: min as u64,
            seq: Some(min as u64),
            reason: format!(
                "the index kept {count} record(s) from seq {min} on that the file no longer has \
                 (records removed or replaced, then the log continued)"
            ),
        }))
    }
}

struct IndexCursor<'c> {
    stmt: rusqlite::Statement<'c>,
}

impl IndexCursor<'_> {
    fn hash_at(&mut self, seq: u64) -> StoreResult<Option<String>> {
        Ok(self.stmt.query_row([seq as i64], |r| r.get(0)).optional()?)
    }
}
