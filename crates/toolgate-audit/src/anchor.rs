//! The head anchor: what the keyed writer last knew to be durable in a log — `seq` and `hash`
//! of its last fsynced record, and `keyed_from`, the first seq written with a MAC — kept
//! beside the key, outside the data dir, and MACed. A chain alone cannot show that its end
//! was cut off or that the whole file was replaced; the anchor can, since nobody without the
//! key can write one.
//!
//! The anchor is bound to the log's identity, not only to where it was found: `first` is the
//! hash of the log's first record (which every later record chains to), so a different log —
//! rebuilt at the same path, or reached through a link — is told apart even where its head
//! would look plausible. It also lists the torn tails set aside as evidence files (name,
//! length, sha256, whether a human accepted them): deleting or editing one shows.
//!
//! One anchor per log, `anchors/<sha256 of the log's path, 32 hex>.json` in the key
//! directory, the path taken as [`super::place::anchor_path`] spells it (no link below the
//! data dir's parent can change it). It only moves forward: updates happen under a lock on
//! the anchor and are skipped when another process already anchored a later record. It is
//! written after the records it names are fsynced, so a crash leaves it behind the file,
//! never ahead of it.

use std::fs::{self, File, OpenOptions};
use std::io::{ErrorKind, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::chain::{GENESIS_HASH, sha256_hex};
use super::key::AuditKey;
use toolgate_store::{StoreError, StoreResult};

/// The anchor format written now: v2 covers `first` and `evidence` with its MAC.
const VERSION: u32 = 2;

/// A torn tail set aside beside the log, as the anchor remembers it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Evidence {
    /// The file's name in the log's directory.
    pub name: String,
    pub len: u64,
    pub sha256: String,
    /// A human looked at it (`toolgate audit verify --accept-evidence`): no longer a failure
    /// while it stays as it was.
    #[serde(default)]
    pub accepted: bool,
}

/// The anchored head of one log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Anchor {
    /// Format version; 1 (absent) for anchors written before `first` and `evidence`.
    #[serde(default = "v1")]
    pub v: u32,
    /// The log's absolute path when the anchor was written.
    pub log: String,
    pub seq: u64,
    pub hash: String,
    /// Records from this seq on must carry a MAC; earlier ones predate the key.
    pub keyed_from: u64,
    /// Hash of the log's first record: which chain this is. `None` while the log is empty
    /// (and in v1 anchors).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<Evidence>,
    #[serde(default)]
    pub mac: String,
}

fn v1() -> u32 {
    1
}

impl Anchor {
    fn message(&self) -> String {
        let mut m = format!(
            "toolgate-audit-anchor\n{}\n{}\n{}\n{}",
            self.log, self.seq, self.hash, self.keyed_from
        );
        if self.v >= 2 {
            m.push_str(&format!(
                "\nv{}\nfirst {}",
                self.v,
                self.first.as_deref().unwrap_or("-")
            ));
            for e in &self.evidence {
                m.push_str(&format!(
                    "\nevidence {} {} {} {}",
                    e.sha256, e.len, e.accepted, e.name
                ));
            }
        }
        m
    }

    /// A new anchor for a log whose chain ends at `seq`/`hash`.
    fn fresh(log: &str, seq: u64, hash: &str, keyed_from: u64) -> Anchor {
        Anchor {
            v: VERSION,
            log: log.to_owned(),
            seq,
            hash: hash.to_owned(),
            keyed_from,
            first: None,
            evidence: Vec::new(),
            mac: String::new(),
        }
    }
}

/// Where a log's anchor lives, and the key that signs it.
#[derive(Debug, Clone)]
pub(crate) struct AnchorFile {
    key: AuditKey,
    log: String,
    path: PathBuf,
    /// Hash of the log's first record, once known: written into the anchor if it lacks one.
    first: Option<String>,
}

impl AnchorFile {
    pub(crate) fn for_log(key: &AuditKey, jsonl: &Path) -> AnchorFile {
        let log = super::place::anchor_path(jsonl).display().to_string();
        let name = format!("{}.json", &sha256_hex(log.as_bytes())[..32]);
        AnchorFile {
            path: key.dir().join("anchors").join(name),
            key: key.clone(),
            log,
            first: None,
        }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Remembers the hash of the log's first record (read at open, or written since).
    pub(crate) fn note_first(&mut self, hash: &str) {
        if self.first.is_none() {
            self.first = Some(hash.to_owned());
        }
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
        self.update(|current| match current {
            Some(a) if a.seq >= seq && (a.first.is_some() || self.first.is_none()) => None,
            Some(mut a) if a.seq >= seq => {
                a.first.clone_from(&self.first);
                Some(a)
            }
            Some(mut a) => {
                a.seq = seq;
                a.hash = hash.to_owned();
                Some(a)
            }
            None => Some(Anchor::fresh(&self.log, seq, hash, keyed_from)),
        })
    }

    /// Records an evidence file set aside from a log whose chain ends at `tip_seq`/`tip_hash`
    /// (creating the anchor there, keyed from the next record, if there is none yet).
    pub(crate) fn add_evidence(
        &self,
        evidence: Evidence,
        tip_seq: u64,
        tip_hash: &str,
    ) -> StoreResult<()> {
        self.update(|current| {
            let mut a =
                current.unwrap_or_else(|| Anchor::fresh(&self.log, tip_seq, tip_hash, tip_seq + 1));
            a.evidence.push(evidence);
            Some(a)
        })
    }

    /// Marks every evidence file the anchor lists as looked at; returns their names.
    pub(crate) fn accept_evidence(&self) -> StoreResult<Vec<String>> {
        let mut names = Vec::new();
        self.update(|current| {
            let mut a = current?;
            for e in a.evidence.iter_mut().filter(|e| !e.accepted) {
                e.accepted = true;
                names.push(e.name.clone());
            }
            (!names.is_empty()).then_some(a)
        })?;
        Ok(names)
    }

    /// Reads the anchor under its lock, lets `change` decide the new one (`None`: keep it),
    /// and writes that with a fresh MAC, in the current format.
    fn update(&self, change: impl FnOnce(Option<Anchor>) -> Option<Anchor>) -> StoreResult<()> {
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
        let Some(mut anchor) = change(self.load()?) else {
            return Ok(());
        };
        anchor.v = VERSION;
        anchor.log.clone_from(&self.log);
        if anchor.first.is_none() && anchor.seq > 0 {
            anchor.first.clone_from(&self.first);
        }
        if anchor.seq == 0 {
            anchor.hash = GENESIS_HASH.to_owned();
        }
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
