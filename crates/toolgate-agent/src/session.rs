//! [`HistoryStore`]: conversations kept per session id, so `--session ID` resumes — one JSON
//! file each (`<dir>/<session>.json`, mode 0600, replaced atomically), or any other
//! [`HistoryBackend`] (the cluster's store: a conversation begun on one host resumes on
//! another).
//!
//! The history holds what the model saw: tool results as the gateway governed them (large
//! results are already offloaded and secrets in them masked by the result store).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
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
    /// The backend (a database) failed.
    #[error("session {id}: {message}")]
    Store { id: String, message: String },
}

/// Where conversations are kept, as JSON text by session id (checked by the store).
#[async_trait]
pub trait HistoryBackend: Send + Sync {
    async fn load_text(&self, id: &str) -> Result<Option<String>, SessionError>;
    async fn save_text(&self, id: &str, text: &str) -> Result<(), SessionError>;
}

/// Saved conversations, over a [`HistoryBackend`].
#[derive(Clone)]
pub struct HistoryStore {
    backend: Arc<dyn HistoryBackend>,
}

impl std::fmt::Debug for HistoryStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HistoryStore").finish_non_exhaustive()
    }
}

impl HistoryStore {
    /// One file per conversation in `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        HistoryStore::with_backend(Arc::new(HistoryFiles { dir: dir.into() }))
    }

    pub fn with_backend(backend: Arc<dyn HistoryBackend>) -> Self {
        HistoryStore { backend }
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

    /// The saved conversation, or `None` for a new session.
    pub async fn load(&self, id: &str) -> Result<Option<SavedSession>, SessionError> {
        Self::check_id(id)?;
        let Some(text) = self.backend.load_text(id).await? else {
            return Ok(None);
        };
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| SessionError::Damaged {
                path: PathBuf::from(id),
                message: e.to_string(),
            })
    }

    /// Saves the conversation (replacing the one saved before).
    pub async fn save(&self, saved: &SavedSession) -> Result<(), SessionError> {
        Self::check_id(&saved.session)?;
        let text = serde_json::to_string_pretty(saved).map_err(|e| SessionError::Store {
            id: saved.session.clone(),
            message: e.to_string(),
        })?;
        self.backend.save_text(&saved.session, &text).await
    }
}

/// One file per conversation: `<dir>/<session>.json`, 0600, a temp file renamed over the old
/// one; file work on the blocking pool.
#[derive(Debug, Clone)]
struct HistoryFiles {
    dir: PathBuf,
}

impl HistoryFiles {
    fn path(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.json"))
    }

    fn read(&self, id: &str) -> Result<Option<String>, SessionError> {
        let path = self.path(id);
        match std::fs::read_to_string(&path) {
            Ok(t) => Ok(Some(t)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(SessionError::Read { path, source }),
        }
    }

    fn write(&self, id: &str, text: &str) -> Result<(), SessionError> {
        let path = self.path(id);
        let write = |path: &Path| -> std::io::Result<()> {
            std::fs::create_dir_all(&self.dir)?;
            let tmp = self.dir.join(format!(".{id}.tmp"));
            let mut opts = std::fs::OpenOptions::new();
            opts.write(true).create(true).truncate(true);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
            let mut f = opts.open(&tmp)?;
            f.write_all(text.as_bytes())?;
            f.sync_all()?;
            std::fs::rename(&tmp, path)
        };
        write(&path).map_err(|source| SessionError::Write { path, source })
    }
}

#[async_trait]
impl HistoryBackend for HistoryFiles {
    async fn load_text(&self, id: &str) -> Result<Option<String>, SessionError> {
        let (files, id) = (self.clone(), id.to_owned());
        tokio::task::spawn_blocking(move || files.read(&id))
            .await
            .map_err(|e| SessionError::Store {
                id: String::new(),
                message: format!("the session file task failed: {e}"),
            })?
    }

    async fn save_text(&self, id: &str, text: &str) -> Result<(), SessionError> {
        let (files, id, text) = (self.clone(), id.to_owned(), text.to_owned());
        tokio::task::spawn_blocking(move || files.write(&id, &text))
            .await
            .map_err(|e| SessionError::Store {
                id: String::new(),
                message: format!("the session file task failed: {e}"),
            })?
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_saved_session_loads_back_and_bad_ids_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let store = HistoryStore::new(dir.path().join("sessions"));
        assert_eq!(store.load("s1").await.unwrap(), None);
        let saved = SavedSession {
            session: "s1".into(),
            provider: "anthropic".into(),
            model: "m".into(),
            messages: vec![Message::user("hi")],
        };
        store.save(&saved).await.unwrap();
        assert_eq!(store.load("s1").await.unwrap(), Some(saved));
        for bad in ["", "../x", "a/b", ".hidden", &"x".repeat(65)] {
            assert!(
                matches!(store.load(bad).await, Err(SessionError::InvalidId(_))),
                "{bad}"
            );
        }
        std::fs::write(dir.path().join("sessions/s2.json"), "{").unwrap();
        let e = store.load("s2").await.unwrap_err().to_string();
        assert!(e.contains("damaged"), "{e}");
    }
}
