//! The workspace: the one directory tree the built-in tools may touch (R-ACT-1).
//!
//! Every path a model sends is workspace-relative and goes through [`Workspace::resolve_existing`]
//! or [`Workspace::resolve_for_write`], which refuse, with [`ToolError::PolicyDenied`]:
//! absolute paths, any `..` component (even `a/../b`), symlinks that lead out of the root,
//! symlink loops, and protected paths (toolgate's own data directory) or anything under them.
//!
//! Invariant: a resolved path is absolute, starts with the canonical root, and every
//! component that existed at resolution time is canonical (no symlinks left in it). Tools
//! resolve once in `check` (so a human is never asked to approve a refused call) and again
//! in `call`, since the tree may change in between.
//!
//! A resolved path is a decision, not a handle: the tree can change again before it is
//! opened. So the tools never open it by path: they open it relative to [`Workspace`]'s
//! root descriptor with the kernel refusing any symlink and any step out of the root
//! (`files::beneath`), then work on descriptors only.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use rustix::fs::{Mode, OFlags};

use toolgate_core::ToolError;

/// A canonical root directory plus the protected paths inside it.
#[derive(Debug, Clone)]
pub struct Workspace {
    root: PathBuf,
    /// The root opened once (`O_PATH`): what every open is made beneath.
    root_fd: Arc<OwnedFd>,
    /// Absolute, lexically normal paths under `root` (they need not exist yet).
    protected: Vec<PathBuf>,
}

impl Workspace {
    /// `root` must exist; it is canonicalised. `protected` are paths inside the workspace the
    /// tools must never read, list, search or write (toolgate's own data dir lives at
    /// `./.toolgate` by default: a model must not edit the audit log or the approvals db).
    /// Relative protected paths are taken relative to `root`; they need not exist yet.
    pub fn new(root: &Path, protected: Vec<PathBuf>) -> io::Result<Self> {
        let root = root.canonicalize()?;
        if !root.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("workspace root {} is not a directory", root.display()),
            ));
        }
        let root_fd = rustix::fs::open(
            &root,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let protected = protected
            .into_iter()
            .map(|p| {
                let joined = if p.is_absolute() { p } else { root.join(p) };
                canonical_prefix(&joined)
            })
            .collect();
        Ok(Workspace {
            root,
            root_fd: Arc::new(root_fd),
            protected,
        })
    }

    /// The canonical root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The root directory's descriptor, for opening beneath it.
    pub(crate) fn root_fd(&self) -> BorrowedFd<'_> {
        self.root_fd.as_fd()
    }

    /// The part of a resolved path below the root (empty for the root itself); `None` for a
    /// path outside.
    pub(crate) fn below_root<'a>(&self, resolved: &'a Path) -> Option<&'a Path> {
        resolved.strip_prefix(&self.root).ok()
    }

    /// The protected paths (absolute; they need not exist).
    pub fn protected(&self) -> &[PathBuf] {
        &self.protected
    }

    /// Resolves a workspace-relative path to an existing file/dir inside the workspace.
    /// `.` is the root. The result is canonical.
    pub fn resolve_existing(&self, rel: &str) -> Result<PathBuf, ToolError> {
        let lexical = self.lexical(rel)?;
        // Canonicalising every protected path costs a readlink per component: once per
        // resolution, not once per check.
        let protected = self.protected_now();
        self.deny_protected(rel, &lexical, &protected)?;
        let canonical = lexical.canonicalize().map_err(|e| resolve_error(rel, &e))?;
        self.confine(rel, &canonical, &protected)
    }

    /// Resolves a path to be created or overwritten: the deepest existing ancestor must be
    /// inside the workspace; missing components are plain names. An existing final
    /// component that is a symlink is followed (and must stay inside); a dangling symlink
    /// is refused, since its target cannot be checked.
    pub fn resolve_for_write(&self, rel: &str) -> Result<PathBuf, ToolError> {
        let lexical = self.lexical(rel)?;
        let protected = self.protected_now();
        self.deny_protected(rel, &lexical, &protected)?;

        let names: Vec<&std::ffi::OsStr> = lexical
            .strip_prefix(&self.root)
            .map_err(|_| denied_outside(rel))?
            .iter()
            .collect();
        let mut existing = self.root.clone();
        let mut missing = names.as_slice();
        while let Some((first, rest)) = missing.split_first() {
            let next = existing.join(first);
            match next.symlink_metadata() {
                Ok(_) => {
                    existing = next;
                    missing = rest;
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => break,
                Err(e) => return Err(resolve_error(rel, &e)),
            }
        }
        // `existing` exists without following its last component, so NotFound here means a
        // dangling symlink, whose target could lie anywhere.
        let canonical = existing.canonicalize().map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => ToolError::PolicyDenied(format!(
                "path `{rel}`: `{}` is a symlink whose target does not exist; writing \
                 through it could create a file outside the workspace",
                self.relative(&existing)
            )),
            _ => resolve_error(rel, &e),
        })?;
        let canonical = self.confine(rel, &canonical, &protected)?;
        if !missing.is_empty() && !canonical.is_dir() {
            return Err(ToolError::InvalidArguments(format!(
                "`{rel}`: {} is not a directory",
                self.relative(&canonical)
            )));
        }
        let resolved = missing.iter().fold(canonical, |p, name| p.join(name));
        self.deny_protected(rel, &resolved, &protected)?;
        Ok(resolved)
    }

    /// The workspace-relative form of an absolute path under the root, `/`-separated;
    /// the root itself is `.`.
    pub fn relative(&self, abs: &Path) -> String {
        match abs.strip_prefix(&self.root) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".to_owned(),
            Ok(rel) => rel
                .iter()
                .map(|c| c.to_string_lossy())
                .collect::<Vec<_>>()
                .join("/"),
            Err(_) => abs.display().to_string(),
        }
    }

    /// The protected paths as they are now: each lexical form plus, when it exists, its
    /// canonical form (a protected path may itself be a symlink to a directory inside).
    pub(crate) fn protected_now(&self) -> Vec<PathBuf> {
        let mut all = self.protected.clone();
        all.extend(self.protected.iter().filter_map(|p| p.canonicalize().ok()));
        all
    }

    /// True when `abs` is one of `protected` or under one.
    pub(crate) fn is_protected(abs: &Path, protected: &[PathBuf]) -> bool {
        protected.iter().any(|p| abs.starts_with(p))
    }

    /// Validates `rel` and joins it to the root without touching the file system.
    fn lexical(&self, rel: &str) -> Result<PathBuf, ToolError> {
        if rel.is_empty() {
            return Err(ToolError::InvalidArguments(
                "path is empty; use `.` for the workspace root".to_owned(),
            ));
        }
        if rel.contains('\0') {
            return Err(ToolError::InvalidArguments(format!(
                "path `{}` contains a NUL byte",
                rel.escape_default()
            )));
        }
        let mut out = self.root.clone();
        for component in Path::new(rel).components() {
            match component {
                Component::Normal(name) => out.push(name),
                Component::CurDir => {}
                Component::ParentDir => {
                    return Err(ToolError::PolicyDenied(format!(
                        "path `{rel}` contains `..`; paths must stay inside the workspace and \
                         `..` components are refused outright"
                    )));
                }
                Component::RootDir | Component::Prefix(_) => {
                    return Err(ToolError::PolicyDenied(format!(
                        "path `{rel}` is absolute; use a path relative to the workspace root"
                    )));
                }
            }
        }
        Ok(out)
    }

    /// `canonical` must be inside the root and outside every `protected` path (as given by
    /// [`Self::protected_now`]).
    fn confine(
        &self,
        rel: &str,
        canonical: &Path,
        protected: &[PathBuf],
    ) -> Result<PathBuf, ToolError> {
        if !canonical.starts_with(&self.root) {
            return Err(denied_outside(rel));
        }
        self.deny_protected(rel, canonical, protected)?;
        Ok(canonical.to_path_buf())
    }

    fn deny_protected(
        &self,
        rel: &str,
        abs: &Path,
        protected: &[PathBuf],
    ) -> Result<(), ToolError> {
        match protected.iter().find(|p| abs.starts_with(p)) {
            Some(p) => Err(ToolError::PolicyDenied(format!(
                "path `{rel}` is inside the protected path `{}`, which the built-in tools \
                 never read or write",
                self.relative(p)
            ))),
            None => Ok(()),
        }
    }
}

fn denied_outside(rel: &str) -> ToolError {
    ToolError::PolicyDenied(format!(
        "path `{rel}` resolves outside the workspace through a symlink"
    ))
}

/// Maps an error of `canonicalize`/`symlink_metadata` on `rel`.
pub(crate) fn resolve_error(rel: &str, e: &io::Error) -> ToolError {
    if e.raw_os_error() == Some(libc::ELOOP) {
        return ToolError::PolicyDenied(format!("path `{rel}` runs into a symlink loop"));
    }
    match e.kind() {
        io::ErrorKind::NotFound => ToolError::InvalidArguments(format!(
            "`{rel}` does not exist (paths are relative to the workspace root)"
        )),
        io::ErrorKind::NotADirectory => ToolError::InvalidArguments(format!(
            "`{rel}`: a component of the path is not a directory"
        )),
        _ => ToolError::failed(format!("cannot resolve `{rel}`: {e}")),
    }
}

/// Canonicalises the deepest existing ancestor of `p` and appends the rest lexically
/// (`.` dropped, `..` popped), so that a protected path that does not exist yet still
/// compares against canonical paths.
fn canonical_prefix(p: &Path) -> PathBuf {
    let mut normal = PathBuf::new();
    for component in p.components() {
        match component {
            Component::ParentDir => {
                normal.pop();
            }
            Component::CurDir => {}
            other => normal.push(other),
        }
    }
    let mut tail = Vec::new();
    let mut head = normal.as_path();
    loop {
        if let Ok(canonical) = head.canonicalize() {
            return tail
                .iter()
                .rev()
                .fold(canonical, |acc, name| acc.join(name));
        }
        match (head.parent(), head.file_name()) {
            (Some(parent), Some(name)) => {
                tail.push(name.to_os_string());
                head = parent;
            }
            _ => return normal,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical_checks_come_before_the_file_system() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path(), vec![PathBuf::from(".toolgate")]).unwrap();
        let denied = |r: Result<PathBuf, ToolError>| matches!(r, Err(ToolError::PolicyDenied(_)));
        assert!(denied(ws.resolve_existing("../x")));
        assert!(denied(ws.resolve_existing("a/../b")));
        assert!(denied(ws.resolve_existing("/etc/passwd")));
        assert!(denied(ws.resolve_for_write(".toolgate/audit.jsonl")));
        assert!(denied(ws.resolve_for_write("./.toolgate")));
        assert_eq!(
            ws.resolve_existing(""),
            Err(ToolError::InvalidArguments(
                "path is empty; use `.` for the workspace root".to_owned()
            ))
        );
        assert_eq!(ws.resolve_existing("."), Ok(ws.root().to_path_buf()));
        assert_eq!(
            ws.resolve_for_write("new/dir/file.txt"),
            Ok(ws.root().join("new/dir/file.txt"))
        );
    }

    #[test]
    fn relative_paths_use_slashes_and_dot_for_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::new(dir.path(), Vec::new()).unwrap();
        assert_eq!(ws.relative(ws.root()), ".");
        assert_eq!(ws.relative(&ws.root().join("a").join("b.txt")), "a/b.txt");
    }
}
