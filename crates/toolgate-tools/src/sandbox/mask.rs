//! Hiding toolgate's own state inside the workspace (its data dir: audit log, approvals,
//! grants; its config file) from a sandboxed command, whether or not it exists.
//!
//! Landlock can only grant, and the whole workspace is granted, so the command gets a
//! private mount namespace instead, in which each protected directory is covered by an
//! empty read-only tmpfs and each protected file by a read-only bind of `/dev/null`. The
//! command sees them empty and cannot write, replace or remove them (a mount point cannot
//! be unlinked or renamed over: `EBUSY`); the gateway's view is untouched. Root can always
//! do this; another user needs unprivileged user namespaces (then its uid and gid map to
//! themselves).
//!
//! A protected path that does not exist cannot be covered, and a command could then create
//! it — a `toolgate.toml` the next `toolgate` started there would load. So the helper first
//! [`hold`]s every protected path: an absent one is created as an empty **placeholder**
//! (`O_CREAT | O_EXCL`, 0600; a directory, 0700, when its name has no extension, as a data
//! dir has not), which is then covered like any other. Every helper holds a shared `flock`
//! on each protected path while its command runs; the helper that made a placeholder
//! removes it afterwards only if it gets the lock exclusively (no other command is covered
//! by it: removing a mount point seen by another namespace would uncover it there) and the
//! path is still the same empty inode. An empty `toolgate.toml` means the embedded defaults
//! and an empty data dir is a fresh one, so a `toolgate` started meanwhile, or a
//! placeholder left behind (a helper killed outright, or one still used by a concurrent
//! command when its maker ended), is harmless. A protected path whose parent directory does
//! not exist, or that is a symlink, is not held.

use std::os::fd::OwnedFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use rustix::fs::{FlockOperation, Mode, OFlags, flock};
use rustix::mount::{
    MountFlags, MountPropagationFlags, mount, mount_bind, mount_change, mount_remount,
};

/// Attempts to hold one path while others create or remove it concurrently.
const HOLD_ATTEMPTS: usize = 16;

/// One protected path and how to cover it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Mask {
    /// A directory, and the writable trees inside it that stay reachable (a stdio MCP
    /// server's state directory `<data dir>/mcp/<name>`): each is bound back in place from
    /// a descriptor the helper holds open.
    Dir(PathBuf, Vec<Kept>),
    File(PathBuf),
}

/// A tree inside a covered directory that is bound back: where (relative to the
/// directory) and the raw `O_PATH` descriptor of the original.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Kept {
    pub(crate) rel: PathBuf,
    pub(crate) fd: i32,
}

impl Mask {
    pub(crate) fn path(&self) -> &Path {
        let (Mask::Dir(p, _) | Mask::File(p)) = self;
        p
    }
}

/// The protected paths held for one command: a shared lock on each, and the placeholders
/// this helper made. Dropping it (after the command and its descendants are gone) releases
/// the locks and removes the placeholders no other command still relies on.
#[derive(Debug, Default)]
pub(crate) struct Held {
    paths: Vec<HeldPath>,
}

#[derive(Debug)]
struct HeldPath {
    mask: Mask,
    /// Open on the held inode, shared-locked.
    fd: OwnedFd,
    /// Made by this helper.
    placeholder: bool,
    /// The `O_PATH` descriptors behind [`Kept`].
    kept: Vec<OwnedFd>,
}

impl Held {
    /// The masks over the held paths.
    pub(crate) fn masks(&self) -> Vec<Mask> {
        self.paths.iter().map(|h| h.mask.clone()).collect()
    }

    /// The `O_PATH` descriptors of the kept trees (bound back by descriptor).
    pub(crate) fn kept_fds(&self) -> Vec<i32> {
        self.paths
            .iter()
            .flat_map(|h| &h.kept)
            .map(std::os::fd::AsRawFd::as_raw_fd)
            .collect()
    }
}

/// Holds every protected path (creating placeholders for the absent ones) and returns the
/// masks that cover them; the `writable` trees inside a protected directory stay
/// reachable. Symlinks are never followed.
pub(crate) fn hold(protected: &[PathBuf], writable: &[PathBuf]) -> (Vec<Mask>, Held) {
    let mut held = Held::default();
    for path in protected {
        if let Some(mut entry) = hold_one(path) {
            if let Mask::Dir(dir, kept) = &mut entry.mask {
                let base = dir.canonicalize().unwrap_or_else(|_| dir.clone());
                for w in writable {
                    let Ok(rel) = w.strip_prefix(&base) else {
                        continue;
                    };
                    let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
                    if rel.as_os_str().is_empty() {
                        continue;
                    }
                    if let Ok(fd) = rustix::fs::open(w, flags, Mode::empty()) {
                        kept.push(Kept {
                            rel: rel.to_owned(),
                            fd: std::os::fd::AsRawFd::as_raw_fd(&fd),
                        });
                        entry.kept.push(fd);
                    }
                }
            }
            held.paths.push(entry);
        }
    }
    let masks = held.paths.iter().map(|h| h.mask.clone()).collect();
    (masks, held)
}

fn hold_one(path: &Path) -> Option<HeldPath> {
    for _ in 0..HOLD_ATTEMPTS {
        let (mask, fd, placeholder) = match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.is_dir() => (
                Mask::Dir(path.to_owned(), Vec::new()),
                open(path, true)?,
                false,
            ),
            Ok(meta) if meta.is_file() => (Mask::File(path.to_owned()), open(path, false)?, false),
            Ok(_) => return None,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => match create(path) {
                Ok(made) => made,
                Err(e) if e == rustix::io::Errno::EXIST => continue,
                Err(_) => return None,
            },
            Err(_) => return None,
        };
        // Blocks only while a maker removes its placeholder.
        if flock(&fd, FlockOperation::LockShared).is_err() {
            return None;
        }
        // The path must still name the inode locked (a maker may have removed it between
        // the look and the lock).
        if same_inode(path, &fd) {
            return Some(HeldPath {
                mask,
                fd,
                placeholder,
                kept: Vec::new(),
            });
        }
    }
    None
}

fn open(path: &Path, dir: bool) -> Option<OwnedFd> {
    let mut flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK;
    if dir {
        flags |= OFlags::DIRECTORY;
    }
    rustix::fs::open(path, flags, Mode::empty()).ok()
}

/// An empty placeholder: a file when the name has an extension (`toolgate.toml`), else a
/// directory (a data dir).
fn create(path: &Path) -> rustix::io::Result<(Mask, OwnedFd, bool)> {
    if path.extension().is_some() {
        let flags =
            OFlags::RDONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = rustix::fs::open(path, flags, Mode::from_raw_mode(0o600))?;
        Ok((Mask::File(path.to_owned()), fd, true))
    } else {
        rustix::fs::mkdir(path, Mode::from_raw_mode(0o700))?;
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::DIRECTORY;
        let fd = rustix::fs::open(path, flags, Mode::empty())?;
        Ok((Mask::Dir(path.to_owned(), Vec::new()), fd, true))
    }
}

fn same_inode(path: &Path, fd: &OwnedFd) -> bool {
    match (std::fs::symlink_metadata(path), rustix::fs::fstat(fd)) {
        (Ok(meta), Ok(stat)) => meta.dev() == stat.st_dev && meta.ino() == stat.st_ino,
        _ => false,
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        for held in self.paths.drain(..) {
            if held.placeholder
                && flock(&held.fd, FlockOperation::NonBlockingLockExclusive).is_ok()
                && same_inode(held.mask.path(), &held.fd)
            {
                // Only an empty placeholder goes; anything else was put there by someone
                // with access beyond the sandbox and is left alone.
                let _ = match &held.mask {
                    Mask::File(p) => match rustix::fs::fstat(&held.fd) {
                        Ok(stat) if stat.st_size == 0 => std::fs::remove_file(p),
                        _ => Ok(()),
                    },
                    Mask::Dir(p, _) => std::fs::remove_dir(p),
                };
            }
        }
    }
}

/// Whether this process may create the namespace: root, or user namespaces allowed (as far
/// as sysctls tell; a security module may still refuse).
pub(crate) fn can_mask() -> bool {
    rustix::process::geteuid().is_root() || user_namespaces_allowed()
}

fn user_namespaces_allowed() -> bool {
    let max = std::fs::read_to_string("/proc/sys/user/max_user_namespaces")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .unwrap_or(0);
    let debian_switch = std::fs::read_to_string("/proc/sys/kernel/unprivileged_userns_clone")
        .map_or(true, |s| s.trim() != "0");
    max > 0 && debian_switch
}

/// Enters a private mount namespace and covers every mask (in the command, before exec;
/// needs the capabilities that are dropped afterwards).
pub(crate) fn apply(masks: &[Mask]) -> Result<(), String> {
    if masks.is_empty() {
        return Ok(());
    }
    enter_namespace()?;
    mount_change(
        "/",
        MountPropagationFlags::REC | MountPropagationFlags::PRIVATE,
    )
    .map_err(|e| format!("cannot make the mounts private: {e}"))?;
    for mask in masks {
        cover(mask).map_err(|e| format!("cannot hide {}: {e}", mask.path().display()))?;
    }
    Ok(())
}

fn cover(mask: &Mask) -> rustix::io::Result<()> {
    let hardening = MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC;
    match mask {
        Mask::Dir(path, kept) if kept.is_empty() => mount(
            "tmpfs",
            path,
            "tmpfs",
            MountFlags::RDONLY | hardening,
            Some(c"size=4k,mode=0555"),
        ),
        Mask::Dir(path, kept) => {
            // Writable while the kept trees get their mount points, read-only after.
            mount(
                "tmpfs",
                path,
                "tmpfs",
                hardening,
                Some(c"size=64k,mode=0555"),
            )?;
            for keep in kept {
                let target = path.join(&keep.rel);
                std::fs::create_dir_all(&target).map_err(|e| {
                    rustix::io::Errno::from_io_error(&e).unwrap_or(rustix::io::Errno::IO)
                })?;
                mount_bind(format!("/proc/self/fd/{}", keep.fd).as_str(), &target)?;
            }
            mount_remount(path, MountFlags::RDONLY | hardening, "size=64k,mode=0555")
        }
        Mask::File(path) => {
            mount_bind("/dev/null", path)?;
            mount_remount(path, MountFlags::BIND | MountFlags::RDONLY | hardening, "")
        }
    }
}

/// `unshare(CLONE_NEWNS)` as root; otherwise a user namespace too, mapping the caller's
/// uid and gid to themselves.
fn enter_namespace() -> Result<(), String> {
    if rustix::process::geteuid().is_root() {
        return unshare(libc::CLONE_NEWNS).map_err(|e| format!("unshare(CLONE_NEWNS): {e}"));
    }
    let uid = rustix::process::getuid().as_raw();
    let gid = rustix::process::getgid().as_raw();
    unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS)
        .map_err(|e| format!("unshare(CLONE_NEWUSER | CLONE_NEWNS): {e}"))?;
    let write = |file: &str, text: String| {
        std::fs::write(Path::new("/proc/self").join(file), text)
            .map_err(|e| format!("cannot write /proc/self/{file}: {e}"))
    };
    write("setgroups", "deny".to_owned())?;
    write("uid_map", format!("{uid} {uid} 1"))?;
    write("gid_map", format!("{gid} {gid} 1"))
}

#[allow(unsafe_code)]
fn unshare(flags: libc::c_int) -> std::io::Result<()> {
    // SAFETY: called in the single-threaded child before exec; unsharing the mount (and
    // user) namespace changes no memory the process relies on.
    if unsafe { libc::unshare(flags) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}
