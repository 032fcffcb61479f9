//! Hiding toolgate's own state inside the workspace (its data dir: audit log, approvals,
//! grants; its config file) from a sandboxed command.
//!
//! Landlock can only grant, and the whole workspace is granted, so the command gets a
//! private mount namespace instead, in which each protected directory is covered by an
//! empty read-only tmpfs and each protected file by a read-only bind of `/dev/null`. The
//! command sees them empty and cannot write, replace or remove them; the gateway's view is
//! untouched. Root can always do this; another user needs unprivileged user namespaces
//! (then its uid and gid map to themselves). A protected path that does not exist when the
//! call starts cannot be covered.

use std::path::{Path, PathBuf};

use rustix::mount::{
    MountFlags, MountPropagationFlags, mount, mount_bind, mount_change, mount_remount,
};

/// One protected path and how to cover it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Mask {
    Dir(PathBuf),
    File(PathBuf),
}

/// The masks for the protected paths that exist now (symlinks are never followed).
pub(crate) fn masks(protected: &[PathBuf]) -> Vec<Mask> {
    protected
        .iter()
        .filter_map(|p| {
            let meta = std::fs::symlink_metadata(p).ok()?;
            if meta.is_dir() {
                Some(Mask::Dir(p.clone()))
            } else if meta.is_file() {
                Some(Mask::File(p.clone()))
            } else {
                None
            }
        })
        .collect()
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
        cover(mask).map_err(|e| {
            let (Mask::Dir(p) | Mask::File(p)) = mask;
            format!("cannot hide {}: {e}", p.display())
        })?;
    }
    Ok(())
}

fn cover(mask: &Mask) -> rustix::io::Result<()> {
    let hardening = MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC;
    match mask {
        Mask::Dir(path) => mount(
            "tmpfs",
            path,
            "tmpfs",
            MountFlags::RDONLY | hardening,
            Some(c"size=4k,mode=0555"),
        ),
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
