//! The embedded backend: one file per result, `<dir>/res_<16 hex>.txt`, written to a
//! temporary file, synced and renamed into place (a reader sees the whole text or no result
//! at all). Files are `0600` and the directory `0700` on unix: results may hold data the
//! caller may not share. File work runs on the blocking pool, never on a tokio worker.

use std::fs::{self, File, OpenOptions};
use std::io::{ErrorKind, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use async_trait::async_trait;

use super::{ResultBackend, ResultRetention, Window};
use crate::{StoreError, StoreResult};

/// Full texts of offloaded results, in one directory.
#[derive(Debug, Clone)]
pub struct ResultFiles {
    dir: Arc<PathBuf>,
}

/// One stored result, as retention sees it.
struct Stored {
    name: std::ffi::OsString,
    bytes: u64,
    modified: SystemTime,
}

impl ResultFiles {
    /// Opens the result directory, creating it (mode `0700` on unix) if needed.
    pub fn open(dir: &Path) -> StoreResult<Self> {
        fs::create_dir_all(dir).map_err(|e| {
            StoreError::io(format!("creating result directory {}", dir.display()), e)
        })?;
        restrict(dir, 0o700)?;
        Ok(ResultFiles {
            dir: Arc::new(dir.to_path_buf()),
        })
    }

    /// Writes `text` as result `id` and applies `retention` (blocking).
    fn put_blocking(
        &self,
        id: &str,
        call_id: &str,
        text: &str,
        retention: ResultRetention,
    ) -> StoreResult<()> {
        let path = self.path_of(id);
        let tmp = self.dir.join(format!(".{id}.tmp"));
        let context = || format!("storing the result of call {call_id} as {}", path.display());
        write_new_file(&tmp, text.as_bytes()).map_err(|e| {
            let _ = fs::remove_file(&tmp);
            StoreError::io(context(), e)
        })?;
        fs::rename(&tmp, &path).map_err(|e| {
            let _ = fs::remove_file(&tmp);
            StoreError::io(context(), e)
        })?;
        // Make the rename itself durable; not every platform can sync a directory.
        if let Ok(dir) = File::open(&*self.dir) {
            let _ = dir.sync_all();
        }
        self.evict(id, retention);
        Ok(())
    }

    /// Applies the retention limits, sparing `keep` (the result just stored). Failures are
    /// not the caller's (the result is stored either way); the next `put` tries again.
    fn evict(&self, keep: &str, retention: ResultRetention) {
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
            let expired = !retention.max_age.is_zero()
                && now
                    .duration_since(old.modified)
                    .is_ok_and(|age| age > retention.max_age);
            let over = total > retention.max_total_bytes
                || (retention.max_count > 0 && count > retention.max_count);
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
        for entry in fs::read_dir(&*self.dir)? {
            let entry = entry?;
            let name = entry.file_name();
            let is_result = name
                .to_str()
                .and_then(|n| n.strip_suffix(".txt"))
                .is_some_and(super::is_valid_id);
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

    /// Result `id`'s length and up to `len` bytes from `offset` (blocking).
    fn window_blocking(&self, id: &str, offset: u64, len: u64) -> StoreResult<Option<Window>> {
        let path = self.path_of(id);
        let mut file = match File::open(&path) {
            Ok(file) => file,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(StoreError::io(format!("opening result {id}"), e)),
        };
        let io_err = |e| StoreError::io(format!("reading result {id}"), e);
        let total = file.metadata().map_err(io_err)?.len();
        let len = len.min(total.saturating_sub(offset));
        let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
        if len > 0 {
            file.seek(SeekFrom::Start(offset)).map_err(io_err)?;
            Read::take(&mut file, len)
                .read_to_end(&mut bytes)
                .map_err(io_err)?;
        }
        Ok(Some(Window { total, bytes }))
    }

    fn path_of(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.txt"))
    }
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

#[async_trait]
impl ResultBackend for ResultFiles {
    async fn put(
        &self,
        id: &str,
        call_id: &str,
        text: &str,
        retention: ResultRetention,
    ) -> StoreResult<()> {
        let (this, id, call_id, text) = (
            self.clone(),
            id.to_owned(),
            call_id.to_owned(),
            text.to_owned(),
        );
        tokio::task::spawn_blocking(move || this.put_blocking(&id, &call_id, &text, retention))
            .await
            .map_err(|e| StoreError::Unavailable(format!("the result store task failed: {e}")))?
    }

    async fn window(&self, id: &str, offset: u64, len: u64) -> StoreResult<Option<Window>> {
        let (this, id) = (self.clone(), id.to_owned());
        tokio::task::spawn_blocking(move || this.window_blocking(&id, offset, len))
            .await
            .map_err(|e| StoreError::Unavailable(format!("the result store task failed: {e}")))?
    }
}
