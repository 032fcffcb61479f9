//! Opening the embedded SQLite database shared by the store's tables. Every component opens
//! its own connection (WAL lets readers and one writer proceed together, also across
//! processes: `toolgate approvals approve` runs beside a waiting `toolgate serve`).

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use rusqlite::{Connection, ErrorCode};

use crate::{StoreError, StoreResult};

/// How long an open waits for another connection's lock: the busy timeout of every
/// statement, and the limit for switching a new database to WAL.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// The embedded database's schema version (`PRAGMA user_version`). Its steps are additive —
/// each component creates the tables it needs if they are missing — so an older database is
/// brought up by opening it; a database written by a newer toolgate is refused.
/// 1: approvals, grants, idempotency keys, pins, credentials, the audit index;
/// 2: idempotency reservations;
/// 3: issued bearer tokens;
/// 4: approval requests record the caller's issuer and subject;
/// 5: approval channels: the channel a decision came through, and the chat posts.
pub const EMBEDDED_SCHEMA: i32 = 5;

/// Opens (creating if needed) the database at `path` with the pragmas the store relies on:
/// WAL journal, `synchronous = FULL` (a committed approval survives power loss), a busy
/// timeout so concurrent processes wait instead of failing; checks its schema version.
pub fn open_db(path: &Path) -> StoreResult<Connection> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    enable_wal(&conn)?;
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    let version: i32 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if version > EMBEDDED_SCHEMA {
        return Err(StoreError::SchemaTooNew {
            found: version,
            known: EMBEDDED_SCHEMA,
        });
    }
    if version < EMBEDDED_SCHEMA {
        conn.pragma_update(None, "user_version", EMBEDDED_SCHEMA)?;
    }
    Ok(conn)
}

/// The schema version of the embedded database at `path`, without changing it (0: none yet).
pub fn embedded_schema(path: &Path) -> StoreResult<i32> {
    if !path.exists() {
        return Ok(0);
    }
    let conn = Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    Ok(conn.query_row("PRAGMA user_version", [], |r| r.get(0))?)
}

/// One connection shared by a store's handles, used only on the blocking pool: every
/// statement of the embedded backends runs through [`SharedConn::run`], never on a tokio
/// worker.
#[derive(Clone)]
pub(crate) struct SharedConn(Arc<Mutex<Connection>>);

impl SharedConn {
    pub(crate) fn new(conn: Connection) -> Self {
        SharedConn(Arc::new(Mutex::new(conn)))
    }

    /// Runs `work` on the connection, on the blocking pool; `what` names the store in the
    /// error when the task itself fails.
    pub(crate) async fn run<T, F>(&self, what: &'static str, work: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> StoreResult<T> + Send + 'static,
    {
        let conn = Arc::clone(&self.0);
        tokio::task::spawn_blocking(move || work(&mut lock(&conn)))
            .await
            .map_err(|e| StoreError::Unavailable(format!("the {what} database task failed: {e}")))?
    }
}

/// A poisoned lock only means another thread panicked mid-call; SQLite rolled back its
/// unfinished transaction, so the connection is still usable.
fn lock(conn: &Mutex<Connection>) -> MutexGuard<'_, Connection> {
    conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Switches the database to WAL. Switching needs an exclusive lock, and SQLite reports a
/// conflict with another process doing the same on a fresh database as `SQLITE_BUSY` at
/// once, without calling the busy handler — so two `toolgate` processes started together
/// on a new data directory would fail with "database is locked". The switch is retried with
/// a short backoff until [`BUSY_TIMEOUT`].
fn enable_wal(conn: &Connection) -> StoreResult<()> {
    let deadline = Instant::now() + BUSY_TIMEOUT;
    let mut pause = Duration::from_millis(2);
    loop {
        match conn.pragma_update(None, "journal_mode", "WAL") {
            Ok(()) => return Ok(()),
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == ErrorCode::DatabaseBusy && Instant::now() < deadline =>
            {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            Err(e) => return Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Four connections opening one fresh database at once, many times over: every open
    /// succeeds and leaves the database in WAL mode (without the retry, a few in a hundred
    /// rounds fail with "database is locked").
    #[test]
    fn a_database_of_a_newer_toolgate_is_refused_and_an_older_one_brought_up() {
        let dir = tempfile::tempdir().expect("temp dir");
        let db = dir.path().join("toolgate.db");
        {
            let old = Connection::open(&db).expect("open");
            old.pragma_update(None, "user_version", 1).expect("set");
        }
        drop(open_db(&db).expect("an older schema opens"));
        assert_eq!(embedded_schema(&db).expect("read"), EMBEDDED_SCHEMA);
        {
            let newer = Connection::open(&db).expect("open");
            newer
                .pragma_update(None, "user_version", EMBEDDED_SCHEMA + 1)
                .expect("set");
        }
        let e = open_db(&db).expect_err("refused").to_string();
        assert!(e.contains("newer than this toolgate knows"), "{e}");
    }

    #[test]
    fn concurrent_opens_of_a_fresh_database_all_succeed() {
        let dir = tempfile::tempdir().expect("temp dir");
        for round in 0..100 {
            let db = dir.path().join(format!("{round}.db"));
            let barrier = std::sync::Arc::new(std::sync::Barrier::new(4));
            let opens: Vec<_> = (0..4)
                .map(|_| {
                    let (db, barrier) = (db.clone(), barrier.clone());
                    std::thread::spawn(move || {
                        barrier.wait();
                        let conn = open_db(&db)?;
                        conn.execute_batch("CREATE TABLE IF NOT EXISTS t (a INTEGER)")?;
                        conn.query_row("PRAGMA journal_mode", [], |r| r.get::<_, String>(0))
                            .map_err(crate::StoreError::from)
                    })
                })
                .collect();
            for open in opens {
                let mode = open.join().expect("no panic");
                assert_eq!(
                    mode.expect("open succeeds").to_lowercase(),
                    "wal",
                    "round {round}"
                );
            }
        }
    }
}
