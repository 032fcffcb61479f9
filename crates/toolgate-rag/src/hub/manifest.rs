//! `toolgate-model.json` in a model directory: what was pulled, from where, and each file's
//! size and SHA-256. For the default model it repeats the pins; for any other repository it
//! is the only record (trust on first use), and a later pull of the same revision must
//! produce the same bytes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::error::PullError;

/// The manifest's file name inside the model directory.
pub const MANIFEST_FILE: &str = "toolgate-model.json";

/// One file as it was verified.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileRecord {
    pub size: u64,
    pub sha256: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    pub repo: String,
    pub revision: String,
    /// The hub's origin it was pulled from (no path or query).
    pub endpoint: String,
    /// `true` when the hashes were checked against pins in toolgate's source.
    pub pinned: bool,
    pub files: BTreeMap<String, FileRecord>,
}

impl Manifest {
    pub fn path(dir: &Path) -> PathBuf {
        dir.join(MANIFEST_FILE)
    }

    /// The manifest in `dir`, if one was written.
    pub fn read(dir: &Path) -> Result<Option<Manifest>, PullError> {
        let path = Self::path(dir);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(PullError::io(path, e)),
        };
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| PullError::Manifest {
                path,
                error: e.to_string(),
            })
    }

    /// Writes it beside a temporary name and renames it into place.
    pub fn write(&self, dir: &Path) -> Result<PathBuf, PullError> {
        let path = Self::path(dir);
        let tmp = dir.join(format!("{MANIFEST_FILE}.part"));
        let text = serde_json::to_string_pretty(self).map_err(|e| PullError::Manifest {
            path: path.clone(),
            error: e.to_string(),
        })?;
        // Never through a link planted at the temporary name: it is replaced by a new file.
        match std::fs::remove_file(&tmp) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(PullError::io(&tmp, e));
            }
            _ => {}
        }
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(|e| PullError::io(&tmp, e))?;
        std::io::Write::write_all(&mut file, (text + "\n").as_bytes())
            .map_err(|e| PullError::io(&tmp, e))?;
        std::fs::rename(&tmp, &path).map_err(|e| PullError::io(&path, e))?;
        Ok(path)
    }
}
