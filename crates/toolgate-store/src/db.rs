//! The embedded SQLite database shared by the store's tables: [`EmbeddedDb`], one small pool
//! of connections per process that every embedded store of that process draws from, its
//! schema created once when the pool opens ([`crate::schema`]). WAL lets readers and one
//! writer proceed together, also across processes: `toolgate approvals approve` runs beside
//! a waiting `toolgate serve`.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
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
/// 5: approval channels: the channel a decision came through, and the chat posts;
/// 6: the agent's conversations and their journals;
/// 7: a conversation's delivery cursor (what a chat app has been sent).
pub const EMBEDDED_SCHEMA: i32 = 7;

/// Opens (creating if needed) the database at `path` with the pragmas the store relies on:
/// WAL journal, `synchronous = FULL` (a committed approval survives power loss), a busy
/// timeout so concurrent processes wait instead of failing; checks its schema version. The
/// stores draw from an [`EmbeddedDb`]; a connection of its own is for a component with a
/// thread of its own (the audit index's writer).
pub fn open_db(path: &Path) -> StoreResult<Connection> {
    #[expect(
        clippy::disallowed_methods,
        reason = "the store opens its databases here"
    )]
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
    #[expect(
        clippy::disallowed_methods,
        reason = "the store opens its databases here"
    )]
    let conn = Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    Ok(conn.query_row("PRAGMA user_version", [], |r| r.get(0))?)
}

/// How many connections one process keeps to the embedded database: enough that a slow
/// statement of one store (a quota bucket's transaction, an approval's wait) does not queue
/// another store's, few enough that SQLite's single writer is not fought over.
pub const POOL_SIZE: usize = 4;

/// The embedded database of one process: a pool of at most [`POOL_SIZE`] connections with the
/// store's pragmas, the schema of every table created once on open. Cheap to clone; every
/// clone draws from the same pool. Statements run through `EmbeddedDb::run` on the blocking
/// pool, never on a tokio worker.
#[derive(Clone)]
pub struct EmbeddedDb(Arc<Pool>);

struct Pool {
    path: PathBuf,
    idle: Mutex<Idle>,
    returned: Condvar,
}

struct Idle {
    connections: Vec<Connection>,
    /// Connections open, idle or lent out.
    open: usize,
}

impl std::fmt::Debug for EmbeddedDb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddedDb")
            .field("path", &self.0.path)
            .finish_non_exhaustive()
    }
}

impl EmbeddedDb {
    /// Opens (creating if needed) the database at `path`: the first connection is made at
    /// once, so a file that cannot be opened or holds a newer schema fails here, and every
    /// table of the store is created if missing ([`crate::schema::create_all`]). The files
    /// (database, WAL, shared memory) are the owner's alone, `0600`: they hold credentials.
    pub fn open(path: &Path) -> StoreResult<Self> {
        let conn = open_db(path)?;
        crate::schema::create_all(&conn)?;
        restrict_db_files(path)?;
        Ok(EmbeddedDb(Arc::new(Pool {
            path: path.to_path_buf(),
            idle: Mutex::new(Idle {
                connections: vec![conn],
                open: 1,
            }),
            returned: Condvar::new(),
        })))
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.0.path
    }

    /// Runs `work` on a connection of the pool, on the blocking pool; `what` names the store
    /// in the error when the task itself fails.
    pub(crate) async fn run<T, F>(&self, what: &'static str, work: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> StoreResult<T> + Send + 'static,
    {
        let db = self.clone();
        tokio::task::spawn_blocking(move || db.with_conn(work))
            .await
            .map_err(|e| StoreError::Unavailable(format!("the {what} database task failed: {e}")))?
    }

    /// Runs `work` on a connection of the pool on this thread, waiting for one when all are
    /// lent out. Only for callers already off the async workers.
    pub(crate) fn with_conn<T>(
        &self,
        work: impl FnOnce(&mut Connection) -> StoreResult<T>,
    ) -> StoreResult<T> {
        let mut lent = Lent {
            db: self,
            conn: Some(self.take()?),
        };
        let conn = lent.conn.as_mut().ok_or_else(|| {
            StoreError::Unavailable("the embedded database lent no connection".into())
        })?;
        work(conn)
    }

    fn take(&self) -> StoreResult<Connection> {
        let pool = &*self.0;
        let mut idle = lock(&pool.idle);
        loop {
            if let Some(conn) = idle.connections.pop() {
                return Ok(conn);
            }
            if idle.open < POOL_SIZE {
                idle.open += 1;
                drop(idle);
                return open_db(&pool.path).inspect_err(|_| lock(&pool.idle).open -= 1);
            }
            idle = pool
                .returned
                .wait(idle)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
    }
}

/// A connection lent out by the pool. It comes back when the work ends — after an error or a
/// panic too: SQLite rolled back any transaction the work left unfinished when its
/// `Transaction` was dropped, so the connection is still usable. After a panic its
/// `synchronous` is set back to `FULL`: a use that lowered it for itself (a quota take) must
/// not leave the next store's commits unsynced.
struct Lent<'a> {
    db: &'a EmbeddedDb,
    conn: Option<Connection>,
}

impl Drop for Lent<'_> {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            if std::thread::panicking() {
                // Best effort: a connection that cannot take the pragma is dropped instead.
                if conn.pragma_update(None, "synchronous", "FULL").is_err() {
                    lock(&self.db.0.idle).open -= 1;
                    self.db.0.returned.notify_one();
                    return;
                }
            }
            lock(&self.db.0.idle).connections.push(conn);
            self.db.0.returned.notify_one();
        }
    }
}

/// A poisoned lock only means another thread panicked while holding it; the list of idle
/// connections is still consistent.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// `0600` on the database and, when they exist, its `-wal` and `-shm` files.
#[cfg(unix)]
fn restrict_db_files(db: &Path) -> StoreResult<()> {
    use std::os::unix::fs::PermissionsExt;
    let mut paths = vec![db.to_path_buf()];
    for suffix in ["-wal", "-shm"] {
        let mut p = db.as_os_str().to_owned();
        p.push(suffix);
        paths.push(p.into());
    }
    for path in paths {
        match std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(StoreError::io(
                    format!("restricting permissions of {}", path.display()),
                    e,
                ));
            }
        }
    }
    Ok(())
}

#[cfg(not(unix))]
fn restrict_db_files(_db: &Path) -> StoreResult<()> {
    Ok(())
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

    /// Sixteen threads at once on one pool: never more than POOL_SIZE connections are open,
    /// every statement runs, and a panic inside one use gives its connection back.
    #[test]
    fn the_pool_is_bounded_and_gets_its_connections_back() {
        let dir = tempfile::tempdir().expect("temp dir");
        let db = EmbeddedDb::open(&dir.path().join("toolgate.db")).expect("open");
        let busy = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let most = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(16));
        let threads: Vec<_> = (0..16)
            .map(|i| {
                let (db, busy, most, barrier) =
                    (db.clone(), busy.clone(), most.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    db.with_conn(|conn| {
                        let now = busy.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
                        most.fetch_max(now, std::sync::atomic::Ordering::SeqCst);
                        std::thread::sleep(Duration::from_millis(5));
                        let n: i64 = conn.query_row("SELECT ?1", [i], |r| r.get(0))?;
                        busy.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                        Ok(n)
                    })
                })
            })
            .collect();
        let mut sum = 0;
        for t in threads {
            sum += t.join().expect("no panic").expect("statement ran");
        }
        assert_eq!(sum, (0..16).sum::<i64>());
        assert!(most.load(std::sync::atomic::Ordering::SeqCst) <= POOL_SIZE);
        assert!(lock(&db.0.idle).open <= POOL_SIZE);

        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _ = db.with_conn(|conn| -> StoreResult<()> {
                conn.pragma_update(None, "synchronous", "NORMAL")?;
                panic!("a store's bug")
            });
        }));
        assert!(panicked.is_err());
        // Every pooled connection commits synced again (FULL = 2), the panicked one too.
        for _ in 0..POOL_SIZE {
            let level: i64 = db
                .with_conn(|conn| Ok(conn.query_row("PRAGMA synchronous", [], |r| r.get(0))?))
                .expect("read");
            assert_eq!(level, 2);
        }
        let idle = lock(&db.0.idle);
        assert_eq!(
            idle.connections.len(),
            idle.open,
            "every connection is back in the pool, the panicked one too"
        );
    }

    /// Every store's table exists once the pool opened, before any store was made.
    #[test]
    fn opening_the_pool_creates_every_table() {
        let dir = tempfile::tempdir().expect("temp dir");
        let db = EmbeddedDb::open(&dir.path().join("toolgate.db")).expect("open");
        let tables: Vec<String> = db
            .with_conn(|conn| {
                let mut stmt =
                    conn.prepare("SELECT name FROM sqlite_master WHERE type = 'table'")?;
                let names = stmt.query_map([], |r| r.get(0))?;
                Ok(names.collect::<Result<_, _>>()?)
            })
            .expect("listed");
        for table in [
            "approvals",
            "approval_grants",
            "idempotency_keys",
            "idempotency_reservations",
            "tool_pins",
            "mcp_credentials",
            "quota_buckets",
            "api_tokens",
            "approval_posts",
        ] {
            assert!(tables.iter().any(|t| t == table), "{table} in {tables:?}");
        }
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
