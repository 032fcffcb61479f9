//! Where pulled models live: `{root}/{owner}/{name}/{revision}/`, outside any workspace.
//! The root is `TOOLGATE_MODEL_CACHE`, else `$XDG_CACHE_HOME/toolgate/models`, else
//! `~/.cache/toolgate/models`. A model file appears there only after it was verified (it is
//! downloaded beside it as `FILE.part` and renamed), so a directory holding all of
//! [`MODEL_FILES`] is a complete model.

use std::path::{Path, PathBuf};

use super::error::PullError;
use super::pins::{DEFAULT_REPO, DEFAULT_REVISION, MODEL_FILES, pins_for};

/// The environment variable naming the cache root.
pub const MODEL_CACHE_ENV: &str = "TOOLGATE_MODEL_CACHE";

/// A repository at a revision, both checked to be safe as path components and URL segments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelRef {
    repo: String,
    revision: String,
}

impl ModelRef {
    /// `repo` is `owner/name`; `revision` a commit id, branch or tag.
    pub fn new(repo: &str, revision: &str) -> Result<Self, PullError> {
        let bad_repo = |reason| PullError::BadRepo {
            repo: repo.to_owned(),
            reason,
        };
        let mut parts = repo.split('/');
        let (Some(owner), Some(name), None) = (parts.next(), parts.next(), parts.next()) else {
            return Err(bad_repo("not of the form owner/name"));
        };
        for part in [owner, name] {
            if let Some(reason) = unsafe_segment(part) {
                return Err(bad_repo(reason));
            }
        }
        if let Some(reason) = unsafe_segment(revision) {
            return Err(PullError::BadRevision {
                revision: revision.to_owned(),
                reason,
            });
        }
        Ok(ModelRef {
            repo: repo.to_owned(),
            revision: revision.to_owned(),
        })
    }

    /// all-MiniLM-L6-v2 at the pinned revision.
    pub fn default_model() -> Self {
        ModelRef {
            repo: DEFAULT_REPO.to_owned(),
            revision: DEFAULT_REVISION.to_owned(),
        }
    }

    pub fn repo(&self) -> &str {
        &self.repo
    }

    pub fn revision(&self) -> &str {
        &self.revision
    }

    /// Whether toolgate's source pins this model's files.
    pub fn is_pinned(&self) -> bool {
        pins_for(&self.repo, &self.revision).is_some()
    }
}

impl std::fmt::Display for ModelRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}@{}", self.repo, self.revision)
    }
}

/// Why `s` cannot be one path component / URL segment, if it cannot.
fn unsafe_segment(s: &str) -> Option<&'static str> {
    if s.is_empty() {
        Some("empty")
    } else if s == "." || s == ".." {
        Some("`.` and `..` are not names")
    } else if s.len() > 96 {
        Some("longer than 96 characters")
    } else if !s
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    {
        Some("only letters, digits, `-`, `_` and `.` are allowed")
    } else {
        None
    }
}

/// The cache root and the model directories under it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelCache {
    root: PathBuf,
}

impl ModelCache {
    pub fn at(root: impl Into<PathBuf>) -> Self {
        ModelCache { root: root.into() }
    }

    /// The root the environment names (see the module docs).
    pub fn from_env() -> Result<Self, PullError> {
        let var = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        if let Some(root) = var(MODEL_CACHE_ENV) {
            return Ok(Self::at(root));
        }
        let base = var("XDG_CACHE_HOME")
            .filter(|p| p.is_absolute())
            .or_else(|| var("HOME").map(|h| h.join(".cache")))
            .ok_or(PullError::NoCacheDir)?;
        Ok(Self::at(base.join("toolgate").join("models")))
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where `model`'s files go.
    pub fn model_dir(&self, model: &ModelRef) -> PathBuf {
        let mut dir = self.root.clone();
        dir.extend(model.repo.split('/'));
        dir.join(&model.revision)
    }

    /// `model`'s directory when every file of [`MODEL_FILES`] is in it (each was verified
    /// before it was put there).
    pub fn complete(&self, model: &ModelRef) -> Option<PathBuf> {
        let dir = self.model_dir(model);
        MODEL_FILES
            .iter()
            .all(|f| dir.join(f).is_file())
            .then_some(dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repos_and_revisions_must_be_safe_path_segments() {
        let m = ModelRef::new("sentence-transformers/all-MiniLM-L6-v2", "main").unwrap();
        assert_eq!(
            ModelCache::at("/c").model_dir(&m),
            PathBuf::from("/c/sentence-transformers/all-MiniLM-L6-v2/main")
        );
        for bad in ["x", "a/b/c", "../x", "a/..", "a/b c", "/a", "a/"] {
            let err = ModelRef::new(bad, "main").unwrap_err().to_string();
            assert!(
                err.starts_with(&format!("model repository `{bad}`")),
                "{err}"
            );
        }
        for bad in ["..", "a/b", "", "v1?x=1"] {
            assert!(matches!(
                ModelRef::new("a/b", bad),
                Err(PullError::BadRevision { .. })
            ));
        }
        assert!(ModelRef::default_model().is_pinned());
        assert!(!m.is_pinned());
    }

    #[test]
    fn a_directory_is_complete_only_with_every_file() {
        let root = tempfile::tempdir().unwrap();
        let cache = ModelCache::at(root.path());
        let m = ModelRef::default_model();
        let dir = cache.model_dir(&m);
        std::fs::create_dir_all(&dir).unwrap();
        for f in &MODEL_FILES[..2] {
            std::fs::write(dir.join(f), b"{}").unwrap();
        }
        std::fs::write(dir.join("model.safetensors.part"), b"half").unwrap();
        assert_eq!(cache.complete(&m), None);
        std::fs::write(dir.join("model.safetensors"), b"x").unwrap();
        assert_eq!(cache.complete(&m), Some(dir));
    }
}
