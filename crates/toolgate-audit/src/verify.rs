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
//! The anchor also names the log's first record, so another log at the log's path fails at
//! its first line; a log reached through a symbolic link (its directory or the data dir
//! replaced by one) fails before anything is read.
//!
//! Evidence files of torn tails set aside on open are listed. Without an anchor they fail the
//! check until removed. A keyed log's anchor records each one: it fails while nobody accepted
//! it (`toolgate audit verify --accept-evidence`) and whenever it is missing or edited.
//!
//! Given the index, every record the index claims to have indexed must be there as the file
//! says it: same hash, kind, time, call, session, principal, tool, outcome and place in the
//! file. An index row deleted or edited would hide the record from `audit tail/query`.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags, OptionalExtension};

use super::anchor::{Anchor, AnchorFile};
use super::chain::{GENESIS_HASH, LineFault, braced_text, decode_keyed_line, sha256_hex};
use super::index::IndexFields;
use super::key::AuditKey;
use super::place::{Access, open_log};
use super::record::StoredRecord;
use super::recover::evidence_files;
use toolgate_store::{StoreError, StoreResult};

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
    // Pin the index's snapshot before sizing the file: the index never knows a record the
    // file lacks, so records appended meanwhile cannot look like a truncation.
    let index = match db {
        Some(db) => IndexView::open(db)?,
        None => None,
    };
    let file = match open_log(jsonl, Access::Read) {
        Ok(file) => file,
        Err(StoreError::NotFound(_)) if anchor.as_ref().is_some_and(|a| a.seq > 0) => {
            report.first_bad = Some(BadRecord {
                line: 1,
                seq: Some(1),
                reason: format!(
                    "the audit log is missing, but the head anchor says it held {} records \
                     (deleted or moved)",
                    anchor.as_ref().map_or(0, |a| a.seq)
                ),
            });
            return Ok(report);
        }
        Err(StoreError::Corrupt(why)) => {
            // A link in place of the log, its directory or the data dir.
            report.first_bad = Some(BadRecord {
                line: 1,
                seq: None,
                reason: why,
            });
            return Ok(report);
        }
        Err(e) => return Err(e),
    };
    let len = complete_len(&file).map_err(read_err)?;
    let mut reader = BufReader::with_capacity(256 * 1024, (&file).take(len));
    let mut walk = Walk::new(key, anchor.as_ref());
    if let Some(view) = &index {
        walk.cursor = Some(view.cursor()?);
        walk.indexed_upto = view.indexed_upto()?;
    }
    walk.run(&mut reader, &mut report, |_| false)
        .map_err(|e| match e {
            WalkError::Read(e) => read_err(e),
            WalkError::Store(e) => e,
        })?;
    let (last_seq, next_line) = (walk.prev_seq, walk.line_no + 1);
    if report.first_bad.is_none()
        && let Some(view) = &index
    {
        report.first_bad = view.missing_from_file(last_seq, next_line)?;
    }
    if report.first_bad.is_none() {
        report.first_bad = beyond_the_file(anchor.as_ref(), last_seq, next_line);
    }
    if report.first_bad.is_none() {
        report.first_bad = evidence_problem(jsonl, anchor.as_ref(), &report.evidence, next_line);
    }
    Ok(report)
}

/// Why reading stopped short of a report.
pub(crate) enum WalkError {
    Read(std::io::Error),
    Store(StoreError),
}

impl From<StoreError> for WalkError {
    fn from(e: StoreError) -> Self {
        WalkError::Store(e)
    }
}

/// One pass over a chain's lines: the checks every line gets, in file order.
pub(crate) struct Walk<'a> {
    key: Option<&'a AuditKey>,
    anchor: Option<&'a Anchor>,
    keyed_from: u64,
    seen_mac: bool,
    /// The seq of the first record that carried a MAC.
    pub(crate) first_mac: Option<u64>,
    cursor: Option<IndexCursor<'a>>,
    /// The last seq the index says it has indexed (its rows up to it must all be there).
    indexed_upto: u64,
    pub(crate) prev_hash: String,
    pub(crate) prev_seq: u64,
    pub(crate) line_no: u64,
    /// Byte offset of the next line.
    offset: u64,
}

impl<'a> Walk<'a> {
    pub(crate) fn new(key: Option<&'a AuditKey>, anchor: Option<&'a Anchor>) -> Walk<'a> {
        Walk {
            key,
            anchor,
            keyed_from: anchor.map_or(u64::MAX, |a| a.keyed_from),
            seen_mac: false,
            first_mac: None,
            cursor: None,
            indexed_upto: 0,
            prev_hash: GENESIS_HASH.to_owned(),
            prev_seq: 0,
            line_no: 0,
            offset: 0,
        }
    }

    /// Records from `keyed_from` on must carry a MAC (an export says where its log's key began).
    pub(crate) fn keyed_from(mut self, seq: u64) -> Self {
        self.keyed_from = seq;
        self
    }

    /// Byte offset of the next line to read.
    pub(crate) fn offset(&self) -> u64 {
        self.offset
    }

    /// Reads lines until the end, the first bad record, or a line `stop` claims (returned,
    /// without its newline; it is not counted as a line of the chain, and [`Walk::offset`]
    /// stays at its start).
    pub(crate) fn run(
        &mut self,
        reader: &mut impl BufRead,
        report: &mut VerifyReport,
        stop: impl Fn(&[u8]) -> bool,
    ) -> Result<Option<Vec<u8>>, WalkError> {
        let mut line = Vec::new();
        loop {
            line.clear();
            let n = reader
                .read_until(b'\n', &mut line)
                .map_err(WalkError::Read)?;
            if n == 0 {
                return Ok(None);
            }
            let start = self.offset;
            let complete = line.last() == Some(&b'\n');
            let content = if complete { &line[..n - 1] } else { &line[..] };
            if stop(content) {
                return Ok(Some(content.to_vec()));
            }
            self.offset += n as u64;
            self.line_no += 1;
            if !complete {
                report.first_bad = self.bad(None, REASON_TORN);
                return Ok(None);
            }
            match self.check(content, start, report)? {
                Some(bad) => {
                    report.first_bad = Some(bad);
                    return Ok(None);
                }
                None => report.head = Some(self.prev_hash.clone()),
            }
        }
    }

    fn bad(&self, seq: Option<u64>, reason: &str) -> Option<BadRecord> {
        Some(BadRecord {
            line: self.line_no,
            seq,
            reason: reason.to_owned(),
        })
    }

    /// Checks one complete line at byte `start`; on success moves the walk past it.
    fn check(
        &mut self,
        content: &[u8],
        start: u64,
        report: &mut VerifyReport,
    ) -> StoreResult<Option<BadRecord>> {
        let (rec, mac) = match decode_keyed_line(content) {
            Ok(decoded) => decoded,
            Err(fault) => return Ok(self.bad(declared_seq(content, fault), fault.reason())),
        };
        if let Some(key) = self.key {
            match &mac {
                Some(mac) if !key.verify(rec.hash.as_bytes(), mac) => {
                    return Ok(self.bad(Some(rec.seq), REASON_MAC));
                }
                Some(_) => {
                    self.seen_mac = true;
                    self.first_mac.get_or_insert(rec.seq);
                }
                None if self.seen_mac || rec.seq >= self.keyed_from => {
                    return Ok(self.bad(Some(rec.seq), REASON_NO_MAC));
                }
                None => {}
            }
        }
        if rec.prev != self.prev_hash {
            return Ok(self.bad(Some(rec.seq), REASON_PREV));
        }
        if rec.seq != self.prev_seq + 1 {
            let why = format!("seq jumps from {} to {}", self.prev_seq, rec.seq);
            return Ok(self.bad(Some(rec.seq), &why));
        }
        if let Some(a) = self.anchor {
            if rec.seq == 1
                && let Some(first) = &a.first
                && first != &rec.hash
            {
                return Ok(self.bad(
                    Some(1),
                    "not the log the head anchor names: its first record is another (log replaced)",
                ));
            }
            if a.seq == rec.seq && a.hash != rec.hash {
                return Ok(self.bad(
                    Some(rec.seq),
                    "not the record the head anchor vouches for at this seq (log replaced)",
                ));
            }
        }
        let end = start + content.len() as u64 + 1;
        if let Some(cursor) = self.cursor.as_mut()
            && let Some(why) = cursor.disagrees(&rec, start, end, self.indexed_upto)?
        {
            return Ok(self.bad(Some(rec.seq), &why));
        }
        if mac.is_none() {
            report.unkeyed += 1;
        }
        report.records += 1;
        self.prev_seq = rec.seq;
        self.prev_hash = rec.hash;
        Ok(None)
    }
}

/// A problem with the evidence files beside the log: with an anchor, one it records that is
/// missing, edited or not yet accepted, or one it does not know; without, any.
fn evidence_problem(
    jsonl: &Path,
    anchor: Option<&Anchor>,
    found: &[PathBuf],
    next_line: u64,
) -> Option<BadRecord> {
    let bad = |reason: String| {
        Some(BadRecord {
            line: next_line,
            seq: None,
            reason,
        })
    };
    let dir = jsonl.parent().unwrap_or(Path::new(""));
    let recorded = anchor.map_or(&[][..], |a| a.evidence.as_slice());
    for e in recorded {
        let path = dir.join(&e.name);
        let Ok(bytes) = std::fs::read(&path) else {
            return bad(format!(
                "the evidence file {} that the head anchor records is gone (deleted)",
                path.display()
            ));
        };
        if bytes.len() as u64 != e.len || sha256_hex(&bytes) != e.sha256 {
            return bad(format!(
                "the evidence file {} is not what the head anchor records (edited)",
                path.display()
            ));
        }
        if !e.accepted {
            return bad(format!(
                "a damaged tail was set aside in {} when the log was reopened (a torn write \
                 or tampering): inspect it, then run `toolgate audit verify --accept-evidence` \
                 (keep the file: the anchor records it)",
                path.display()
            ));
        }
    }
    let unknown = found.iter().find(|f| {
        let name = f.file_name().map(|n| n.to_string_lossy().into_owned());
        !recorded.iter().any(|e| Some(&e.name) == name.as_ref())
    })?;
    bad(format!(
        "a damaged tail was set aside in {} when the log was reopened (a torn write \
         or tampering): inspect it, then remove it",
        unknown.display()
    ))
}

/// Marks the evidence files a keyed log's anchor records as looked at (they must still be
/// there, unedited, for `verify` to pass); returns their names.
pub fn accept_evidence(jsonl: &Path, key: &AuditKey) -> StoreResult<Vec<String>> {
    AnchorFile::for_log(key, jsonl).accept_evidence()
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
        #[expect(
            clippy::disallowed_methods,
            reason = "verify reads the index read-only, without the store's pragmas or schema"
        )]
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
        let stmt = self.conn.prepare(
            "SELECT hash, kind, ts_us, call_id, session, principal, tool, outcome, line_start, \
             line_end FROM audit_records WHERE seq = ?1 AND superseded = 0",
        )?;
        Ok(IndexCursor { stmt })
    }

    /// The last seq the index says it holds every record up to (0 when it holds none).
    fn indexed_upto(&self) -> StoreResult<u64> {
        let has_state: bool = self.conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'audit_index_state')",
            [],
            |r| r.get(0),
        )?;
        if !has_state {
            return Ok(0);
        }
        let seq: Option<i64> = self
            .conn
            .query_row(
                "SELECT last_seq FROM audit_index_state WHERE id = 1",
                [],
                |r| r.get(0),
            )
            .optional()?;
        Ok(seq.map_or(0, |s| s.max(0) as u64))
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

/// An index row as stored.
type IndexedRow = (
    String,
    String,
    Option<i64>,
    String,
    String,
    String,
    String,
    String,
    i64,
    i64,
);

impl IndexCursor<'_> {
    /// How the index's row for `rec` (its line at `[start, end)`) differs from the file, if
    /// it does. A missing row is a problem only up to `indexed_upto` (the index may lag).
    fn disagrees(
        &mut self,
        rec: &StoredRecord,
        start: u64,
        end: u64,
        indexed_upto: u64,
    ) -> StoreResult<Option<String>> {
        let row: Option<IndexedRow> = self
            .stmt
            .query_row([rec.seq as i64], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                    r.get(7)?,
                    r.get(8)?,
                    r.get(9)?,
                ))
            })
            .optional()?;
        let Some((hash, kind, ts_us, call_id, session, principal, tool, outcome, ls, le)) = row
        else {
            return Ok((rec.seq <= indexed_upto).then(|| {
                "the index has no row for this record, which it says it indexed (index row \
                 deleted: the record is hidden from queries)"
                    .to_owned()
            }));
        };
        if hash != rec.hash {
            return Ok(Some(
                "the index holds a different hash for this record (replaced after it was indexed)"
                    .to_owned(),
            ));
        }
        let f = IndexFields::of(&rec.record);
        let mut differ = Vec::new();
        let mut column = |name: &'static str, same: bool| {
            if !same {
                differ.push(name);
            }
        };
        column("kind", kind == f.kind);
        column("ts_us", ts_us == f.ts_us);
        column("call_id", call_id == f.call_id);
        column("session", session == f.session);
        column("principal", principal == f.principal);
        column("tool", tool == f.tool);
        column("outcome", outcome == f.outcome);
        column("line_start", ls == start as i64);
        column("line_end", le == end as i64);
        Ok((!differ.is_empty()).then(|| {
            format!(
                "the index row for this record says another {} than the record (index row \
                 edited: queries would misreport it)",
                differ.join(", ")
            )
        }))
    }
}
