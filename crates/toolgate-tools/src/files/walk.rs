//! The directory walk behind `list_dir` and `search_files`.
//!
//! Invariants: entries come in path order (component-wise, so a directory's contents follow
//! it directly); symlinks are reported but never followed; protected paths are neither
//! reported nor entered; `.git` directories are reported but not entered. Unreadable
//! subdirectories are skipped; an unreadable starting directory is an error.

use std::fs::{self, FileType};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use toolgate_core::{CancellationToken, ToolError};

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
    fn of(file_type: FileType) -> Self {
        if file_type.is_symlink() {
            EntryKind::Symlink
        } else if file_type.is_dir() {
            EntryKind::Dir
        } else if file_type.is_file() {
            EntryKind::File
        } else {
            EntryKind::Other
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
    pub kind: EntryKind,
    /// Byte length for regular files.
    pub size: Option<u64>,
}

/// How far the walk goes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WalkScope {
    pub recursive: bool,
}

/// Visits the entries under `base` (a resolved directory) in path order until `visit`
/// breaks or the tree is exhausted. Checks `cancel` between entries.
pub(crate) fn walk(
    ws: &Workspace,
    base: &Path,
    scope: WalkScope,
    cancel: &CancellationToken,
    mut visit: impl FnMut(WalkEntry) -> Result<ControlFlow<()>, ToolError>,
) -> Result<(), ToolError> {
    let protected = ws.protected_now();
    let first = sorted_entries(base, &protected).map_err(|e| {
        ToolError::failed(format!(
            "cannot read directory `{}`: {e}",
            ws.relative(base)
        ))
    })?;
    let mut stack = vec![first.into_iter()];
    while let Some(level) = stack.last_mut() {
        let Some(entry) = level.next() else {
            stack.pop();
            continue;
        };
        if cancel.is_cancelled() {
            return Err(ToolError::Cancelled);
        }
        let descend = scope.recursive
            && entry.kind == EntryKind::Dir
            && entry.path.file_name().is_none_or(|n| n != ".git");
        let dir = descend.then(|| entry.path.clone());
        if visit(entry)?.is_break() {
            return Ok(());
        }
        if let Some(dir) = dir
            && let Ok(children) = sorted_entries(&dir, &protected)
        {
            stack.push(children.into_iter());
        }
    }
    Ok(())
}

fn sorted_entries(dir: &Path, protected: &[PathBuf]) -> std::io::Result<Vec<WalkEntry>> {
    let mut entries = Vec::new();
    for item in fs::read_dir(dir)? {
        let Ok(item) = item else { continue };
        let path = item.path();
        if Workspace::is_protected(&path, protected) {
            continue;
        }
        // DirEntry::metadata does not follow symlinks.
        let Ok(meta) = item.metadata() else { continue };
        let kind = EntryKind::of(meta.file_type());
        let size = (kind == EntryKind::File).then_some(meta.len());
        entries.push(WalkEntry { path, kind, size });
    }
    entries.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(entries)
}
