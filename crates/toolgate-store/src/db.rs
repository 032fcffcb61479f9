//! Opening the embedded SQLite database shared by the store's tables. Every component opens
//! its own connection (WAL lets readers and one writer proceed together, also across
//! processes: `toolgate approvals approve` runs beside a waiting `toolgate serve`).

use std::path::Path;
use std::time::Duration;

use rusqlite::Connection;

use crate::StoreResult;

/// Opens (creating if needed) the database at `path` with the pragmas the store relies on:
/// WAL journal, `synchronous = FULL` (a committed approval survives power loss), a busy
/// timeout so concurrent processes wait instead of failing.
pub fn open_db(path: &Path) -> StoreResult<Connection> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(Duration::from_secs(10))?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    Ok(conn)
}
