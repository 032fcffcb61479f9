//! A pids cgroup per command: the one process bound that also holds for root (the kernel
//! never applies `RLIMIT_NPROC` to uid 0).
//!
//! The helper creates `toolgate-sandbox-<pid>` under its own pids cgroup (cgroup v1's
//! `pids` hierarchy, or v2 where the parent delegates `pids`), sets `pids.max`, the command
//! joins it before exec by writing to `cgroup.procs`, and the helper removes it once every
//! process in it is reaped.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The pids cgroup this process is in, if this process may create children in it.
pub(crate) fn pids_parent() -> Option<PathBuf> {
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let membership = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let dir = v1_pids_dir(&mountinfo, &membership).or_else(|| v2_dir(&mountinfo, &membership))?;
    rustix::fs::access(&dir, rustix::fs::Access::WRITE_OK)
        .ok()
        .map(|()| dir)
}

/// `(mount root, mount point)` of the first mount with file-system type `fstype` whose
/// super options satisfy `opts`.
fn mount_of(
    mountinfo: &str,
    fstype: &str,
    opts: impl Fn(&str) -> bool,
) -> Option<(String, String)> {
    mountinfo.lines().find_map(|line| {
        let (left, right) = line.split_once(" - ")?;
        let mut right = right.split(' ');
        let (kind, _source, super_opts) = (right.next()?, right.next()?, right.next()?);
        if kind != fstype || !opts(super_opts) {
            return None;
        }
        let mut left = left.split(' ').skip(3);
        Some((left.next()?.to_owned(), left.next()?.to_owned()))
    })
}

fn under_mount(root: &str, point: &str, path: &str) -> Option<PathBuf> {
    let rel = path.strip_prefix(root.trim_end_matches('/'))?;
    if !(rel.is_empty() || rel.starts_with('/')) {
        return None;
    }
    Some(Path::new(point).join(rel.trim_start_matches('/')))
}

fn v1_pids_dir(mountinfo: &str, membership: &str) -> Option<PathBuf> {
    let (root, point) = mount_of(mountinfo, "cgroup", |o| o.split(',').any(|o| o == "pids"))?;
    let path = membership.lines().find_map(|line| {
        let mut parts = line.splitn(3, ':');
        let (_id, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        controllers.split(',').any(|c| c == "pids").then_some(path)
    })?;
    under_mount(&root, &point, path)
}

fn v2_dir(mountinfo: &str, membership: &str) -> Option<PathBuf> {
    let (root, point) = mount_of(mountinfo, "cgroup2", |_| true)?;
    let path = membership
        .lines()
        .find_map(|line| line.strip_prefix("0::"))?;
    let dir = under_mount(&root, &point, path)?;
    let delegated = std::fs::read_to_string(dir.join("cgroup.subtree_control")).ok()?;
    delegated
        .split_whitespace()
        .any(|c| c == "pids")
        .then_some(dir)
}

/// One command's cgroup, removed on drop (once the helper has reaped everything in it).
#[derive(Debug)]
pub(crate) struct PidsCgroup {
    dir: PathBuf,
    /// Open for writing: the command writes `0` to join before it execs.
    procs: File,
}

impl PidsCgroup {
    /// Creates the cgroup under `parent` with `pids.max = max`.
    pub(crate) fn create(parent: &Path, max: u64) -> std::io::Result<Self> {
        let dir = parent.join(format!("toolgate-sandbox-{}", std::process::id()));
        match std::fs::create_dir(&dir) {
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                // Left behind by a helper that was killed with this pid; empty by now.
                let _ = std::fs::remove_dir(&dir);
                std::fs::create_dir(&dir)?;
            }
            other => other?,
        }
        let made = (|| {
            std::fs::write(dir.join("pids.max"), max.to_string())?;
            OpenOptions::new()
                .write(true)
                .open(dir.join("cgroup.procs"))
        })();
        match made {
            Ok(procs) => Ok(PidsCgroup { dir, procs }),
            Err(e) => {
                let _ = std::fs::remove_dir(&dir);
                Err(e)
            }
        }
    }

    /// Moves the calling process into the cgroup (called in the child before exec).
    pub(crate) fn join(&self) -> std::io::Result<()> {
        (&self.procs).write_all(b"0")
    }
}

impl Drop for PidsCgroup {
    /// A cgroup still in use cannot be removed; it is left for the next helper with the
    /// same pid to clear.
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO: &str = "\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
36 31 0:33 / /sys/fs/cgroup/devices rw,relatime - cgroup cgroup rw,devices
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
41 31 0:38 /inner /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";

    #[test]
    fn finds_the_v1_pids_hierarchy_and_our_place_in_it() {
        let membership = "5:devices:/\n8:pids:/user.slice/a\n0::/\n";
        assert_eq!(
            v1_pids_dir(MOUNTINFO, membership),
            Some(PathBuf::from("/sys/fs/cgroup/pids/user.slice/a"))
        );
        assert_eq!(v1_pids_dir(MOUNTINFO, "0::/\n"), None);
    }

    #[test]
    fn a_v2_path_is_taken_relative_to_the_mount_root() {
        assert_eq!(
            mount_of(MOUNTINFO, "cgroup2", |_| true),
            Some(("/inner".to_owned(), "/sys/fs/cgroup/unified".to_owned()))
        );
        assert_eq!(
            under_mount("/inner", "/sys/fs/cgroup/unified", "/inner/job"),
            Some(PathBuf::from("/sys/fs/cgroup/unified/job"))
        );
        assert_eq!(under_mount("/inner", "/m", "/elsewhere"), None);
        assert_eq!(under_mount("/inner", "/m", "/innermost"), None);
    }
}
