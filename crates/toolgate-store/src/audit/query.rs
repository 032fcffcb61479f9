//! Reading the audit back: [`AuditIndex`] catches the SQLite index up with the JSONL file and
//! answers [`AuditQuery`]s from it. Used by [`super::AuditLog::query`] and, without a writer,
//! by tools in another process (`toolgate audit query` beside a running `toolgate serve`).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use rusqlite::Connection;
use rusqlite::types::Value as SqlValue;

use super::chain::decode_braced;
use super::index::{catch_up, ensure_schema, micros_since_epoch};
use super::record::{RecordKind, StoredRecord};
use crate::db::open_db;
use crate::{StoreError, StoreResult};

/// Which records to return. Every set field must match; `since` is inclusive, `until`
/// exclusive. Records are ordered by `seq`, oldest first unless `newest_first`.
#[derive(Debug, Clone, Default)]
pub struct AuditQuery {
    pub since: Option<SystemTime>,
    pub until: Option<SystemTime>,
    pub tool: Option<String>,
    pub principal: Option<String>,
    pub session: Option<String>,
    /// `started`, `ok` or an `ErrorCode` wire name.
    pub outcome: Option<String>,
    pub call_id: Option<String>,
    pub kind: Option<RecordKind>,
    pub limit: Option<usize>,
    pub newest_first: bool,
}

/// The SQLite index of one audit log file.
pub struct AuditIndex {
    conn: Mutex<Connection>,
    file: File,
    path: PathBuf,
}

impl AuditIndex {
    /// Opens the index in `db` (creating its tables) for the log at `jsonl`, which must exist.
    /// Does not catch up yet; [`AuditIndex::query`] does.
    pub fn open(jsonl: &Path, db: &Path) -> StoreResult<AuditIndex> {
        let file = File::open(jsonl).map_err(|e| {
            StoreError::io(format!("cannot open the audit log {}", jsonl.display()), e)
        })?;
        let conn = open_db(db)?;
        ensure_schema(&conn)?;
        Ok(AuditIndex {
            conn: Mutex::new(conn),
            file,
            path: jsonl.to_owned(),
        })
    }

    /// Indexes every record fsynced in the file so far that the index lacks; returns how many.
    pub fn catch_up(&self) -> StoreResult<u64> {
        let len = self.durable_len()?;
        let mut conn = self.lock_conn()?;
        catch_up(&mut conn, &self.file, &self.path, len)
    }

    /// Catches up, then returns the records matching `q`.
    pub fn query(&self, q: &AuditQuery) -> StoreResult<Vec<StoredRecord>> {
        self.catch_up()?;
        let conn = self.lock_conn()?;
        run_query(&conn, q)
    }

    /// The file's length once everything in it is on disk. Taken under a shared lock, so no
    /// writer is halfway through a batch.
    fn durable_len(&self) -> StoreResult<u64> {
        let err = |what: &str, e| StoreError::io(format!("{what} {}", self.path.display()), e);
        self.file.lock_shared().map_err(|e| err("cannot lock", e))?;
        let len = self
            .file
            .metadata()
            .map_err(|e| err("cannot stat", e))
            .and_then(|m| {
                self.file.sync_data().map_err(|e| err("cannot sync", e))?;
                Ok(m.len())
            });
        let unlocked = self.file.unlock().map_err(|e| err("cannot unlock", e));
        let len = len?;
        unlocked?;
        Ok(len)
    }

    fn lock_conn(&self) -> StoreResult<std::sync::MutexGuard<'_, Connection>> {
        self.conn.lock().map_err(|_| {
            StoreError::WriterStopped("the audit index connection was poisoned".into())
        })
    }
}

fn run_query(conn: &Connection, q: &AuditQuery) -> StoreResult<Vec<StoredRecord>> {
    let mut sql = String::from("SELECT seq, hash, line FROM audit_records WHERE superseded = 0");
    let mut args: Vec<SqlValue> = Vec::new();
    let mut filter = |column: &str, op: &str, value: SqlValue| {
        sql.push_str(&format!(" AND {column} {op} ?{}", args.len() + 1));
        args.push(value);
    };
    if let Some(t) = q.since.and_then(micros_since_epoch) {
        filter("ts_us", ">=", SqlValue::Integer(t));
    }
    if let Some(t) = q.until.and_then(micros_since_epoch) {
        filter("ts_us", "<", SqlValue::Integer(t));
    }
    let text_filters = [
        ("tool", &q.tool),
        ("principal", &q.principal),
        ("session", &q.session),
        ("outcome", &q.outcome),
        ("call_id", &q.call_id),
    ];
    for (column, value) in text_filters {
        if let Some(v) = value {
            filter(column, "=", SqlValue::Text(v.clone()));
        }
    }
    if let Some(kind) = q.kind {
        filter("kind", "=", SqlValue::Text(kind.as_str().to_owned()));
    }
    sql.push_str(if q.newest_first {
        " ORDER BY seq DESC"
    } else {
        " ORDER BY seq ASC"
    });
    if let Some(limit) = q.limit {
        sql.push_str(&format!(
            " LIMIT {}",
            i64::try_from(limit).unwrap_or(i64::MAX)
        ));
    }
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map(rusqlite::params_from_iter(args), |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
        ))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (seq, hash, line) = row?;
        let mut stored = decode_braced(line.as_bytes()).map_err(|fault| {
            StoreError::Corrupt(format!(
                "the audit index holds an unreadable record at seq {seq} ({})",
                fault.reason()
            ))
        })?;
        stored.hash = hash;
        out.push(stored);
    }
    Ok(out)
}
