//! The audit key: the secret that makes the chain unforgeable by anyone who can only write
//! the data dir (the tools, the sandboxed shell, a hostile MCP server confined to it).
//!
//! One 32-byte key per key directory, `audit.key` (hex, mode 0600, in a 0700 directory),
//! created on the first keyed open and never inside the data dir or the workspace (the
//! binary checks where it is; see `docs/audit.md`). Every record line carries
//! `"mac": HMAC-SHA256(key, hash)`, and the key directory also holds each log's head anchor
//! (`super::anchor`). The key never leaves this process: only MACs are written.

use std::fs::{self, OpenOptions};
use std::io::{ErrorKind, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use toolgate_store::{StoreError, StoreResult};

/// The key file's name inside the key directory.
pub const KEY_FILE: &str = "audit.key";

const KEY_LEN: usize = 32;
const BLOCK: usize = 64;

/// The secret keying the audit chain. `Debug` shows the directory only.
#[derive(Clone)]
pub struct AuditKey {
    dir: PathBuf,
    secret: [u8; KEY_LEN],
}

impl std::fmt::Debug for AuditKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditKey")
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

impl AuditKey {
    /// Loads the key in `dir`, creating the directory (0700) and a fresh random key (0600)
    /// if there is none. Refuses a key or directory that group or others may access.
    pub fn open_or_create(dir: &Path) -> StoreResult<AuditKey> {
        if let Some(key) = AuditKey::open_existing(dir)? {
            return Ok(key);
        }
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| io_err("cannot create the audit key directory", dir, e))?;
        check_private(dir)?;
        let mut secret = [0u8; KEY_LEN];
        getrandom::fill(&mut secret).map_err(|e| {
            StoreError::io(
                "cannot draw a random audit key",
                std::io::Error::other(e.to_string()),
            )
        })?;
        let path = dir.join(KEY_FILE);
        let created = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path);
        match created {
            Ok(mut file) => {
                file.write_all(format!("{}\n", hex::encode(secret)).as_bytes())
                    .and_then(|()| file.sync_all())
                    .map_err(|e| io_err("cannot write the audit key", &path, e))?;
                Ok(AuditKey {
                    dir: dir.to_owned(),
                    secret,
                })
            }
            // Another process created it first: use theirs.
            Err(e) if e.kind() == ErrorKind::AlreadyExists => AuditKey::open_existing(dir)?
                .ok_or_else(|| StoreError::NotFound(format!("audit key {}", path.display()))),
            Err(e) => Err(io_err("cannot create the audit key", &path, e)),
        }
    }

    /// Loads the key in `dir`; `None` if there is none. Never creates anything.
    pub fn open_existing(dir: &Path) -> StoreResult<Option<AuditKey>> {
        let path = dir.join(KEY_FILE);
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_err("cannot read the audit key", &path, e)),
        };
        check_private(dir)?;
        check_private(&path)?;
        let bytes = hex::decode(text.trim()).ok().filter(|b| b.len() == KEY_LEN);
        let Some(bytes) = bytes else {
            return Err(StoreError::Corrupt(format!(
                "the audit key {} is not {KEY_LEN} bytes of hex",
                path.display()
            )));
        };
        let mut secret = [0u8; KEY_LEN];
        secret.copy_from_slice(&bytes);
        Ok(Some(AuditKey {
            dir: dir.to_owned(),
            secret,
        }))
    }

    /// The directory holding the key and the anchors.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Lowercase hex of HMAC-SHA256(key, `message`) (RFC 2104).
    pub(crate) fn mac(&self, message: &[u8]) -> String {
        let mut ipad = [0x36u8; BLOCK];
        let mut opad = [0x5cu8; BLOCK];
        for (i, b) in self.secret.iter().enumerate() {
            ipad[i] ^= b;
            opad[i] ^= b;
        }
        let inner = Sha256::new()
            .chain_update(ipad)
            .chain_update(message)
            .finalize();
        let outer = Sha256::new()
            .chain_update(opad)
            .chain_update(inner)
            .finalize();
        hex::encode(outer)
    }

    /// Whether `mac` is the MAC of `message` (compared in constant time).
    pub(crate) fn verify(&self, message: &[u8], mac: &str) -> bool {
        let expected = self.mac(message);
        expected.len() == mac.len()
            && expected
                .bytes()
                .zip(mac.bytes())
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0
    }

    #[cfg(test)]
    fn from_secret(secret: &[u8]) -> AuditKey {
        let mut key = [0u8; KEY_LEN];
        key[..secret.len()].copy_from_slice(secret);
        AuditKey {
            dir: PathBuf::new(),
            secret: key,
        }
    }
}

/// The default key directory: `$TOOLGATE_KEY_DIR`, else `$XDG_CONFIG_HOME/toolgate/keys`,
/// else `$HOME/.config/toolgate/keys`, from the values the caller read from its environment.
pub fn default_key_dir(
    toolgate_key_dir: Option<&str>,
    xdg_config_home: Option<&str>,
    home: Option<&str>,
) -> Option<PathBuf> {
    let set = |v: Option<&str>| v.filter(|s| !s.is_empty()).map(PathBuf::from);
    set(toolgate_key_dir)
        .or_else(|| set(xdg_config_home).map(|d| d.join("toolgate").join("keys")))
        .or_else(|| set(home).map(|h| h.join(".config").join("toolgate").join("keys")))
}

fn check_private(path: &Path) -> StoreResult<()> {
    let meta = fs::metadata(path).map_err(|e| io_err("cannot stat", path, e))?;
    let mode = meta.permissions().mode();
    if mode & 0o077 != 0 {
        return Err(StoreError::Corrupt(format!(
            "{} is accessible to group or others (mode {:o}); the audit key must be private \
             (chmod go-rwx)",
            path.display(),
            mode & 0o777
        )));
    }
    Ok(())
}

fn io_err(what: &str, path: &Path, e: std::io::Error) -> StoreError {
    StoreError::io(format!("{what} {}", path.display()), e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_sha256_matches_rfc_4231_test_case_2() {
        let key = AuditKey::from_secret(b"Jefe");
        let mac = key.mac(b"what do ya want for nothing?");
        assert_eq!(
            mac,
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        assert!(key.verify(b"what do ya want for nothing?", &mac));
        assert!(!key.verify(b"what do ya want for nothing!", &mac));
    }

    #[test]
    fn default_dir_prefers_the_override_then_xdg_then_home() {
        let d = |a, b, c| default_key_dir(a, b, c);
        assert_eq!(d(Some("/k"), Some("/x"), Some("/h")), Some("/k".into()));
        assert_eq!(
            d(None, Some("/x"), Some("/h")),
            Some("/x/toolgate/keys".into())
        );
        assert_eq!(
            d(Some(""), None, Some("/h")),
            Some("/h/.config/toolgate/keys".into())
        );
        assert_eq!(d(None, None, None), None);
    }
}
