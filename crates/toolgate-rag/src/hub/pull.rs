//! [`pull`]: a sentence-transformers model from a Hugging Face Hub–style server
//! (`{endpoint}/{repo}/resolve/{revision}/{file}`) into the [`ModelCache`], through
//! toolgate-net's guarded client only.
//!
//! For each of [`MODEL_FILES`], in order:
//! 1. already in the model directory and matching its expected SHA-256 (the pin, or the
//!    manifest's record): kept; not matching: deleted and fetched again;
//! 2. fetched into `FILE.part`, continuing an existing `.part` with a `Range` request;
//! 3. hashed: a mismatch deletes the part (a resumed part is fetched once more from zero
//!    before the mismatch is an error naming the file and both hashes);
//! 4. synced and renamed to `FILE` — so a file under its own name is always a verified one.
//!
//! Then the manifest records every file's size and SHA-256. Nothing here runs unless a user
//! asks for a pull: `toolgate serve` and the rest only read the cache.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use toolgate_net::EgressPolicy;
use url::Url;

use super::cache::{ModelCache, ModelRef};
use super::error::{Expected, PullError};
use super::manifest::{FileRecord, Manifest};
use super::pins::{MODEL_FILES, pins_for};
use super::transfer::{shown, transfer};

/// The hub reached when `HF_ENDPOINT` is not set.
pub const DEFAULT_ENDPOINT: &str = "https://huggingface.co";
/// The environment variable naming another hub (a mirror, or an internal one).
pub const ENDPOINT_ENV: &str = "HF_ENDPOINT";
/// The most bytes an unpinned file may have.
const MAX_UNPINNED_BYTES: u64 = 16 << 30;

/// `HF_ENDPOINT` when set (and not empty), else [`DEFAULT_ENDPOINT`]. An endpoint with
/// credentials in it (`https://user:token@mirror`) must be https: see [`check_endpoint`].
pub fn endpoint_from_env() -> Result<Url, PullError> {
    let url = std::env::var(ENDPOINT_ENV)
        .ok()
        .filter(|v| !v.trim().is_empty())
        .unwrap_or_else(|| DEFAULT_ENDPOINT.to_owned());
    let endpoint = Url::parse(url.trim()).map_err(|error| PullError::BadEndpoint {
        url: without_userinfo(url.trim()),
        error,
    })?;
    check_endpoint(&endpoint)?;
    Ok(endpoint)
}

/// Refuses a hub endpoint whose URL carries credentials over anything but https: the HTTP
/// client sends them as Basic authentication with every request, readable on the wire.
pub fn check_endpoint(endpoint: &Url) -> Result<(), PullError> {
    let has_credentials = !endpoint.username().is_empty() || endpoint.password().is_some();
    if has_credentials && endpoint.scheme() != "https" {
        return Err(PullError::CredentialsInClear {
            endpoint: shown(endpoint),
        });
    }
    Ok(())
}

/// `text` without what stands between `://` and the first `@` of its authority, for a URL
/// that did not parse: its credentials are not echoed in the error.
fn without_userinfo(text: &str) -> String {
    let Some(scheme_end) = text.find("://").map(|i| i + 3) else {
        return text.to_owned();
    };
    let authority_end = text[scheme_end..]
        .find(['/', '?', '#'])
        .map_or(text.len(), |i| scheme_end + i);
    match text[scheme_end..authority_end].rfind('@') {
        Some(at) => format!("{}{}", &text[..scheme_end], &text[scheme_end + at + 1..]),
        None => text.to_owned(),
    }
}

/// What to pull, from where, into where, under which `[egress]` rules.
#[derive(Debug, Clone)]
pub struct PullRequest {
    pub model: ModelRef,
    pub endpoint: Url,
    pub cache: ModelCache,
    pub egress: EgressPolicy,
}

/// What a pull is doing, for a progress display.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PullEvent {
    /// A file's transfer begins at byte `from` (> 0: resumed) of `total`, when known.
    Started {
        file: String,
        from: u64,
        total: Option<u64>,
    },
    /// `received` bytes of the file are on disk.
    Progress {
        file: String,
        received: u64,
        total: Option<u64>,
    },
    /// The file is fetched again from the start, and why.
    Restarted { file: String, reason: String },
}

/// How a file came to be in place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileStatus {
    /// Already there and verified; nothing fetched.
    Present,
    /// Fetched whole.
    Downloaded,
    /// Continued from byte `from` of an earlier `.part`.
    Resumed { from: u64 },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PulledFile {
    pub file: String,
    pub size: u64,
    pub sha256: String,
    pub status: FileStatus,
}

/// What the hashes were checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trust {
    /// Pins in toolgate's source.
    Pinned,
    /// The manifest an earlier pull of this revision wrote.
    Recorded,
    /// Nothing: this pull's hashes are recorded for the next (trust on first use).
    FirstUse,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullReport {
    /// The model directory, usable as `[rag] model_dir`.
    pub dir: PathBuf,
    pub manifest: PathBuf,
    pub trust: Trust,
    pub files: Vec<PulledFile>,
}

/// An expected file: its SHA-256, its size and where both come from.
struct Want {
    sha256: String,
    size: u64,
    origin: Expected,
}

/// `{endpoint}/{owner}/{name}/resolve/{revision}/{file}`.
pub fn file_url(endpoint: &Url, model: &ModelRef, file: &str) -> Result<Url, PullError> {
    let base = endpoint.as_str().trim_end_matches('/');
    let text = format!(
        "{base}/{}/resolve/{}/{file}",
        model.repo(),
        model.revision()
    );
    Url::parse(&text).map_err(|error| PullError::BadEndpoint { url: text, error })
}

/// Pulls `req.model` (see the module docs). `on_event` sees the progress.
pub async fn pull(
    req: &PullRequest,
    on_event: &mut (dyn FnMut(PullEvent) + Send),
) -> Result<PullReport, PullError> {
    check_endpoint(&req.endpoint)?;
    let dir = req.cache.model_dir(&req.model);
    tokio::fs::create_dir_all(&dir)
        .await
        .map_err(|e| PullError::io(&dir, e))?;
    let pins = pins_for(req.model.repo(), req.model.revision());
    let recorded = match pins {
        Some(_) => None,
        None => Manifest::read(&dir)?,
    };
    // A model file takes longer than `[egress] request_timeout_secs` allows a whole API
    // answer; a transfer is abandoned when it stalls instead (`transfer::IDLE`).
    let mut policy = req.egress.clone();
    policy.request_timeout_secs = 0;
    let client = toolgate_net::client(&policy).map_err(PullError::Client)?;
    let mut files = Vec::new();
    for name in MODEL_FILES {
        let want = match (pins, &recorded) {
            (Some(pins), _) => pins.iter().find(|p| p.file == name).map(|p| Want {
                sha256: p.sha256.to_owned(),
                size: p.size,
                origin: Expected::Pinned,
            }),
            (None, Some(m)) => m.files.get(name).map(|r| Want {
                sha256: r.sha256.clone(),
                size: r.size,
                origin: Expected::Recorded(Manifest::path(&dir)),
            }),
            (None, None) => None,
        };
        let url = file_url(&req.endpoint, &req.model, name)?;
        files.push(fetch(&client, &url, &dir, name, want.as_ref(), on_event).await?);
    }
    let manifest = Manifest {
        repo: req.model.repo().to_owned(),
        revision: req.model.revision().to_owned(),
        endpoint: req.endpoint.origin().ascii_serialization(),
        pinned: pins.is_some(),
        files: files
            .iter()
            .map(|f| {
                let record = FileRecord {
                    size: f.size,
                    sha256: f.sha256.clone(),
                };
                (f.file.clone(), record)
            })
            .collect(),
    };
    let manifest_path = manifest.write(&dir)?;
    let trust = match (pins, recorded) {
        (Some(_), _) => Trust::Pinned,
        (None, Some(_)) => Trust::Recorded,
        (None, None) => Trust::FirstUse,
    };
    Ok(PullReport {
        dir,
        manifest: manifest_path,
        trust,
        files,
    })
}

/// One file into place (steps 1–4 of the module docs).
async fn fetch(
    client: &reqwest::Client,
    url: &Url,
    dir: &Path,
    name: &str,
    want: Option<&Want>,
    on_event: &mut (dyn FnMut(PullEvent) + Send),
) -> Result<PulledFile, PullError> {
    let dest = dir.join(name);
    let part = dir.join(format!("{name}.part"));
    if dest.is_file() {
        let (size, actual) = sha256_file(&dest).await?;
        match want {
            Some(w) if w.sha256 != actual => {
                remove(&dest).await?;
                on_event(PullEvent::Restarted {
                    file: name.to_owned(),
                    reason: format!(
                        "the copy in the cache has SHA-256 {actual}, not {}: downloading it again",
                        w.sha256
                    ),
                });
            }
            _ => {
                return Ok(PulledFile {
                    file: name.to_owned(),
                    size,
                    sha256: actual,
                    status: FileStatus::Present,
                });
            }
        }
    }
    let limit = want.map_or(MAX_UNPINNED_BYTES, |w| w.size);
    let mut retried = false;
    loop {
        // A `.part` that is not a regular file (a planted link) is never continued.
        let mut from = match tokio::fs::symlink_metadata(&part).await {
            Ok(m) if m.is_file() => m.len(),
            Ok(_) => {
                remove(&part).await?;
                0
            }
            Err(_) => 0,
        };
        if from > limit {
            remove(&part).await?;
            from = 0;
        }
        let done = transfer(client, url, &part, from, limit, name, on_event).await?;
        let (size, actual) = sha256_file(&part).await?;
        if let Some(w) = want.filter(|w| w.sha256 != actual) {
            remove(&part).await?;
            if done.resumed_from.is_some() && !retried {
                retried = true;
                on_event(PullEvent::Restarted {
                    file: name.to_owned(),
                    reason: "the resumed file did not verify: downloading it again from the start"
                        .to_owned(),
                });
                continue;
            }
            return Err(PullError::Mismatch {
                file: name.to_owned(),
                expected: w.sha256.clone(),
                actual,
                origin: w.origin.clone(),
            });
        }
        tokio::fs::rename(&part, &dest)
            .await
            .map_err(|e| PullError::io(&dest, e))?;
        tracing::debug!(file = name, url = %shown(url), "verified and installed");
        return Ok(PulledFile {
            file: name.to_owned(),
            size,
            sha256: actual,
            status: match done.resumed_from {
                Some(from) if !retried => FileStatus::Resumed { from },
                _ => FileStatus::Downloaded,
            },
        });
    }
}

async fn remove(path: &Path) -> Result<(), PullError> {
    match tokio::fs::remove_file(path).await {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(PullError::io(path, e)),
    }
}

/// The size and lowercase-hex SHA-256 of a file, read off the async workers.
pub async fn sha256_file(path: &Path) -> Result<(u64, String), PullError> {
    let owned = path.to_path_buf();
    let hashed = tokio::task::spawn_blocking(move || -> std::io::Result<(u64, String)> {
        use std::io::Read;
        let mut file = std::fs::File::open(&owned)?;
        let mut hasher = Sha256::new();
        let mut buf = vec![0u8; 1 << 20];
        let mut size = 0u64;
        loop {
            let n = file.read(&mut buf)?;
            if n == 0 {
                break;
            }
            size += n as u64;
            hasher.update(&buf[..n]);
        }
        Ok((size, hex::encode(hasher.finalize())))
    })
    .await
    .map_err(|e| PullError::io(path, std::io::Error::other(e)))?;
    hashed.map_err(|e| PullError::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_credentials_only_over_https() {
        let ok = |u: &str| check_endpoint(&Url::parse(u).unwrap()).is_ok();
        assert!(ok("https://huggingface.co"));
        assert!(ok("http://127.0.0.1:8080"));
        assert!(ok("https://user:hf_token@mirror.example"));
        assert!(!ok("http://user:hf_token@mirror.example"));
        assert!(!ok("http://hf_token@mirror.example"));
        let refused = check_endpoint(&Url::parse("http://u:secret99@m.example/x").unwrap())
            .unwrap_err()
            .to_string();
        assert!(!refused.contains("secret99"), "{refused}");
        assert_eq!(
            without_userinfo("http://u:secret99@bad host/"),
            "http://bad host/"
        );
    }

    #[test]
    fn file_urls_follow_the_hub_layout() {
        let m = ModelRef::default_model();
        for base in ["https://huggingface.co", "https://huggingface.co/"] {
            let url = file_url(&Url::parse(base).unwrap(), &m, "config.json").unwrap();
            assert_eq!(
                url.as_str(),
                "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2/resolve/c9745ed1d9f207416be6d2e6f8de32d1f16199bf/config.json"
            );
        }
        let mirror = Url::parse("http://mirror.internal:8080/hf").unwrap();
        let url = file_url(&mirror, &m, "tokenizer.json").unwrap();
        assert!(
            url.as_str()
                .starts_with("http://mirror.internal:8080/hf/sentence-transformers/")
        );
    }
}
