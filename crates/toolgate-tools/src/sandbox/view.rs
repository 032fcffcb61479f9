//! The namespace view of a sandboxed process: what exists for it at all. Built by
//! bubblewrap (`bwrap`, Debian's `bubblewrap`, the mechanism Flatpak and agent sandboxes
//! use) rather than by hand-written mount code.
//!
//! The view is a fresh tmpfs root holding only: the system trees read-only (`/usr`, `/bin`,
//! `/sbin`, `/lib*`, `/opt`), `/etc` read-only with its secrets covered, a fresh `/proc` of
//! a private PID namespace, a minimal `/dev`, the command's private `/tmp`, the workspace
//! and the explicit grants (every bind `nosuid` and `nodev`), toolgate's own state inside
//! them covered by empty read-only mounts (see `mask`), and the inner stage's executable.
//! The data dir, configuration, key dir and home directories simply do not exist in it.
//! IPC, UTS, PID and (unless the policy shares the host's) network namespaces are private;
//! capabilities are dropped but `CAP_DAC_OVERRIDE` (a root gateway still writes files of
//! other users in its workspace).
//!
//! Because the view is built before the command's working directory is entered, and the
//! directory is then opened beneath the workspace inside the view (see `inner`), no path
//! is resolved in the host's view after a check.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::SandboxPolicy;
use super::mask::Mask;

/// Where the inner stage's executable appears inside the view.
pub(crate) const INNER_EXE: &str = "/run/toolgate/sandbox";
/// Where the egress proxy's socket appears inside the view.
pub(crate) const EGRESS_SOCKET: &str = "/run/toolgate/egress.sock";
/// The command's private temporary directory inside the view.
pub(crate) const VIEW_TMP: &str = "/tmp";

/// Read-only system trees (a symlink, as `/bin` → `usr/bin` on merged-/usr systems, is
/// recreated as the same symlink); missing ones are skipped.
const SYSTEM_TREES: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt",
];

/// Where bubblewrap is looked for, in order, before `PATH`.
const BWRAP_CANDIDATES: &[&str] = &["/usr/bin/bwrap", "/usr/local/bin/bwrap"];

/// The bubblewrap this process uses, and whether it can build a view here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Bwrap {
    Ready { path: PathBuf, version: String },
    Missing(String),
}

/// Finds bubblewrap and checks once per process that it can build a view here (it runs
/// `bwrap … true` with the namespaces a command gets).
pub(crate) fn bwrap() -> &'static Bwrap {
    static FOUND: OnceLock<Bwrap> = OnceLock::new();
    FOUND.get_or_init(find_bwrap)
}

/// The checked bubblewrap's path, or why there is none.
pub(crate) fn checked_bwrap() -> Result<PathBuf, String> {
    match bwrap() {
        Bwrap::Ready { path, .. } => Ok(path.clone()),
        Bwrap::Missing(why) => Err(why.clone()),
    }
}

fn find_bwrap() -> Bwrap {
    // `TOOLGATE_BWRAP`: this bubblewrap and no other (a build of one's own; or a path
    // that does not exist, to see what happens on a machine without one).
    if let Some(chosen) = std::env::var_os("TOOLGATE_BWRAP").filter(|v| !v.is_empty()) {
        let path = PathBuf::from(chosen);
        if !path.is_file() {
            return Bwrap::Missing(format!(
                "TOOLGATE_BWRAP names {}, which does not exist",
                path.display()
            ));
        }
        return check(path);
    }
    let on_path = std::env::var_os("PATH")
        .map(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join("bwrap"))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    let Some(path) = BWRAP_CANDIDATES
        .iter()
        .map(PathBuf::from)
        .chain(on_path)
        .find(|p| p.is_file())
    else {
        return Bwrap::Missing(
            "bubblewrap is not installed (Debian/Ubuntu: apt-get install bubblewrap; \
             Fedora: dnf install bubblewrap)"
                .to_owned(),
        );
    };
    check(path)
}

/// Whether `path` is a bubblewrap that can build a view here.
fn check(path: PathBuf) -> Bwrap {
    let version = std::process::Command::new(&path)
        .arg("--version")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    let mut check = std::process::Command::new(&path);
    check.args(namespace_args(false)).args([
        "--ro-bind",
        "/",
        "/",
        "--proc",
        "/proc",
        "--",
        "/bin/true",
    ]);
    match check.output() {
        Ok(out) if out.status.success() => Bwrap::Ready { path, version },
        Ok(out) => Bwrap::Missing(format!(
            "{} cannot create the sandbox's namespaces here: {} (as a user other than root \
             it needs unprivileged user namespaces: sysctl user.max_user_namespaces > 0, \
             kernel.apparmor_restrict_unprivileged_userns = 0)",
            path.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )),
        Err(e) => Bwrap::Missing(format!("cannot run {}: {e}", path.display())),
    }
}

/// Whether this process is root (then no user namespace is needed and capabilities are
/// dropped explicitly).
fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

fn namespace_args(share_net: bool) -> Vec<&'static str> {
    let mut args = vec![
        "--die-with-parent",
        "--new-session",
        "--unshare-ipc",
        "--unshare-pid",
        "--unshare-uts",
        "--unshare-cgroup-try",
    ];
    if !share_net {
        args.push("--unshare-net");
    }
    if is_root() {
        // CAP_SETPCAP only until the inner stage has emptied the bounding set.
        args.extend([
            "--cap-drop",
            "ALL",
            "--cap-add",
            "CAP_DAC_OVERRIDE",
            "--cap-add",
            "CAP_SETPCAP",
        ]);
    } else {
        args.extend(["--unshare-user", "--disable-userns"]);
    }
    args
}

/// What one view holds.
#[derive(Debug)]
pub(crate) struct ViewSpec<'a> {
    pub policy: &'a SandboxPolicy,
    /// The command's private temporary directory on the host (`/tmp` in the view); `None`:
    /// an empty tmpfs.
    pub tmp: Option<&'a Path>,
    pub masks: &'a [Mask],
    /// The executable that runs the inner stage (this binary), bound at [`INNER_EXE`].
    pub exe: Option<&'a Path>,
    /// The egress proxy's socket on the host, bound at [`EGRESS_SOCKET`].
    pub egress: Option<&'a Path>,
}

/// bubblewrap's arguments up to and including `--`.
pub(crate) fn args(spec: &ViewSpec<'_>) -> Vec<OsString> {
    let mut out: Vec<OsString> = namespace_args(spec.policy.allow_network && spec.egress.is_none())
        .into_iter()
        .map(OsString::from)
        .collect();
    let mut push = |items: &[&dyn AsRefOs]| out.extend(items.iter().map(|i| i.os()));
    for tree in SYSTEM_TREES {
        let path = Path::new(tree);
        match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.is_symlink() => {
                if let Ok(target) = std::fs::read_link(path) {
                    push(&[&"--symlink", &target, &path]);
                }
            }
            Ok(meta) if meta.is_dir() => push(&[&"--ro-bind", &path, &path]),
            _ => {}
        }
    }
    push(&[&"--ro-bind", &"/etc", &"/etc"]);
    for secret in super::rules::etc_secret_paths(Path::new("/etc")) {
        match std::fs::symlink_metadata(&secret) {
            Ok(meta) if meta.is_dir() => push(&[&"--tmpfs", &secret, &"--remount-ro", &secret]),
            Ok(meta) if meta.is_file() => push(&[&"--ro-bind", &"/dev/null", &secret]),
            _ => {}
        }
    }
    if spec.policy.allow_network && spec.egress.is_none() {
        // A resolver configuration that points elsewhere (systemd-resolved's stub file).
        if let Ok(target) = std::fs::canonicalize("/etc/resolv.conf")
            && !target.starts_with("/etc")
        {
            push(&[&"--ro-bind", &target, &target]);
        }
    }
    push(&[&"--proc", &"/proc", &"--dev", &"/dev"]);
    match spec.tmp {
        Some(tmp) => push(&[&"--bind", &tmp, &VIEW_TMP]),
        None => push(&[&"--tmpfs", &VIEW_TMP]),
    }
    let mut bound: Vec<PathBuf> = Vec::new();
    for path in &spec.policy.extra_read_paths {
        if let Ok(real) = path.canonicalize() {
            push(&[&"--ro-bind", &real, &real]);
            bound.push(real);
        }
    }
    for path in std::iter::once(&spec.policy.workspace).chain(&spec.policy.extra_write_paths) {
        let real = path.canonicalize().unwrap_or_else(|_| path.clone());
        push(&[&"--bind", &real, &real]);
        bound.push(real);
    }
    for mask in spec.masks {
        let path = mask.path();
        let real = path
            .parent()
            .and_then(|p| p.canonicalize().ok())
            .map_or_else(
                || path.to_path_buf(),
                |p| p.join(path.file_name().unwrap_or_default()),
            );
        if !bound.iter().any(|b| real.starts_with(b)) {
            continue;
        }
        match mask {
            Mask::File(_) => push(&[&"--ro-bind", &"/dev/null", &real]),
            Mask::Dir(_, kept) => {
                push(&[&"--perms", &"0555", &"--tmpfs", &real]);
                for keep in kept {
                    push(&[&"--bind-fd", &keep.fd.to_string(), &real.join(&keep.rel)]);
                }
                push(&[&"--remount-ro", &real]);
            }
        }
    }
    if let Some(exe) = spec.exe {
        push(&[&"--ro-bind", &exe, &INNER_EXE]);
    }
    if let Some(socket) = spec.egress {
        push(&[&"--bind", &socket, &EGRESS_SOCKET]);
    }
    push(&[&"--"]);
    out
}

/// Anything bubblewrap takes as an argument.
trait AsRefOs {
    fn os(&self) -> OsString;
}

impl AsRefOs for &str {
    fn os(&self) -> OsString {
        OsString::from(*self)
    }
}

impl AsRefOs for String {
    fn os(&self) -> OsString {
        OsString::from(self)
    }
}

impl AsRefOs for &Path {
    fn os(&self) -> OsString {
        self.as_os_str().to_owned()
    }
}

impl AsRefOs for PathBuf {
    fn os(&self) -> OsString {
        self.as_os_str().to_owned()
    }
}

/// A view for a program toolgate starts itself with the host's network (the browser, whose
/// DevTools connection is a TCP socket on loopback and whose every request already goes
/// through the guard): bubblewrap's path and its arguments up to and including `--`, with
/// the system trees read-only, an empty `/tmp`, and `writable` (each must exist) the only
/// trees it may change. Fails when bubblewrap cannot build a view here.
pub fn shared_network_view(writable: &[PathBuf]) -> Result<(PathBuf, Vec<OsString>), String> {
    let bwrap = checked_bwrap()?;
    let (first, rest) = writable
        .split_first()
        .ok_or_else(|| "a view needs one writable tree".to_owned())?;
    let mut policy = SandboxPolicy::new(first.clone());
    policy.allow_network = true;
    policy.extra_write_paths = rest.to_vec();
    let spec = ViewSpec {
        policy: &policy,
        tmp: None,
        masks: &[],
        exe: None,
        egress: None,
    };
    Ok((bwrap, args(&spec)))
}
