//! Atomic file replacement: write a temp file in the target's directory, then rename it
//! over the target. Readers see the old content or the new, never a half-written file.
//!
//! Everything happens relative to the descriptor of the target's directory, opened beneath
//! the workspace root (`beneath`): the temp file is created with `openat(O_CREAT | O_EXCL |
//! O_NOFOLLOW)`, so a planted symlink at its name fails the call, and `renameat` replaces
//! the directory entry without following it. Swapping a path component for a symlink
//! meanwhile changes nothing: no path is resolved again.

use std::ffi::{OsStr, OsString};
use std::fs::{File, Permissions};
use std::io::{self, Write};
use std::os::fd::BorrowedFd;
use std::os::unix::fs::PermissionsExt;
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{AtFlags, Mode, OFlags, fsync, openat, renameat, unlinkat};

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Replaces the entry `name` of `dir` with `content`. `mode` is the permission bits to keep
/// (those of the file being replaced); `None` creates with the default 0o666 minus the umask.
pub(crate) fn replace_file(
    dir: BorrowedFd<'_>,
    name: &OsStr,
    content: &[u8],
    mode: Option<u32>,
) -> io::Result<()> {
    let temp = temp_name();
    let result = write_then_rename(dir, &temp, name, content, mode);
    if result.is_err() {
        let _ = unlinkat(dir, &temp, AtFlags::empty());
    }
    result
}

fn temp_name() -> OsString {
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    OsString::from(format!(".toolgate-tmp-{}-{n}", std::process::id()))
}

fn write_then_rename(
    dir: BorrowedFd<'_>,
    temp: &OsStr,
    name: &OsStr,
    content: &[u8],
    mode: Option<u32>,
) -> io::Result<()> {
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mut file = File::from(openat(dir, temp, flags, Mode::from_raw_mode(0o666))?);
    if let Some(mode) = mode {
        // Explicit, because the mode given at open is filtered by the umask.
        file.set_permissions(Permissions::from_mode(mode))?;
    }
    file.write_all(content)?;
    file.sync_all()?;
    drop(file);
    renameat(dir, temp, dir, name)?;
    // Persist the rename itself; a failure here does not undo the write.
    let _ = fsync(dir);
    Ok(())
}
