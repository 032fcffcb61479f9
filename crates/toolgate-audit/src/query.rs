//! Reading the audit back: [`AuditIndex`] catches the SQLite index up with the JSONL file and
//! answers [`AuditQuery`]s from it. Used by [`super::AuditLog::query`] and, without a writer,
//! by tools in another process (`toolgate audit query` beside a running `toolgate serve`).

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use rusqlite::Connection;
use rusqlite::types::Value as SqlValue;

use super::chain::decode_line;
use super::index::{catch_up, micros_since_epoch, open_index_db};
use super::record::{RecordKind, StoredRecord};
use toolgate_store::{StoreError, StoreResult};

/// Which records to return. Every set field must match; `since` is inclusive, `until`
/// exclusive. Records are ordered by `seq`, oldest first unless `newest_first`.
#[derive(Debug, Clone, Default)]
pub struct AuditQuery {
    pub since: Option<SystemTime>,
    pub until: Option<SystemTime>,
    pub tool: Option<String>,
    pub principal: Option<String>,
    pub session: Option<String>,
    pub outcome: Option<super::AuditOutcome>,
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
        let file = super::place::open_log(jsonl, super::place::Access::Read)?;
        let conn = open_index_db(db)?;
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
        let rows = run_query(&conn, q)?;
        drop(conn);
        rows.into_iter()
            .map(|(seq, hash, start, end)| self.read_record(seq, hash, start, end))
            .collect()
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

    /// Reads an indexed record back from the file, checking it is still the one indexed.
    fn read_record(
        &self,
        seq: u64,
        hash: String,
        start: u64,
        end: u64,
    ) -> StoreResult<StoredRecord> {
        let changed = |why: &str| {
            StoreError::Corrupt(format!(
                "the audit log {} no longer holds record {seq} where its index says ({why}); \
                 run `toolgate audit verify`",
                self.path.display()
            ))
        };
        let len =
            usize::try_from(end.saturating_sub(start + 1)).map_err(|_| changed("bad range"))?;
        let mut line = vec![0u8; len];
        self.file
            .read_exact_at(&mut line, start)
            .map_err(|e| StoreError::io(format!("cannot read {}", self.path.display()), e))?;
        let stored = decode_line(&line).map_err(|fault| changed(fault.reason()))?;
        if stored.seq != seq || stored.hash != hash {
            return Err(changed("a different record is there"));
        }
        Ok(stored)
    }

    fn lock_conn(&self) -> StoreResult<std::sync::MutexGuard<'_, Connection>> {
        self.conn.lock().map_err(|_| {
            StoreError::WriterStopped("the audit index connection was poisoned".into())
        })
    }
}

/// `(seq, hash, line_start, line_end)` of the matching live rows, in the asked order.
type RowRef = (u64, String, u64, u64);

fn run_query(conn: &Connection, q: &AuditQuery) -> StoreResult<Vec<RowRef>> {
    let mut sql = String::from(
        "SELECT seq, hash, line_start, line_end FROM audit_records WHERE superseded = 0",
    );
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
        ("call_id", &q.call_id),
    ];
    for (column, value) in text_filters {
        if let Some(v) = value {
            filter(column, "=", SqlValue::Text(v.clone()));
        }
    }
    if let Some(outcome) = q.outcome {
        filter("outcome", "=", SqlValue::Text(outcome.as_str().to_owned()));
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
            r.get::<_, i64>(0)? as u64,
            r.get::<_, String>(1)?,
            r.get::<_, i64>(2)? as u64,
            r.get::<_, i64>(3)? as u64,
        ))
    })?;
    Ok(rows.collect::<Result<Vec<_>, _>>()?)
}
