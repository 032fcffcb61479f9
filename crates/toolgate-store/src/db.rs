//! Opening the embedded SQLite database shared by the store's tables. Every component opens
//! its own connection (WAL lets readers and one writer proceed together, also across
//! processes: `toolgate approvals approve` runs beside a waiting `toolgate serve`).

use std::path::Path;
use std::time::{Duration, Instant};

use rusqlite::{Connection, ErrorCode};

use crate::StoreResult;

/// How long an open waits for another connection's lock: the busy timeout of every
/// statement, and the limit for switching a new database to WAL.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Opens (creating if needed) the database at `path` with the pragmas the store relies on:
/// WAL journal, `synchronous = FULL` (a committed approval survives power loss), a busy
/// timeout so concurrent processes wait instead of failing.
pub fn open_db(path: &Path) -> StoreResult<Connection> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    enable_wal(&conn)?;
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    Ok(conn)
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
