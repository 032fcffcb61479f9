//! The directory walk behind `list_dir` and `search_files`.
//!
//! Invariants: entries come in path order (component-wise, so a directory's contents follow
//! it directly); symlinks are reported but never followed; protected paths are neither
//! reported nor entered; `.git` directories are reported but not entered. Unreadable
//! subdirectories are skipped; an unreadable starting directory is an error.
//!
//! The walk descends by descriptor: each subdirectory is opened relative to its parent's
//! descriptor with `O_NOFOLLOW | O_DIRECTORY`, and each entry is examined with `fstatat`
//! relative to the directory it was read from. No path string is resolved again, so a
//! directory swapped for a symlink mid-walk is skipped, never entered.

use std::ffi::{OsStr, OsString};
use std::ops::ControlFlow;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags, openat, statat};
use toolgate_core::{CancellationToken, ToolError};

use super::beneath::DIR_FLAGS;
use crate::Workspace;

/// What a directory entry is, without following symlinks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EntryKind {
    File,
    Dir,
    Symlink,
    Other,
}

impl EntryKind {
    pub(crate) fn of(file_type: FileType) -> Self {
        match file_type {
            FileType::Symlink => EntryKind::Symlink,
            FileType::Directory => EntryKind::Dir,
            FileType::RegularFile => EntryKind::File,
            _ => EntryKind::Other,
        }
    }

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            EntryKind::File => "file",
            EntryKind::Dir => "dir",
            EntryKind::Symlink => "symlink",
            EntryKind::Other => "other",
        }
    }
}

/// One entry met by the walk.
#[derive(Debug, Clone)]
pub(crate) struct WalkEntry {
    /// Absolute path (canonical: built from a canonical base and plain names).
    pub path: PathBuf,
    /// The name in its directory (the descriptor handed to the visitor with it).
    pub name: OsString,
    pub kind: EntryKind,
    /// Byte length for regular files.
    pub size: Option<u64>,
}

impl WalkEntry {
    /// Examines `name` in `dir` without following it.
    pub(crate) fn stat(dir: BorrowedFd<'_>, name: &OsStr, path: PathBuf) -> std::io::Result<Self> {
        let st = statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)?;
        let kind = EntryKind::of(FileType::from_raw_mode(st.st_mode));
        let size = (kind == EntryKind::File).then(|| u64::try_from(st.st_size).unwrap_or(0));
        Ok(WalkEntry {
            path,
            name: name.to_owned(),
            kind,
            size,
        })
    }
}

/// How far the walk goes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WalkScope {
    pub recursive: bool,
}

/// One open directory of the walk and its entries still to visit.
struct Level {
    dir: OwnedFd,
    entries: std::vec::IntoIter<WalkEntry>,
}

/// Visits the entries under `base` (a resolved directory, opened as `base_dir` beneath the
/// root) in path order until `visit` breaks or the tree is exhausted. `visit` gets each
/// entry with the descriptor of the directory holding it. Checks `cancel` between entries.
pub(crate) fn walk(
    ws: &Workspace,
    base: &Path,
    base_dir: OwnedFd,
    scope: WalkScope,
    cancel: &CancellationToken,
    mut visit: impl FnMut(WalkEntry, BorrowedFd<'_>) -> Result<ControlFlow<()>, ToolError>,
) -> Result<(), ToolError> {
    let protected = ws.protected_now();
    let first = sorted_entries(&base_dir, base, &protected).map_err(|e| {
        ToolError::failed(format!(
            "cannot read directory `{}`: {e}",
            ws.relative(base)
        ))
    })?;
    let mut stack = vec![Level {
        dir: base_dir,
        entries: first.into_iter(),
    }];
    while let Some(level) = stack.last_mut() {
        let Some(entry) = level.entries.next() else {
            stack.pop();
            continue;
        };
        if cancel.is_cancelled() {
            return Err(ToolError::Cancelled);
        }
        let descend = scope.recursive && entry.kind == EntryKind::Dir && entry.name != ".git";
        // O_NOFOLLOW: a directory swapped for a symlink since it was listed fails here.
        let child = descend
            .then(|| {
                openat(
                    &level.dir,
                    &entry.name,
                    DIR_FLAGS | OFlags::NOFOLLOW,
                    Mode::empty(),
                )
                .ok()
            })
            .flatten();
        let path = entry.path.clone();
        if visit(entry, level.dir.as_fd())?.is_break() {
            return Ok(());
        }
        if let Some(dir) = child
            && let Ok(children) = sorted_entries(&dir, &path, &protected)
        {
            stack.push(Level {
                dir,
                entries: children.into_iter(),
            });
        }
    }
    Ok(())
}

fn sorted_entries(
    dir: &OwnedFd,
    dir_path: &Path,
    protected: &[PathBuf],
) -> std::io::Result<Vec<WalkEntry>> {
    let mut entries = Vec::new();
    for item in Dir::read_from(dir)? {
        let Ok(item) = item else { continue };
        let name = OsStr::from_bytes(item.file_name().to_bytes());
        if name == "." || name == ".." {
            continue;
        }
        let path = dir_path.join(name);
        if Workspace::is_protected(&path, protected) {
            continue;
        }
        let Ok(entry) = WalkEntry::stat(dir.as_fd(), name, path) else {
            continue;
        };
        entries.push(entry);
    }
    entries.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(entries)
}
