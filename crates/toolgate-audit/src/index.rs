//! The SQLite index of the audit log: derived data, rebuilt from the JSONL file whenever it
//! lags. Rows are keyed by `(seq, hash)`; the file is the truth.
//!
//! Invariants:
//! - The index only learns a record after its bytes are fsynced in the file, so an index that
//!   knows a record the file lacks is evidence that the file lost its tail.
//! - Such evidence is kept, never overwritten: when the file's record at a `seq` differs from
//!   the indexed one (or the file ends before it), the indexed row is marked `superseded` and
//!   stays; queries skip it and `verify` with the index reports it.
//! - `audit_index_state` holds the file offset up to which the index is complete, with the
//!   seq and hash of the record that ends there; catching up starts from it after checking
//!   that the file still has that record there.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use rusqlite::{Connection, OptionalExtension, Transaction, params};

use super::chain::{GENESIS_HASH, decode_line};
use super::record::AuditRecord;
use super::recover::line_ending_at;
use toolgate_store::db::open_db;
use toolgate_store::{StoreError, StoreResult};

/// Rows are small — the record itself stays in the file, found by its byte range — so
/// indexing costs little beside the log's own writes.
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS audit_records (
    seq         INTEGER NOT NULL,
    hash        TEXT    NOT NULL,
    superseded  INTEGER NOT NULL DEFAULT 0,
    kind        TEXT    NOT NULL,
    ts_us       INTEGER,
    call_id     TEXT    NOT NULL,
    session     TEXT    NOT NULL,
    principal   TEXT    NOT NULL,
    tool        TEXT    NOT NULL,
    outcome     TEXT    NOT NULL,
    line_start  INTEGER NOT NULL,
    line_end    INTEGER NOT NULL,
    PRIMARY KEY (seq, hash)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS audit_records_tool ON audit_records (tool, seq);
CREATE INDEX IF NOT EXISTS audit_records_principal ON audit_records (principal, seq);
CREATE INDEX IF NOT EXISTS audit_records_session ON audit_records (session, seq);
CREATE INDEX IF NOT EXISTS audit_records_call ON audit_records (call_id, seq);
CREATE INDEX IF NOT EXISTS audit_records_ts ON audit_records (ts_us);
CREATE TABLE IF NOT EXISTS audit_index_state (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    file_offset INTEGER NOT NULL,
    last_seq    INTEGER NOT NULL,
    last_hash   TEXT    NOT NULL
);
";

/// Lines indexed per transaction while catching up, so a long backlog never holds one huge
/// transaction.
const CATCH_UP_BATCH: usize = 4096;

/// The queryable columns of a record, taken on the appender's thread.
#[derive(Debug, Clone)]
pub(crate) struct IndexFields {
    pub(crate) kind: &'static str,
    pub(crate) ts_us: Option<i64>,
    pub(crate) call_id: String,
    pub(crate) session: String,
    pub(crate) principal: String,
    pub(crate) tool: String,
    pub(crate) outcome: &'static str,
}

impl IndexFields {
    pub(crate) fn of(record: &AuditRecord) -> Self {
        IndexFields {
            kind: record.kind.as_str(),
            ts_us: humantime::parse_rfc3339(&record.ts)
                .ok()
                .and_then(micros_since_epoch),
            call_id: storable(&record.call_id),
            session: storable(&record.session),
            principal: storable(&record.principal),
            tool: storable(&record.tool),
            outcome: record.outcome.as_str(),
        }
    }
}

/// `text` as a column can hold it: PostgreSQL's `text` cannot hold NUL, so it is written as
/// the JSON escape the line has for it (`\u0000`). The line itself is untouched; the gateway
/// refuses such calls before they get here, so this only keeps one odd record from failing.
pub(crate) fn storable(text: &str) -> String {
    if text.contains('\0') {
        text.replace('\0', "\\u0000")
    } else {
        text.to_owned()
    }
}

/// Microseconds since the Unix epoch, as stored in `ts_us`.
pub(crate) fn micros_since_epoch(t: std::time::SystemTime) -> Option<i64> {
    let d = t.duration_since(std::time::UNIX_EPOCH).ok()?;
    i64::try_from(d.as_micros()).ok()
}

/// One record ready to index, with the byte range of its line (`\n` included) in the file.
#[derive(Debug, Clone)]
pub(crate) struct IndexRow {
    pub seq: u64,
    pub hash: String,
    pub fields: IndexFields,
    pub start: u64,
    pub end: u64,
}

/// Where the index is complete up to.
#[derive(Debug, Clone, PartialEq, Eq)]
struct IndexState {
    offset: u64,
    seq: u64,
    hash: String,
}

/// WAL pages after which the indexer's commit checkpoints (SQLite's default: 1000).
const INDEX_CHECKPOINT_PAGES: i64 = 64;

/// A connection for the index: the store's settings, except that commits are not fsynced
/// (`synchronous = NORMAL`, still crash-consistent in WAL mode). The index is derived data —
/// losing its last commits in a power cut only makes it lag — and skipping the fsync keeps it
/// from competing with the log's own fsyncs. Creates the tables if needed.
///
/// Checkpoints still fsync (the WAL before, the database after). At SQLite's default of one
/// per 1000 WAL pages, each flushed ~4 MB in one go and held up every audit fsync queued
/// behind it for 10–20 ms; at [`INDEX_CHECKPOINT_PAGES`] they are small enough to slip in
/// between.
pub(crate) fn open_index_db(db: &Path) -> StoreResult<Connection> {
    let conn = open_db(db)?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "wal_autocheckpoint", INDEX_CHECKPOINT_PAGES)?;
    conn.execute_batch(SCHEMA)?;
    Ok(conn)
}

fn read_state(conn: &Connection) -> StoreResult<IndexState> {
    let state = conn
        .query_row(
            "SELECT file_offset, last_seq, last_hash FROM audit_index_state WHERE id = 1",
            [],
            |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, String>(2)?,
                ))
            },
        )
        .optional()?;
    Ok(match state {
        Some((offset, seq, hash)) => IndexState {
            offset: offset as u64,
            seq: seq as u64,
            hash,
        },
        None => IndexState {
            offset: 0,
            seq: 0,
            hash: GENESIS_HASH.to_owned(),
        },
    })
}

fn write_state(tx: &Transaction<'_>, state: &IndexState) -> StoreResult<()> {
    tx.execute(
        "INSERT INTO audit_index_state (id, file_offset, last_seq, last_hash) VALUES (1, ?1, ?2, ?3)
         ON CONFLICT (id) DO UPDATE SET file_offset = ?1, last_seq = ?2, last_hash = ?3",
        params![state.offset as i64, state.seq as i64, state.hash],
    )?;
    Ok(())
}

/// Inserts `row` as the live record at its seq; a different live record at that seq is kept
/// as superseded evidence.
fn upsert(tx: &Transaction<'_>, row: &IndexRow) -> StoreResult<()> {
    let seq = row.seq as i64;
    tx.prepare_cached(
        "UPDATE audit_records SET superseded = 1 WHERE seq = ?1 AND superseded = 0 AND hash <> ?2",
    )?
    .execute(params![seq, row.hash])?;
    let f = &row.fields;
    tx.prepare_cached(
        "INSERT INTO audit_records
           (seq, hash, kind, ts_us, call_id, session, principal, tool, outcome, line_start, line_end)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
         ON CONFLICT (seq, hash) DO UPDATE
           SET superseded = 0, line_start = excluded.line_start, line_end = excluded.line_end",
    )?
    .execute(params![
        seq,
        row.hash,
        f.kind,
        f.ts_us,
        f.call_id,
        f.session,
        f.principal,
        f.tool,
        f.outcome,
        row.start as i64,
        row.end as i64
    ])?;
    Ok(())
}

/// Indexes rows handed over by this process's writer (in file order). Rows already indexed
/// are skipped; records another process wrote in between are read from `file` first.
pub(crate) fn index_rows(
    conn: &mut Connection,
    file: &File,
    path: &Path,
    rows: &[IndexRow],
) -> StoreResult<()> {
    let Some(first) = rows.first() else {
        return Ok(());
    };
    if read_state(conn)?.offset < first.start {
        catch_up(conn, file, path, first.start)?;
    }
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let mut state = read_state(&tx)?;
    for row in rows {
        if row.seq <= state.seq {
            continue;
        }
        if row.start != state.offset {
            // Another process's records sit in between: leave them (and these) to catch_up.
            break;
        }
        upsert(&tx, row)?;
        state = IndexState {
            offset: row.end,
            seq: row.seq,
            hash: row.hash.clone(),
        };
    }
    write_state(&tx, &state)?;
    tx.commit()?;
    Ok(())
}

/// Indexes every complete line in `file` up to `upto` that the index lacks. If the file no
/// longer holds the record the index stopped at, the whole file is re-read and the records
/// it lost are marked superseded. Returns how many records were indexed.
pub(crate) fn catch_up(
    conn: &mut Connection,
    file: &File,
    path: &Path,
    upto: u64,
) -> StoreResult<u64> {
    let state = read_state(conn)?;
    if state.offset == upto {
        return Ok(0);
    }
    let from = if file_still_ends_record_at(file, &state, upto)? {
        state.clone()
    } else {
        IndexState {
            offset: 0,
            seq: 0,
            hash: GENESIS_HASH.to_owned(),
        }
    };
    let rescan = from.offset == 0 && state.offset > 0;
    let (indexed, last) = index_range(conn, file, path, from, upto)?;
    if rescan {
        conn.execute(
            "UPDATE audit_records SET superseded = 1 WHERE seq > ?1 AND superseded = 0",
            params![last.seq as i64],
        )?;
    }
    Ok(indexed)
}

/// Whether the file's line ending at `state.offset` is the record the index stopped at.
fn file_still_ends_record_at(file: &File, state: &IndexState, upto: u64) -> StoreResult<bool> {
    if state.offset == 0 {
        return Ok(true);
    }
    if state.offset > upto {
        return Ok(false);
    }
    let (_, line) = line_ending_at(file, state.offset - 1)
        .map_err(|e| StoreError::io("cannot read the audit log", e))?;
    Ok(decode_line(&line).is_ok_and(|r| r.seq == state.seq && r.hash == state.hash))
}

/// Indexes the complete lines in `[from.offset, upto)`, committing every few thousand lines.
/// Lines that do not decode are skipped (verify reports them); an unterminated tail is left.
fn index_range(
    conn: &mut Connection,
    file: &File,
    path: &Path,
    from: IndexState,
    upto: u64,
) -> StoreResult<(u64, IndexState)> {
    let read_err = |e| StoreError::io(format!("cannot read {}", path.display()), e);
    let mut reader = BufReader::with_capacity(256 * 1024, file);
    reader
        .seek(SeekFrom::Start(from.offset))
        .map_err(read_err)?;
    let mut reader = reader.take(upto.saturating_sub(from.offset));
    // `state` only moves past records that decoded, so damaged lines at the end are read
    // again next time rather than taken as the point the index stopped at.
    let mut scan_offset = from.offset;
    let mut state = from;
    let mut indexed = 0u64;
    let mut line = Vec::new();
    loop {
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let mut in_tx = 0usize;
        let mut done = false;
        while in_tx < CATCH_UP_BATCH {
            line.clear();
            let n = reader.read_until(b'\n', &mut line).map_err(read_err)?;
            if n == 0 || line.last() != Some(&b'\n') {
                done = true;
                break;
            }
            let start = scan_offset;
            let end = start + n as u64;
            scan_offset = end;
            let content = &line[..n - 1];
            if let Ok(stored) = decode_line(content) {
                let row = IndexRow {
                    fields: IndexFields::of(&stored.record),
                    seq: stored.seq,
                    hash: stored.hash,
                    start,
                    end,
                };
                upsert(&tx, &row)?;
                indexed += 1;
                state = IndexState {
                    offset: end,
                    seq: row.seq,
                    hash: row.hash,
                };
            }
            in_tx += 1;
        }
        write_state(&tx, &state)?;
        tx.commit()?;
        if done {
            return Ok((indexed, state));
        }
    }
}
