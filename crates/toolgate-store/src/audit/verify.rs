//! Checking the chain end to end. [`verify`] reads the file once and reports the first bad
//! record: a line that is not a chain record, whose hash does not match its bytes (edited),
//! whose `prev` is not the previous line's hash (deleted, inserted or reordered), whose `seq`
//! does not follow, or a torn last line. A chain alone cannot show that its last records were
//! cut off; given the index, `verify` also compares the two, since the index only ever learns
//! fsynced records.
//!
//! With the log's [`AuditKey`] ([`verify_with`]) it also checks every record's MAC — a record
//! appended or rewritten by someone without the key fails — and compares the file with the
//! head anchor: fewer records than the anchor vouches for, another record at its seq, or no
//! file at all, is a failure. Records without a MAC are accepted only before the anchor's
//! `keyed_from` (written before the log had a key) and counted in [`VerifyReport::unkeyed`].
//! Evidence files of torn tails set aside on open are listed, and fail the check until removed.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags, OptionalExtension};

use super::anchor::{Anchor, AnchorFile};
use super::chain::{GENESIS_HASH, LineFault, braced_text, decode_keyed_line};
use super::key::AuditKey;
use super::recover::evidence_files;
use crate::{StoreError, StoreResult};

/// What [`verify`] found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct VerifyReport {
    /// Records checked and found good, in file order, before the first bad one (all of them
    /// when the log is intact).
    pub records: u64,
    /// Hash of the last good record; `None` for an empty log.
    pub head: Option<String>,
    /// The first problem, if any.
    pub first_bad: Option<BadRecord>,
    /// Whether MACs were checked (a key was given).
    pub keyed: bool,
    /// Good records without a MAC (written before the log had a key; with a key, only
    /// accepted before the anchor's `keyed_from`).
    pub unkeyed: u64,
    /// The seq the head anchor vouches for; `None` without a key or without an anchor (a
    /// copy of a log, or a log never opened keyed): then a cut-off end cannot be detected
    /// by the anchor.
    pub anchored: Option<u64>,
    /// Torn tails set aside as evidence files when the log was reopened.
    pub evidence: Vec<PathBuf>,
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
const REASON_MAC: &str = "MAC mismatch (record forged or rewritten without the audit key)";
const REASON_NO_MAC: &str =
    "no MAC on a record of a keyed log (appended or rewritten without the audit key)";

/// Verifies the chain in `jsonl` and, with `db`, that the index agrees with it. Checks no
/// MAC: see [`verify_with`].
pub fn verify(jsonl: &Path, db: Option<&Path>) -> StoreResult<VerifyReport> {
    verify_with(jsonl, db, None)
}

/// [`verify`], and with `key` every record's MAC and the log's head anchor (module docs).
/// A missing file is an error, unless an anchor says it held records: that is a failure.
pub fn verify_with(
    jsonl: &Path,
    db: Option<&Path>,
    key: Option<&AuditKey>,
) -> StoreResult<VerifyReport> {
    let read_err = |e| StoreError::io(format!("cannot read the audit log {}", jsonl.display()), e);
    let anchor = match key {
        Some(key) => AnchorFile::for_log(key, jsonl).load()?,
        None => None,
    };
    let mut report = VerifyReport {
        keyed: key.is_some(),
        anchored: anchor.as_ref().map(|a| a.seq),
        evidence: evidence_files(jsonl),
        ..VerifyReport::default()
    };
    if let Some(a) = &anchor
        && a.seq > 0
        && !jsonl.exists()
    {
        report.first_bad = Some(BadRecord {
            line: 1,
            seq: Some(1),
            reason: format!(
                "the audit log is missing, but the head anchor says it held {} records \
                 (deleted or moved)",
                a.seq
            ),
        });
        return Ok(report);
    }
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
    let keyed_from = anchor.as_ref().map_or(u64::MAX, |a| a.keyed_from);
    let mut seen_mac = false;

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
        let (rec, mac) = match decode_keyed_line(content) {
            Ok(decoded) => decoded,
            Err(fault) => {
                report.first_bad = bad(declared_seq(content, fault), fault.reason());
                break;
            }
        };
        if let Some(key) = key {
            match &mac {
                Some(mac) if !key.verify(rec.hash.as_bytes(), mac) => {
                    report.first_bad = bad(Some(rec.seq), REASON_MAC);
                    break;
                }
                Some(_) => seen_mac = true,
                None if seen_mac || rec.seq >= keyed_from => {
                    report.first_bad = bad(Some(rec.seq), REASON_NO_MAC);
                    break;
                }
                None => {}
            }
        }
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
        if let Some(a) = &anchor
            && a.seq == rec.seq
            && a.hash != rec.hash
        {
            report.first_bad = bad(
                Some(rec.seq),
                "not the record the head anchor vouches for at this seq (log replaced)",
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
        if mac.is_none() {
            report.unkeyed += 1;
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
    if report.first_bad.is_none() {
        report.first_bad = beyond_the_file(anchor.as_ref(), prev_seq, line_no + 1);
    }
    if report.first_bad.is_none()
        && let Some(first) = report.evidence.first()
    {
        report.first_bad = Some(BadRecord {
            line: line_no + 1,
            seq: None,
            reason: format!(
                "a damaged tail was set aside in {} when the log was reopened (a torn write \
                 or tampering): inspect it, then remove it",
                first.display()
            ),
        });
    }
    Ok(report)
}

/// A problem when the anchor vouches for records past the file's last one.
fn beyond_the_file(anchor: Option<&Anchor>, last_seq: u64, next_line: u64) -> Option<BadRecord> {
    let a = anchor.filter(|a| a.seq > last_seq)?;
    Some(BadRecord {
        line: next_line,
        seq: Some(last_seq + 1),
        reason: format!(
            "the head anchor vouches for records up to seq {} but the file ends at seq \
             {last_seq} (records removed from the end)",
            a.seq
        ),
    })
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
