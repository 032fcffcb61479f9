//! [`HistoryStore`]: conversations kept per session id, one JSON file each
//! (`<dir>/<session>.json`, mode 0600, replaced atomically), so `--session ID` resumes.
//!
//! The history holds what the model saw: tool results as the gateway governed them (large
//! results are already offloaded and secrets in them masked by the result store).

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::types::Message;

/// One saved conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedSession {
    pub session: String,
    /// The provider and model that produced it (informational).
    #[serde(default)]
    pub provider: String,
    #[serde(default)]
    pub model: String,
    pub messages: Vec<Message>,
}

#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error(
        "invalid session id `{0}`: use 1 to 64 letters, digits, `_`, `-` or `.` (not starting with `.`)"
    )]
    InvalidId(String),
    #[error("cannot read session {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("session file {path} is damaged: {message} (move it away to start afresh)")]
    Damaged { path: PathBuf, message: String },
    #[error("cannot save session {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// A directory of saved conversations.
#[derive(Debug, Clone)]
pub struct HistoryStore {
    dir: PathBuf,
}

impl HistoryStore {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        HistoryStore { dir: dir.into() }
    }

    /// Checks that `id` can name a file: no separators, no dot files.
    pub fn check_id(id: &str) -> Result<(), SessionError> {
        let ok = !id.is_empty()
            && id.len() <= 64
            && !id.starts_with('.')
            && id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
        if ok {
            Ok(())
        } else {
            Err(SessionError::InvalidId(id.to_owned()))
        }
    }

    fn path(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.json"))
    }

    /// The saved conversation, or `None` for a new session.
    pub fn load(&self, id: &str) -> Result<Option<SavedSession>, SessionError> {
        Self::check_id(id)?;
        let path = self.path(id);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(SessionError::Read { path, source }),
        };
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| SessionError::Damaged {
                path,
                message: e.to_string(),
            })
    }

    /// Writes the conversation (a temp file renamed over the old one).
    pub fn save(&self, saved: &SavedSession) -> Result<(), SessionError> {
        Self::check_id(&saved.session)?;
        let path = self.path(&saved.session);
        let write = |path: &Path| -> std::io::Result<()> {
            std::fs::create_dir_all(&self.dir)?;
            let tmp = self.dir.join(format!(".{}.tmp", saved.session));
            let mut opts = std::fs::OpenOptions::new();
            opts.write(true).create(true).truncate(true);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
            let mut f = opts.open(&tmp)?;
            f.write_all(&serde_json::to_vec_pretty(saved).map_err(std::io::Error::other)?)?;
            f.sync_all()?;
            std::fs::rename(&tmp, path)
        };
        write(&path).map_err(|source| SessionError::Write { path, source })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_saved_session_loads_back_and_bad_ids_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let store = HistoryStore::new(dir.path().join("sessions"));
        assert_eq!(store.load("s1").unwrap(), None);
        let saved = SavedSession {
            session: "s1".into(),
            provider: "anthropic".into(),
            model: "m".into(),
            messages: vec![Message::user("hi")],
        };
        store.save(&saved).unwrap();
        assert_eq!(store.load("s1").unwrap(), Some(saved));
        for bad in ["", "../x", "a/b", ".hidden", &"x".repeat(65)] {
            assert!(
                matches!(store.load(bad), Err(SessionError::InvalidId(_))),
                "{bad}"
            );
        }
        std::fs::write(dir.path().join("sessions/s2.json"), "{").unwrap();
        let e = store.load("s2").unwrap_err().to_string();
        assert!(e.contains("damaged"), "{e}");
    }
}
