//! Opening regular files for reading, and telling text from binary.
//!
//! A file is opened relative to its parent directory's descriptor (opened beneath the root,
//! see `beneath`) with `O_NOFOLLOW` (a symlink swapped in after the check fails the open
//! instead of being followed) and `O_NONBLOCK` (a FIFO cannot hang the open); the opened
//! handle is then checked to be a regular file.
//!
//! Hard links: a regular file with more than one link (`st_nlink > 1`, read from the opened
//! descriptor, so it is the count of the very inode about to be read) is refused by every
//! file tool — read, edit, write over it — and skipped by search. A hard link is a second
//! name for the same inode, and the other name may lie outside the workspace (a link
//! planted to `~/.ssh/id_ed25519` on the same file system): confinement by path cannot see
//! it, and the kernel offers no way to list an inode's other names, so a link count above
//! one is the only evidence there is. Telling inside links from outside ones would mean
//! scanning the whole workspace for the inode on every call, and would still race. The cost
//! is that files legitimately hard-linked inside the workspace (some build caches, pnpm's
//! store) cannot be read through these tools; the refusal says why.

use std::ffi::OsStr;
use std::fs::{File, Metadata};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use rustix::fs::{Mode, OFlags, openat};
use rustix::io::Errno;
use toolgate_core::ToolError;

use super::beneath::{InDir, open_parent};
use crate::Workspace;

/// How many leading bytes decide whether a file is binary.
pub(crate) const SNIFF_LEN: usize = 8 * 1024;

/// A NUL byte in the first [`SNIFF_LEN`] bytes marks a file as binary.
pub(crate) fn looks_binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(SNIFF_LEN)].contains(&0)
}

/// A regular file opened for reading, and the directory that holds it.
#[derive(Debug)]
pub(crate) struct Opened {
    pub at: InDir,
    pub file: File,
    pub meta: Metadata,
}

/// Opens the resolved `path` (shown to the model as `rel`) as a regular file.
pub(crate) fn open_regular(ws: &Workspace, path: &Path, rel: &str) -> Result<Opened, ToolError> {
    let at = open_parent(ws, path, rel)?;
    let (file, meta) = open_regular_at(at.dir.as_fd(), &at.name, rel)?;
    Ok(Opened { at, file, meta })
}

/// Opens the entry `name` of the directory `dir` as a regular file.
pub(crate) fn open_regular_at(
    dir: BorrowedFd<'_>,
    name: &OsStr,
    rel: &str,
) -> Result<(File, Metadata), ToolError> {
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let file = File::from(openat(dir, name, flags, Mode::empty()).map_err(|e| {
        if e == Errno::LOOP {
            became_symlink(rel)
        } else {
            ToolError::failed(format!("cannot open `{rel}`: {e}"))
        }
    })?);
    let meta = file
        .metadata()
        .map_err(|e| ToolError::failed(format!("cannot stat `{rel}`: {e}")))?;
    if meta.is_dir() {
        return Err(ToolError::InvalidArguments(format!(
            "`{rel}` is a directory; use list_dir to see its entries"
        )));
    }
    if !meta.is_file() {
        return Err(ToolError::InvalidArguments(format!(
            "`{rel}` is not a regular file (a device, socket or FIFO)"
        )));
    }
    deny_hard_links(rel, meta.nlink())?;
    Ok((file, meta))
}

/// Refuses a regular file with `links` names (see the module header).
pub(crate) fn deny_hard_links(rel: &str, links: u64) -> Result<(), ToolError> {
    if links > 1 {
        return Err(ToolError::PolicyDenied(format!(
            "`{rel}` has {links} hard links; the file tools do not read or write a file \
             with more than one name, since another name may lie outside the workspace"
        )));
    }
    Ok(())
}

/// The refusal for a name that is a symlink now but was not when it was checked.
pub(crate) fn became_symlink(rel: &str) -> ToolError {
    ToolError::PolicyDenied(format!(
        "`{rel}` became a symlink after it was checked; refusing to follow it"
    ))
}

/// The failure for a file too large to load whole.
pub(crate) fn too_large(rel: &str, size: u64, max: u64, hint: &str) -> ToolError {
    ToolError::failed(format!(
        "`{rel}` is {size} bytes, over the {max}-byte limit; {hint}"
    ))
}
