//! Opening beneath the workspace root, by the kernel.
//!
//! [`Workspace`] decides on a path (canonical, inside, not protected); this module opens
//! exactly that path relative to the workspace's root descriptor with
//! `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`. The kernel walks the names the check saw
//! and fails with `ELOOP` instead of following if one of them has become a symlink since —
//! a directory swapped for a symlink to the outside between check and open is refused, not
//! followed. Where `openat2` is missing (`ENOSYS`: Linux before 5.6, or a seccomp filter;
//! `EPERM` from an older filter), the same walk is done by hand: `openat` one component at
//! a time relative to the previous directory's descriptor, `O_NOFOLLOW` at every step.
//! Mount points inside the workspace are crossed (no `RESOLVE_NO_XDEV`): only the operator
//! can mount, and a bind mount is as deliberate as the workspace root.
//!
//! After the open the tools use descriptors only: a file is read from its own, a directory
//! walk descends with `openat(dir, name, O_NOFOLLOW | O_DIRECTORY)`, and a write creates its
//! temp file and renames it relative to the parent directory's descriptor. An entry renamed
//! meanwhile by someone inside the workspace can only lead to another place inside it.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Component, Path};
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, ResolveFlags, mkdirat, openat, openat2, statat};
use rustix::io::Errno;
use toolgate_core::ToolError;

use crate::Workspace;
use crate::workspace::resolve_error;

/// A directory to list, search or write into.
pub(crate) const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::CLOEXEC);
/// A directory passed through on the way to another.
const PASS_FLAGS: OFlags = OFlags::PATH.union(OFlags::DIRECTORY).union(OFlags::CLOEXEC);
/// `openat2` answers `EAGAIN` when a rename raced its walk; it may be retried.
const EAGAIN_RETRIES: u32 = 8;

/// Set once `openat2` answered `ENOSYS`: every later open takes the walk by hand.
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

/// A directory opened beneath the root, and the name of one entry in it.
#[derive(Debug)]
pub(crate) struct InDir {
    pub dir: OwnedFd,
    pub name: OsString,
}

/// Opens the resolved directory `path` (shown as `rel`); `None` when it is not a directory.
pub(crate) fn open_dir(
    ws: &Workspace,
    path: &Path,
    rel: &str,
) -> Result<Option<OwnedFd>, ToolError> {
    match open_beneath(ws.root_fd(), below(ws, path, rel)?, DIR_FLAGS) {
        Ok(dir) => Ok(Some(dir)),
        Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => Ok(None),
        Err(e) => Err(open_error(rel, &e)),
    }
}

/// Opens the directory holding the resolved `path`. The root itself comes back as the
/// root directory and the name `.`, so that it is refused as a directory by the caller.
pub(crate) fn open_parent(ws: &Workspace, path: &Path, rel: &str) -> Result<InDir, ToolError> {
    open_parent_if_exists(ws, path, rel)?.ok_or_else(|| {
        ToolError::InvalidArguments(format!(
            "`{rel}` does not exist (paths are relative to the workspace root)"
        ))
    })
}

/// Like [`open_parent`]; `None` when the parent directory does not exist (yet).
pub(crate) fn open_parent_if_exists(
    ws: &Workspace,
    path: &Path,
    rel: &str,
) -> Result<Option<InDir>, ToolError> {
    let (parent, name) = split(ws, path, rel)?;
    match open_beneath(ws.root_fd(), parent, DIR_FLAGS) {
        Ok(dir) => Ok(Some(InDir { dir, name })),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(open_error(rel, &e)),
    }
}

/// Like [`open_parent`], making the missing directories on the way, each with `mkdirat`
/// and then opened with `O_NOFOLLOW` relative to the one before.
pub(crate) fn create_parent(ws: &Workspace, path: &Path, rel: &str) -> Result<InDir, ToolError> {
    let (parent, name) = split(ws, path, rel)?;
    let dir = walk_by_hand(ws.root_fd(), parent, DIR_FLAGS, true).map_err(|e| {
        match e.raw_os_error() {
            Some(libc::ELOOP | libc::EXDEV) => open_error(rel, &e),
            _ => ToolError::failed(format!(
                "cannot create the parent directories of `{rel}`: {e}"
            )),
        }
    })?;
    Ok(InDir { dir, name })
}

/// The failure for an open beneath the root that did not succeed.
pub(crate) fn open_error(rel: &str, e: &io::Error) -> ToolError {
    match e.raw_os_error() {
        Some(libc::ELOOP) => ToolError::PolicyDenied(format!(
            "`{rel}` changed after it was checked: a component of the path is now a \
             symlink; refusing to follow it"
        )),
        Some(libc::EXDEV) => {
            ToolError::PolicyDenied(format!("path `{rel}` resolves outside the workspace"))
        }
        _ => resolve_error(rel, e),
    }
}

/// Opens `below` (plain names relative to `root`; empty for the root itself), refusing a
/// symlink anywhere in it and any step out of `root`.
pub(crate) fn open_beneath(
    root: BorrowedFd<'_>,
    below: &Path,
    flags: OFlags,
) -> io::Result<OwnedFd> {
    let below = if below.as_os_str().is_empty() {
        Path::new(".")
    } else {
        below
    };
    if !NO_OPENAT2.load(Ordering::Relaxed) {
        let resolve =
            ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
        let mut retries = 0;
        loop {
            // No O_NOFOLLOW: with it a trailing symlink would fail O_DIRECTORY with ENOTDIR
            // instead of RESOLVE_NO_SYMLINKS's ELOOP.
            match openat2(root, below, flags, Mode::empty(), resolve) {
                Err(Errno::NOSYS) => {
                    NO_OPENAT2.store(true, Ordering::Relaxed);
                    break;
                }
                // Older container seccomp profiles answer EPERM for a syscall they do not
                // know; the walk by hand is as strict, so try it (without giving up openat2).
                Err(Errno::PERM) => break,
                Err(Errno::AGAIN) if retries < EAGAIN_RETRIES => retries += 1,
                result => return result.map_err(io::Error::from),
            }
        }
    }
    walk_by_hand(root, below, flags, false)
}

/// The path below the root of a resolved path.
fn below<'a>(ws: &Workspace, path: &'a Path, rel: &str) -> Result<&'a Path, ToolError> {
    ws.below_root(path).ok_or_else(|| {
        ToolError::PolicyDenied(format!("path `{rel}` resolves outside the workspace"))
    })
}

/// Splits a resolved path into its parent below the root and its name (`.` for the root).
fn split<'a>(ws: &Workspace, path: &'a Path, rel: &str) -> Result<(&'a Path, OsString), ToolError> {
    let below = below(ws, path, rel)?;
    Ok(match (below.parent(), below.file_name()) {
        (Some(parent), Some(name)) => (parent, name.to_owned()),
        _ => (Path::new(""), OsString::from(".")),
    })
}

/// The walk without `openat2`: each component opened relative to the one before with
/// `O_NOFOLLOW`; with `create`, missing directories are made on the way.
fn walk_by_hand(
    root: BorrowedFd<'_>,
    below: &Path,
    flags: OFlags,
    create: bool,
) -> io::Result<OwnedFd> {
    let mut names = Vec::new();
    for component in below.components() {
        match component {
            Component::Normal(name) => names.push(name),
            Component::CurDir => {}
            _ => return Err(Errno::XDEV.into()),
        }
    }
    let Some((last, passed)) = names.split_last() else {
        return Ok(openat(root, ".", flags | OFlags::NOFOLLOW, Mode::empty())?);
    };
    let mut dir: Option<OwnedFd> = None;
    for name in passed {
        let at = dir.as_ref().map_or(root, AsFd::as_fd);
        dir = Some(step(at, name, PASS_FLAGS, create)?);
    }
    step(dir.as_ref().map_or(root, AsFd::as_fd), last, flags, create)
}

/// Opens one name in `at` without following it (making it a directory first if `create`).
fn step(at: BorrowedFd<'_>, name: &OsStr, flags: OFlags, create: bool) -> io::Result<OwnedFd> {
    let open = || openat(at, name, flags | OFlags::NOFOLLOW, Mode::empty());
    let opened = match open() {
        Err(Errno::NOENT) if create => match mkdirat(at, name, Mode::from_raw_mode(0o777)) {
            Ok(()) | Err(Errno::EXIST) => open(),
            Err(e) => Err(e),
        },
        other => other,
    };
    opened.map_err(|e| {
        // `O_DIRECTORY | O_NOFOLLOW` on a symlink fails with ENOTDIR: report the symlink,
        // as openat2 does.
        let symlink = || {
            statat(at, name, AtFlags::SYMLINK_NOFOLLOW)
                .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Symlink)
        };
        if e == Errno::NOTDIR && symlink() {
            Errno::LOOP.into()
        } else {
            e.into()
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errno(r: io::Result<OwnedFd>) -> Option<i32> {
        r.err().and_then(|e| e.raw_os_error())
    }

    /// The walk by hand refuses what openat2 refuses: a symlink anywhere, inside or out.
    #[test]
    fn the_walk_by_hand_never_follows_a_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let root_path = dir.path();
        std::fs::create_dir_all(root_path.join("a/b")).unwrap();
        std::fs::write(root_path.join("a/b/f.txt"), "x").unwrap();
        std::os::unix::fs::symlink("a", root_path.join("in")).unwrap();
        std::os::unix::fs::symlink("/etc", root_path.join("out")).unwrap();
        let root = rustix::fs::open(root_path, PASS_FLAGS, Mode::empty()).unwrap();
        let root = root.as_fd();
        for by_hand in [false, true] {
            let open = |p: &str, flags| match by_hand {
                true => walk_by_hand(root, Path::new(p), flags, false),
                false => open_beneath(root, Path::new(p), flags),
            };
            assert!(open("a/b/f.txt", OFlags::RDONLY).is_ok());
            assert!(open("", DIR_FLAGS).is_ok());
            assert_eq!(errno(open("in/b/f.txt", OFlags::RDONLY)), Some(libc::ELOOP));
            assert_eq!(errno(open("out/passwd", OFlags::RDONLY)), Some(libc::ELOOP));
            assert_eq!(errno(open("out", DIR_FLAGS)), Some(libc::ELOOP));
            assert_eq!(errno(open("in", OFlags::RDONLY)), Some(libc::ELOOP));
            assert_eq!(errno(open("a/f.txt/x", OFlags::RDONLY)), Some(libc::ENOENT));
        }
        assert_eq!(
            errno(walk_by_hand(root, Path::new("../x"), OFlags::RDONLY, false)),
            Some(libc::EXDEV)
        );
    }

    #[test]
    fn the_walk_by_hand_makes_missing_directories() {
        let dir = tempfile::tempdir().unwrap();
        let root = rustix::fs::open(dir.path(), PASS_FLAGS, Mode::empty()).unwrap();
        walk_by_hand(root.as_fd(), Path::new("x/y/z"), DIR_FLAGS, true).unwrap();
        assert!(dir.path().join("x/y/z").is_dir());
        std::os::unix::fs::symlink("/tmp", dir.path().join("s")).unwrap();
        assert_eq!(
            errno(walk_by_hand(
                root.as_fd(),
                Path::new("s/new"),
                DIR_FLAGS,
                true
            )),
            Some(libc::ELOOP)
        );
    }

    /// A thread exchanges `race/` with a symlink to a directory outside while both ways of
    /// opening run: neither ever opens the outside file or directory.
    #[test]
    fn a_directory_swapped_for_a_symlink_is_never_followed() {
        use std::os::unix::fs::MetadataExt;
        use std::sync::Arc;

        let (dir, outside) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (race, swap) = (dir.path().join("race"), dir.path().join("swap"));
        std::fs::create_dir(&race).unwrap();
        std::fs::write(race.join("f.txt"), "inside").unwrap();
        std::fs::write(outside.path().join("f.txt"), "OUTSIDE").unwrap();
        std::os::unix::fs::symlink(outside.path(), &swap).unwrap();
        let outside_ino = std::fs::metadata(outside.path()).unwrap().ino();
        let root = rustix::fs::open(dir.path(), PASS_FLAGS, Mode::empty()).unwrap();

        let stop = Arc::new(AtomicBool::new(false));
        let swapper = std::thread::spawn({
            let stop = Arc::clone(&stop);
            move || {
                while !stop.load(Ordering::Relaxed) {
                    let flags = rustix::fs::RenameFlags::EXCHANGE;
                    rustix::fs::renameat_with(
                        rustix::fs::CWD,
                        &race,
                        rustix::fs::CWD,
                        &swap,
                        flags,
                    )
                    .unwrap();
                }
            }
        });
        let (mut escapes, mut opened) = (0, 0);
        for round in 0..4000 {
            let by_hand = round % 2 == 0;
            let open = |p: &str, flags| match by_hand {
                true => walk_by_hand(root.as_fd(), Path::new(p), flags, false),
                false => open_beneath(root.as_fd(), Path::new(p), flags),
            };
            if let Ok(fd) = open("race/f.txt", OFlags::RDONLY) {
                opened += 1;
                let text = std::io::read_to_string(std::fs::File::from(fd)).unwrap();
                escapes += usize::from(text != "inside");
            }
            if let Ok(fd) = open("race", DIR_FLAGS) {
                opened += 1;
                escapes += usize::from(rustix::fs::fstat(&fd).unwrap().st_ino == outside_ino);
            }
        }
        stop.store(true, Ordering::Relaxed);
        swapper.join().unwrap();
        assert_eq!(escapes, 0);
        assert!(opened > 0, "the race never let an open through");
    }
}
