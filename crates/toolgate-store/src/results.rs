//! Offloaded results (R-EXE-4): a result too long for the model's context is stored here in
//! full and replaced by its id, which the `read_result` tool pages through.
//!
//! # Invariants
//! - One file per result, `<dir>/res_<16 hex>.txt`, written to a temporary file, synced and
//!   renamed into place: a reader sees the whole text or no result at all. Files are `0600`
//!   and the directory `0700` on unix; results may hold data the caller may not share.
//! - Ids are checked against their exact shape before they touch the file system, so an id
//!   can never name a path outside the directory.
//! - Pages never split a UTF-8 character: both ends snap forward to a character boundary, so
//!   following `next_offset` from 0 yields every byte exactly once, in order, and every page
//!   makes progress.
//! - Retention ([`ResultRetention`]): after each `put` the oldest results (by modification
//!   time, then id) are removed until the directory holds at most `max_count` results and
//!   `max_total_bytes` bytes, and any older than `max_age` are removed too; the result just
//!   stored is never the one evicted. A single result larger than `max_total_bytes` is
//!   refused, so a server answering 15 MB per call cannot fill the disk. Reading an evicted
//!   id says that it may have been evicted, and by which limits.

use std::fs::{self, File, OpenOptions};
use std::io::{ErrorKind, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::Serialize;

use crate::{StoreError, StoreResult};

const ID_PREFIX: &str = "res_";
const ID_HEX_LEN: usize = 16;
/// A UTF-8 character is at most 4 bytes, so at most 3 continuation bytes follow a boundary.
const MAX_CONTINUATION: u64 = 3;

/// Full texts of offloaded results, in one directory.
pub struct ResultStore {
    dir: PathBuf,
    retention: ResultRetention,
}

/// How much the result directory keeps (`[limits] result_retention_*`); oldest go first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResultRetention {
    /// Total size of the stored results; also the largest single result stored.
    pub max_total_bytes: u64,
    /// Number of stored results; 0: no limit.
    pub max_count: usize,
    /// Results older than this are removed; zero: no limit.
    pub max_age: Duration,
}

impl Default for ResultRetention {
    /// 256 MiB, 1,000 results, 7 days.
    fn default() -> Self {
        ResultRetention {
            max_total_bytes: 256 << 20,
            max_count: 1000,
            max_age: Duration::from_secs(7 * 24 * 3600),
        }
    }
}

impl std::fmt::Display for ResultRetention {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} bytes", self.max_total_bytes)?;
        if self.max_count > 0 {
            write!(f, ", {} results", self.max_count)?;
        }
        if !self.max_age.is_zero() {
            write!(f, ", {} seconds", self.max_age.as_secs())?;
        }
        Ok(())
    }
}

/// One stored result, as retention sees it.
struct Stored {
    name: std::ffi::OsString,
    bytes: u64,
    modified: SystemTime,
}

/// One page of an offloaded result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ResultPage {
    pub id: String,
    /// Byte offset where `text` starts (the requested offset snapped to a character boundary).
    pub offset: u64,
    pub total_bytes: u64,
    pub text: String,
    /// Where the next page starts; `None` at the end.
    pub next_offset: Option<u64>,
    pub eof: bool,
}

impl ResultStore {
    /// Opens the result directory, creating it (mode `0700` on unix) if needed.
    pub fn open(dir: &Path) -> StoreResult<Self> {
        fs::create_dir_all(dir).map_err(|e| {
            StoreError::io(format!("creating result directory {}", dir.display()), e)
        })?;
        restrict(dir, 0o700)?;
        Ok(ResultStore {
            dir: dir.to_path_buf(),
            retention: ResultRetention::default(),
        })
    }

    /// Replaces the default [`ResultRetention`].
    #[must_use]
    pub fn with_retention(mut self, retention: ResultRetention) -> Self {
        self.retention = retention;
        self
    }

    pub fn retention(&self) -> ResultRetention {
        self.retention
    }

    /// Stores the full text of the result of call `call_id`, token-shaped secrets masked;
    /// returns its id (`res_` + 16 hex).
    pub fn put(&self, call_id: &str, text: &str) -> StoreResult<String> {
        let id = format!(
            "{ID_PREFIX}{}",
            hex::encode(&uuid::Uuid::new_v4().into_bytes()[..ID_HEX_LEN / 2])
        );
        let path = self.path_of(&id);
        let tmp = self.dir.join(format!(".{id}.tmp"));
        let context = || format!("storing the result of call {call_id} as {}", path.display());
        // Nothing unredacted is written (R-EXE-6), whatever the caller passed.
        let text = crate::redact::Redactor::shared().redact_text(text);
        if text.len() as u64 > self.retention.max_total_bytes {
            return Err(StoreError::io(
                format!(
                    "storing the result of call {call_id}: it is {} bytes; the result store keeps at most {} bytes ([limits] result_retention_bytes)",
                    text.len(),
                    self.retention.max_total_bytes
                ),
                std::io::Error::from(ErrorKind::FileTooLarge),
            ));
        }
        write_new_file(&tmp, text.as_bytes()).map_err(|e| {
            let _ = fs::remove_file(&tmp);
            StoreError::io(context(), e)
        })?;
        fs::rename(&tmp, &path).map_err(|e| {
            let _ = fs::remove_file(&tmp);
            StoreError::io(context(), e)
        })?;
        // Make the rename itself durable; not every platform can sync a directory.
        if let Ok(dir) = File::open(&self.dir) {
            let _ = dir.sync_all();
        }
        self.evict(&id);
        Ok(id)
    }

    /// Applies the retention limits, sparing `keep` (the result just stored). Failures are
    /// not the caller's (the result is stored either way); the next `put` tries again.
    fn evict(&self, keep: &str) {
        let Ok(mut stored) = self.stored() else {
            return;
        };
        // Oldest first; the id breaks ties so the order is the same in every process.
        stored.sort_by(|a, b| a.modified.cmp(&b.modified).then(a.name.cmp(&b.name)));
        let now = SystemTime::now();
        let keep = std::ffi::OsString::from(format!("{keep}.txt"));
        let mut total: u64 = stored.iter().map(|s| s.bytes).sum();
        let mut count = stored.len();
        for old in &stored {
            if old.name == keep {
                continue;
            }
            let expired = !self.retention.max_age.is_zero()
                && now
                    .duration_since(old.modified)
                    .is_ok_and(|age| age > self.retention.max_age);
            let over = total > self.retention.max_total_bytes
                || (self.retention.max_count > 0 && count > self.retention.max_count);
            if !expired && !over {
                continue;
            }
            match fs::remove_file(self.dir.join(&old.name)) {
                // NotFound: another process evicted it first.
                Ok(()) => {}
                Err(e) if e.kind() == ErrorKind::NotFound => {}
                Err(_) => continue,
            }
            total = total.saturating_sub(old.bytes);
            count -= 1;
        }
    }

    /// The stored results (`res_<16 hex>.txt`; temporary files are not counted).
    fn stored(&self) -> std::io::Result<Vec<Stored>> {
        let mut stored = Vec::new();
        for entry in fs::read_dir(&self.dir)? {
            let entry = entry?;
            let name = entry.file_name();
            let is_result = name
                .to_str()
                .and_then(|n| n.strip_suffix(".txt"))
                .is_some_and(is_valid_id);
            if !is_result {
                continue;
            }
            let Ok(meta) = entry.metadata() else {
                continue;
            };
            stored.push(Stored {
                name,
                bytes: meta.len(),
                modified: meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
            });
        }
        Ok(stored)
    }

    /// Reads up to about `limit` bytes of result `id` from byte `offset`. Both ends snap
    /// forward to character boundaries, so a page may run up to 3 bytes over `limit`, and a
    /// `limit` of 0 still returns one character. An offset at or past the end gives an empty,
    /// `eof` page. A malformed or unknown id is [`StoreError::NotFound`].
    pub fn read(&self, id: &str, offset: u64, limit: u64) -> StoreResult<ResultPage> {
        if !is_valid_id(id) {
            return Err(not_found(id));
        }
        let path = self.path_of(id);
        let mut file = match File::open(&path) {
            Ok(file) => file,
            Err(e) if e.kind() == ErrorKind::NotFound => return Err(self.gone(id)),
            Err(e) => return Err(StoreError::io(format!("opening result {id}"), e)),
        };
        let io_err = |e| StoreError::io(format!("reading result {id}"), e);
        let total = file.metadata().map_err(io_err)?.len();
        if offset >= total {
            return Ok(ResultPage {
                id: id.to_owned(),
                offset: total,
                total_bytes: total,
                text: String::new(),
                next_offset: None,
                eof: true,
            });
        }
        // Enough bytes to snap the start forward, take `limit`, and snap the end forward.
        let window_len = MAX_CONTINUATION
            .saturating_add(limit.max(1))
            .saturating_add(MAX_CONTINUATION)
            .min(total - offset);
        file.seek(SeekFrom::Start(offset)).map_err(io_err)?;
        let mut window = Vec::with_capacity(usize::try_from(window_len).unwrap_or(0));
        Read::take(&mut file, window_len)
            .read_to_end(&mut window)
            .map_err(io_err)?;

        let start = snap_forward(&window, 0);
        let end = snap_forward(&window, start.saturating_add(to_usize(limit.max(1))));
        let text = std::str::from_utf8(&window[start..end])
            .map_err(|e| StoreError::Corrupt(format!("result {id} is not valid UTF-8: {e}")))?
            .to_owned();
        let page_start = offset + start as u64;
        let page_end = offset + end as u64;
        let eof = page_end >= total;
        Ok(ResultPage {
            id: id.to_owned(),
            offset: page_start,
            total_bytes: total,
            text,
            next_offset: (!eof).then_some(page_end),
            eof,
        })
    }

    /// A well-formed id with no file: never stored, or evicted by retention.
    fn gone(&self, id: &str) -> StoreError {
        StoreError::NotFound(format!(
            "result {id} is not stored: it does not exist or was evicted by the result retention limits (the oldest go first beyond {}); repeat the call that produced it",
            self.retention
        ))
    }

    fn path_of(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.txt"))
    }
}

/// `res_` followed by exactly 16 lowercase hex digits: nothing else reaches the file system.
fn is_valid_id(id: &str) -> bool {
    id.strip_prefix(ID_PREFIX).is_some_and(|hex| {
        hex.len() == ID_HEX_LEN
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// The first character boundary at or after `at` (clamped to the end of `bytes`).
fn snap_forward(bytes: &[u8], at: usize) -> usize {
    let mut i = at.min(bytes.len());
    while i < bytes.len() && is_continuation(bytes[i]) {
        i += 1;
    }
    i
}

fn is_continuation(byte: u8) -> bool {
    byte & 0b1100_0000 == 0b1000_0000
}

fn to_usize(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

fn not_found(id: &str) -> StoreError {
    StoreError::NotFound(format!(
        "result {id} does not exist (ids look like res_ followed by 16 hex digits)"
    ))
}

/// Creates `path` (which must not exist), writes `bytes` and syncs them to disk.
fn write_new_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

#[cfg(unix)]
fn restrict(dir: &Path, mode: u32) -> StoreResult<()> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(dir, fs::Permissions::from_mode(mode))
        .map_err(|e| StoreError::io(format!("restricting permissions of {}", dir.display()), e))
}

#[cfg(not(unix))]
fn restrict(_dir: &Path, _mode: u32) -> StoreResult<()> {
    Ok(())
}
