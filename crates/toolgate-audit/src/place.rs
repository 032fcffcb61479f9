//! Where the log lives, opened so that no symbolic link can redirect it. Whoever can write the
//! data dir can replace `logs/` (or, with the data dir's parent, the data dir) by a link to a
//! rebuilt chain; a path opened the ordinary way would follow it to a log the head anchor has
//! never seen. So the log is opened by descriptor: the directory above the data dir the
//! ordinary way (the operator's choice), then the data dir, `logs/` and the file itself each
//! beneath the one before with `O_NOFOLLOW`, and a link at any of those three steps is refused.
//!
//! The head anchor is found by [`anchor_path`]: the same three components taken as written,
//! below the resolved directory above them, so a link planted there cannot change which
//! anchor a log is checked against either.

use std::fs::File;
use std::io::ErrorKind;
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{Mode, OFlags};

use toolgate_store::{StoreError, StoreResult};

/// How many trailing components are opened without following links: the data dir, its
/// `logs/` and the log file.
const CHECKED: usize = 3;

/// What the log is opened for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    /// Reading and appending, created (0600) if missing: the writer.
    Append,
    /// Reading only: the indexer, queries, verify.
    Read,
}

/// `jsonl` made absolute (lexically) and split into the directory above the checked
/// components and those components, outermost first.
fn split(jsonl: &Path) -> StoreResult<(PathBuf, Vec<std::ffi::OsString>)> {
    let abs = std::path::absolute(jsonl)
        .map_err(|e| StoreError::io(format!("cannot resolve {}", jsonl.display()), e))?;
    let mut parts: Vec<std::ffi::OsString> = Vec::new();
    let mut base = PathBuf::new();
    for c in abs.components() {
        match c {
            Component::Normal(name) => parts.push(name.to_owned()),
            Component::ParentDir => {
                return Err(StoreError::Config(format!(
                    "the audit log path {} contains `..`: give it without",
                    jsonl.display()
                )));
            }
            Component::CurDir => {}
            Component::RootDir | Component::Prefix(_) => base.push(c.as_os_str()),
        }
    }
    if parts.is_empty() {
        return Err(StoreError::Config(format!(
            "{} is not a file path",
            jsonl.display()
        )));
    }
    let keep = parts.len().saturating_sub(CHECKED);
    let checked = parts.split_off(keep);
    for p in parts {
        base.push(p);
    }
    Ok((base, checked))
}

/// Opens the log with no link among its last three components (module docs).
pub(crate) fn open_log(jsonl: &Path, access: Access) -> StoreResult<File> {
    let (base, checked) = split(jsonl)?;
    let dir_flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mut dir: OwnedFd = rustix::fs::open(
        &base,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| StoreError::io(format!("cannot open {}", base.display()), e.into()))?;
    let mut at = base;
    let last = checked.len() - 1;
    for (i, name) in checked.iter().enumerate() {
        at.push(name);
        let opened = if i < last {
            rustix::fs::openat(&dir, name.as_os_str(), dir_flags, Mode::empty())
        } else {
            let flags = match access {
                Access::Append => OFlags::RDWR | OFlags::APPEND | OFlags::CREATE,
                Access::Read => OFlags::RDONLY,
            };
            rustix::fs::openat(
                &dir,
                name.as_os_str(),
                flags | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::from_raw_mode(0o600),
            )
        };
        dir = opened.map_err(|e| refused(&dir, name.as_os_str(), &at, e))?;
    }
    Ok(File::from(dir))
}

/// The error for a component that would not open: a link is named as one.
fn refused(dir: &OwnedFd, name: &std::ffi::OsStr, at: &Path, e: rustix::io::Errno) -> StoreError {
    let is_link =
        rustix::fs::statat(dir, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW).is_ok_and(|st| {
            rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::Symlink
        });
    if is_link {
        return StoreError::Corrupt(format!(
            "{} is a symbolic link: the audit log, its directory and the data dir must be \
             real files and directories (a link could point at a rebuilt log). Nothing was \
             opened; replace the link by the real directory, or run `toolgate audit verify`",
            at.display()
        ));
    }
    let e = std::io::Error::from(e);
    if e.kind() == ErrorKind::NotFound {
        return StoreError::NotFound(format!("audit log {}", at.display()));
    }
    StoreError::io(format!("cannot open {}", at.display()), e)
}

/// The path a log's head anchor is named by: the directory above the checked components
/// resolved (so `./data` and its absolute spelling name one log), the components as written.
pub(crate) fn anchor_path(jsonl: &Path) -> PathBuf {
    match split(jsonl) {
        Ok((base, checked)) => {
            let mut path = super::anchor::resolved_path(&base);
            for c in checked {
                path.push(c);
            }
            path
        }
        Err(_) => super::anchor::resolved_path(jsonl),
    }
}
