//! The Landlock ruleset of a sandboxed command: which trees it may read, which it may
//! write, and (without network) no TCP at all; signals and abstract Unix sockets are scoped
//! to the sandbox.
//!
//! Landlock only grants, so `/etc` is granted entry by entry, leaving out its secrets.
//! Rules attach to inodes, so a symlink is granted where it leads (`/etc/resolv.conf`).
//! Rights from newer ABIs are requested best-effort: an older kernel enforces what it
//! knows, and [`RulesetStatus`] says whether anything was enforced at all.

use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, NetPort, PathBeneath,
    PathFd, Ruleset, RulesetAttr, RulesetCreated, RulesetCreatedAttr, Scope,
};

use super::SandboxPolicy;
use super::error::SandboxError;

/// The newest ABI whose rights are requested (older kernels get what they support).
const TARGET_ABI: ABI = ABI::V9;

/// Read-only (and executable) system trees; missing ones are skipped.
const SYSTEM_READ: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/proc", "/sys",
];

/// Devices a command may read and write.
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
];

/// Entries of `/etc` never granted: password hashes, sudo rules, stored network and
/// Kerberos credentials, container daemon keys.
const ETC_SECRETS: &[&str] = &[
    "shadow",
    "shadow-",
    "gshadow",
    "gshadow-",
    "sudoers",
    "sudoers.d",
    "NetworkManager",
    "wireguard",
    "krb5.keytab",
    "docker",
    "credstore",
    "credstore.encrypted",
    "libvirt",
];

/// Tells a secret entry of a partly secret directory.
type IsSecret = fn(&str) -> bool;

/// `/etc` directories granted entry by entry, leaving out the entries `secret` names.
const ETC_PARTIAL: &[(&str, IsSecret)] = &[
    // SSH host private keys (the `.pub` halves and client config stay readable).
    ("ssh", |name| {
        name.starts_with("ssh_host_") && !name.ends_with(".pub")
    }),
    // TLS private keys.
    ("ssl", |name| name == "private"),
    // Old password hashes.
    ("security", |name| name == "opasswd"),
];

/// Builds the ruleset (not yet enforced: the command enforces it on itself before exec).
/// `tmp` is the command's private temporary directory.
/// `egress`: the proxy's socket, granted, and TCP connections allowed to the relay's port
/// only.
pub(crate) fn ruleset(
    policy: &SandboxPolicy,
    tmp: &Path,
    egress: Option<&Path>,
) -> Result<RulesetCreated, SandboxError> {
    let read = AccessFs::from_read(TARGET_ABI);
    let all = AccessFs::from_all(TARGET_ABI);
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(all)
        .and_then(|r| r.scope(Scope::from_all(TARGET_ABI)))
        .map_err(landlock_error)?;
    if !policy.allow_network || egress.is_some() {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(TARGET_ABI))
            .map_err(landlock_error)?;
    }
    let mut created = ruleset.create().map_err(landlock_error)?;
    if let Some(socket) = egress {
        created = created
            .add_rule(NetPort::new(
                super::egress_relay::EGRESS_PORT,
                AccessNet::ConnectTcp,
            ))
            .map_err(|e| SandboxError::Landlock(format!("rule for the egress port: {e}")))?;
        created = grant(created, socket, all, true)?;
    }

    let mut grants: Vec<(PathBuf, BitFlags<AccessFs>)> = Vec::new();
    grants.extend(SYSTEM_READ.iter().map(|p| (PathBuf::from(p), read)));
    grants.extend(
        etc_entries(Path::new("/etc"))
            .into_iter()
            .map(|p| (p, read)),
    );
    grants.extend(policy.extra_read_paths.iter().map(|p| (p.clone(), read)));
    grants.extend(DEVICES.iter().map(|p| (PathBuf::from(p), all)));
    for (path, access) in grants {
        created = grant(created, &path, access, false)?;
    }
    created = grant(created, &policy.workspace, all, true)?;
    for path in &policy.extra_write_paths {
        created = grant(created, path, all, true)?;
    }
    grant(created, tmp, all, true)
}

/// Adds one `path`-beneath rule; a missing path is skipped unless `required`. Directory-only
/// rights are dropped for a file.
fn grant(
    created: RulesetCreated,
    path: &Path,
    access: BitFlags<AccessFs>,
    required: bool,
) -> Result<RulesetCreated, SandboxError> {
    let fd = match PathFd::new(path) {
        Ok(fd) => fd,
        Err(_) if !required => return Ok(created),
        Err(e) => {
            return Err(SandboxError::Landlock(format!(
                "cannot open {}: {e}",
                path.display()
            )));
        }
    };
    let access = match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => access,
        _ => access & AccessFs::from_file(TARGET_ABI),
    };
    created
        .add_rule(PathBeneath::new(fd, access))
        .map_err(|e| SandboxError::Landlock(format!("rule for {}: {e}", path.display())))
}

/// Every entry of `/etc` but the secrets; partly secret directories entry by entry.
fn etc_entries(etc: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for name in names_in(etc) {
        if ETC_SECRETS.contains(&name.as_str()) {
            continue;
        }
        match ETC_PARTIAL.iter().find(|(dir, _)| *dir == name) {
            Some((_, secret)) => out.extend(
                names_in(&etc.join(&name))
                    .into_iter()
                    .filter(|inner| !secret(inner))
                    .map(|inner| etc.join(&name).join(inner)),
            ),
            None => out.push(etc.join(name)),
        }
    }
    out
}

/// The secrets of `/etc` that exist: covered in the namespace view.
pub(crate) fn etc_secret_paths(etc: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = ETC_SECRETS
        .iter()
        .map(|name| etc.join(name))
        .filter(|p| p.symlink_metadata().is_ok())
        .collect();
    for (dir, secret) in ETC_PARTIAL {
        out.extend(
            names_in(&etc.join(dir))
                .into_iter()
                .filter(|inner| secret(inner))
                .map(|inner| etc.join(dir).join(inner)),
        );
    }
    out
}

fn names_in(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .collect()
}

fn landlock_error(e: landlock::RulesetError) -> SandboxError {
    SandboxError::Landlock(e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn etc_secrets_are_left_out_and_partial_dirs_opened() {
        let etc = tempfile::tempdir().unwrap();
        for dir in ["ssh", "ssl/private", "ssl/certs", "apt"] {
            std::fs::create_dir_all(etc.path().join(dir)).unwrap();
        }
        for file in [
            "shadow",
            "passwd",
            "ssh/ssh_host_ed25519_key",
            "ssh/ssh_host_ed25519_key.pub",
            "ssh/ssh_config",
        ] {
            std::fs::write(etc.path().join(file), "").unwrap();
        }
        let mut got: Vec<String> = etc_entries(etc.path())
            .iter()
            .map(|p| p.strip_prefix(etc.path()).unwrap().display().to_string())
            .collect();
        got.sort();
        assert_eq!(
            got,
            [
                "apt",
                "passwd",
                "ssh/ssh_config",
                "ssh/ssh_host_ed25519_key.pub",
                "ssl/certs"
            ]
        );
    }
}
