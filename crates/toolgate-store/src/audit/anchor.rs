//! The head anchor: what the keyed writer last knew to be durable in a log — `seq` and `hash`
//! of its last fsynced record, and `keyed_from`, the first seq written with a MAC — kept
//! beside the key, outside the data dir, and MACed. A chain alone cannot show that its end
//! was cut off or that the whole file was replaced; the anchor can, since nobody without the
//! key can write one.
//!
//! One anchor per log, `anchors/<sha256 of the log's absolute path, 32 hex>.json` in the key
//! directory. It only moves forward: updates happen under a lock on the anchor and are
//! skipped when another process already anchored a later record. It is written after the
//! records it names are fsynced, so a crash leaves it behind the file, never ahead of it.

use std::fs::{self, File, OpenOptions};
use std::io::{ErrorKind, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::chain::sha256_hex;
use super::key::AuditKey;
use crate::{StoreError, StoreResult};

/// The anchored head of one log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Anchor {
    /// The log's absolute path when the anchor was written.
    pub log: String,
    pub seq: u64,
    pub hash: String,
    /// Records from this seq on must carry a MAC; earlier ones predate the key.
    pub keyed_from: u64,
    #[serde(default)]
    pub mac: String,
}

impl Anchor {
    fn message(&self) -> String {
        format!(
            "toolgate-audit-anchor\n{}\n{}\n{}\n{}",
            self.log, self.seq, self.hash, self.keyed_from
        )
    }
}

/// Where a log's anchor lives, and the key that signs it.
#[derive(Debug, Clone)]
pub(crate) struct AnchorFile {
    key: AuditKey,
    log: String,
    path: PathBuf,
}

impl AnchorFile {
    pub(crate) fn for_log(key: &AuditKey, jsonl: &Path) -> AnchorFile {
        let log = resolved_path(jsonl).display().to_string();
        let name = format!("{}.json", &sha256_hex(log.as_bytes())[..32]);
        AnchorFile {
            path: key.dir().join("anchors").join(name),
            key: key.clone(),
            log,
        }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The anchor, if one was written; an anchor whose MAC does not verify is an error.
    pub(crate) fn load(&self) -> StoreResult<Option<Anchor>> {
        let text = match fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(self.io_err("cannot read the audit anchor", e)),
        };
        let anchor: Anchor = serde_json::from_str(&text).map_err(|e| {
            StoreError::Corrupt(format!(
                "the audit anchor {} is damaged: {e}",
                self.path.display()
            ))
        })?;
        if !self.key.verify(anchor.message().as_bytes(), &anchor.mac) {
            return Err(StoreError::Corrupt(format!(
                "the audit anchor {} does not carry a valid MAC (written without the key)",
                self.path.display()
            )));
        }
        Ok(Some(anchor))
    }

    /// Writes an anchor for `seq`/`hash` unless one for a later record exists; creates the
    /// anchor with `keyed_from` when there is none.
    pub(crate) fn advance(&self, seq: u64, hash: &str, keyed_from: u64) -> StoreResult<()> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| self.io_err("cannot create the directory of", e))?;
        let lock_path = self.path.with_extension("lock");
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(&lock_path)
            .map_err(|e| self.io_err("cannot open the lock of", e))?;
        lock.lock()
            .map_err(|e| self.io_err("cannot lock the audit anchor", e))?;
        let current = self.load()?;
        let keyed_from = match &current {
            Some(a) if a.seq >= seq => return Ok(()),
            Some(a) => a.keyed_from,
            None => keyed_from,
        };
        let mut anchor = Anchor {
            log: self.log.clone(),
            seq,
            hash: hash.to_owned(),
            keyed_from,
            mac: String::new(),
        };
        anchor.mac = self.key.mac(anchor.message().as_bytes());
        let tmp = self.path.with_extension("tmp");
        let text = serde_json::to_string(&anchor)
            .map_err(|e| StoreError::Encode(format!("audit anchor: {e}")))?;
        let mut file = OpenOptions::new()
            .create(true)
            .truncate(true)
            .write(true)
            .mode(0o600)
            .open(&tmp)
            .map_err(|e| self.io_err("cannot write the audit anchor", e))?;
        file.write_all(text.as_bytes())
            .map_err(|e| self.io_err("cannot write the audit anchor", e))?;
        drop(file);
        fs::rename(&tmp, &self.path).map_err(|e| self.io_err("cannot replace", e))?;
        drop::<File>(lock);
        Ok(())
    }

    fn io_err(&self, what: &str, e: std::io::Error) -> StoreError {
        StoreError::io(format!("{what} {}", self.path.display()), e)
    }
}

/// `path` made absolute with its longest existing ancestor resolved, so the same log (or
/// key dir) is named the same way whether or not it, or its directory, exists yet.
pub fn resolved_path(path: &Path) -> PathBuf {
    let path = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    let mut tail = Vec::new();
    let mut head = path.as_path();
    loop {
        if let Ok(real) = head.canonicalize() {
            return tail.iter().rev().fold(real, |acc, part| acc.join(part));
        }
        match (head.parent(), head.file_name()) {
            (Some(parent), Some(name)) => {
                tail.push(name.to_owned());
                head = parent;
            }
            _ => return path,
        }
    }
}
