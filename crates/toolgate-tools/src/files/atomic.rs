//! Atomic file replacement: write a temp file in the target's directory, then rename it
//! over the target. Readers see the old content or the new, never a half-written file.
//!
//! The temp file is created with `O_CREAT | O_EXCL | O_NOFOLLOW`, so a planted symlink at
//! its name fails the call instead of redirecting the write; `rename` replaces the final
//! directory entry without following it.

use std::fs::{self, File, OpenOptions, Permissions};
use std::io::{self, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Replaces `target` with `content`. `mode` is the permission bits to keep (those of the
/// file being replaced); `None` creates with the default 0o666 minus the umask.
pub(crate) fn replace_file(target: &Path, content: &[u8], mode: Option<u32>) -> io::Result<()> {
    let dir = target.parent().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "target has no parent directory",
        )
    })?;
    let temp = temp_path(dir);
    let result = write_then_rename(&temp, target, content, mode);
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}

fn temp_path(dir: &Path) -> PathBuf {
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    dir.join(format!(".toolgate-tmp-{}-{n}", std::process::id()))
}

fn write_then_rename(
    temp: &Path,
    target: &Path,
    content: &[u8],
    mode: Option<u32>,
) -> io::Result<()> {
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o666)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(temp)?;
    if let Some(mode) = mode {
        // Explicit, because the mode given at open is filtered by the umask.
        file.set_permissions(Permissions::from_mode(mode))?;
    }
    file.write_all(content)?;
    file.sync_all()?;
    drop(file);
    fs::rename(temp, target)?;
    if let Some(dir) = target.parent() {
        // Persist the rename itself; a failure here does not undo the write.
        let _ = File::open(dir).and_then(|d| d.sync_all());
    }
    Ok(())
}
