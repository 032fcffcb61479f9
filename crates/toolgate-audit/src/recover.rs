//! Finding the end of the chain and setting a torn tail aside.
//!
//! A crash (SIGKILL, power loss) in the middle of a write can leave a partial last line. Such a
//! record was never acknowledged — acks are sent only after fsync — so nothing anyone was told
//! is safe is lost by moving it out of the way. [`repair_tail`] therefore cuts the file back to
//! the end of the last good line: the bytes after the last `\n`, and the last complete line
//! too if it does not parse or hash. The bytes cut are never destroyed: they are first copied
//! to an evidence file beside the log (`tool-audit.jsonl.torn-<µs since epoch>`, fsynced),
//! which `verify` reports until a human has looked at it. A keyed log's head anchor records
//! the evidence file (name, length, sha256) before the tail is cut, so removing or editing
//! it afterwards is itself detected.
//!
//! Only an unacknowledged tail is ever touched. A damaged record that a keyed log's head
//! anchor vouches for was acknowledged, so its damage is tampering, not a torn write; so is a
//! damaged record with another damaged record before it. Opening fails in both cases and the
//! file is left exactly as it is (`verify` reports the details). Must be called under the
//! file's exclusive lock.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use super::anchor::{AnchorFile, Evidence};
use super::chain::{GENESIS_HASH, decode_line, sha256_hex};
use toolgate_store::{StoreError, StoreResult};

/// The end of the chain as found in the file: where the next record goes and what it links to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ChainTip {
    /// `seq` of the last record (0 for an empty log).
    pub seq: u64,
    /// `hash` of the last record ([`GENESIS_HASH`] for an empty log).
    pub hash: String,
    /// File length after the last record's `\n`.
    pub len: u64,
}

impl ChainTip {
    pub(crate) fn empty() -> Self {
        ChainTip {
            seq: 0,
            hash: GENESIS_HASH.to_owned(),
            len: 0,
        }
    }
}

const CHUNK: usize = 16 * 1024;

/// Sets a torn tail aside (see the module docs) and returns the chain's tip. `anchored_seq`
/// is the last record known to be acknowledged (0 when unknown): a damaged tail at or before
/// it is refused, not repaired. With `anchor` (a keyed log), the evidence file is anchored
/// before the tail is cut.
pub(crate) fn repair_tail(
    file: &File,
    path: &Path,
    anchored_seq: u64,
    anchor: Option<&AnchorFile>,
) -> StoreResult<ChainTip> {
    let io_err = |what: &str, e| StoreError::io(format!("{what} {}", path.display()), e);
    let len = file.metadata().map_err(|e| io_err("cannot stat", e))?.len();
    let complete_end = match rfind_newline(file, len).map_err(|e| io_err("cannot read", e))? {
        Some(pos) => pos + 1,
        None => 0,
    };
    let (tip, cut) = tip_before(file, complete_end, path)?;
    if cut < len {
        if tip.seq < anchored_seq {
            return Err(StoreError::Corrupt(format!(
                "the audit log {} is damaged after seq {}, but its head anchor says seq \
                 {anchored_seq} was written and acknowledged: this is not a torn write, so \
                 nothing was changed. Run `toolgate audit verify` to locate the damage",
                path.display(),
                tip.seq
            )));
        }
        let evidence = keep_evidence(file, path, cut, len)?;
        if let Some(anchor) = anchor {
            anchor.add_evidence(evidence, tip.seq, &tip.hash)?;
        }
        file.set_len(cut)
            .map_err(|e| io_err("cannot cut the torn tail of", e))?;
        file.sync_data().map_err(|e| io_err("cannot sync", e))?;
    }
    Ok(tip)
}

/// Copies the bytes `[from, to)` of the log to a new evidence file beside it, durably.
fn keep_evidence(file: &File, path: &Path, from: u64, to: u64) -> StoreResult<Evidence> {
    let io_err = |what: &str, p: &Path, e| StoreError::io(format!("{what} {}", p.display()), e);
    let len = usize::try_from(to - from)
        .map_err(|e| io_err("cannot read", path, std::io::Error::other(e)))?;
    let mut bytes = vec![0u8; len];
    file.read_exact_at(&mut bytes, from)
        .map_err(|e| io_err("cannot read the torn tail of", path, e))?;
    let micros = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros());
    let name = path
        .file_name()
        .map_or_else(Default::default, |n| n.to_string_lossy().into_owned());
    let evidence = path.with_file_name(format!("{name}{TORN_SUFFIX}{micros}"));
    let mut out = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&evidence)
        .map_err(|e| io_err("cannot keep the torn tail in", &evidence, e))?;
    out.write_all(&bytes)
        .and_then(|()| out.sync_all())
        .map_err(|e| io_err("cannot keep the torn tail in", &evidence, e))?;
    if let Some(dir) = evidence.parent()
        && let Ok(d) = File::open(dir)
    {
        let _ = d.sync_all();
    }
    Ok(Evidence {
        name: evidence
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
        len: bytes.len() as u64,
        sha256: sha256_hex(&bytes),
        accepted: false,
    })
}

/// What follows the log's file name in an evidence file's name.
pub(crate) const TORN_SUFFIX: &str = ".torn-";

/// The evidence files of `jsonl`, oldest first.
pub(crate) fn evidence_files(jsonl: &Path) -> Vec<PathBuf> {
    let (Some(dir), Some(name)) = (jsonl.parent(), jsonl.file_name()) else {
        return Vec::new();
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let prefix = format!("{}{TORN_SUFFIX}", name.to_string_lossy());
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path())
        .collect();
    found.sort();
    found
}

/// The hash of the record `seq` in a file whose tip is `tip`, read backwards from the end;
/// `None` if the record is not there (or does not decode).
pub(crate) fn hash_at_seq(
    file: &File,
    tip: &ChainTip,
    seq: u64,
) -> std::io::Result<Option<String>> {
    if seq == 0 || seq > tip.seq {
        return Ok(None);
    }
    let mut end = tip.len;
    for _ in 0..=(tip.seq - seq) {
        if end == 0 {
            return Ok(None);
        }
        let (start, line) = line_ending_at(file, end - 1)?;
        match decode_line(&line) {
            Ok(rec) if rec.seq == seq => return Ok(Some(rec.hash)),
            Ok(rec) if rec.seq < seq => return Ok(None),
            Ok(_) => end = start,
            Err(_) => return Ok(None),
        }
    }
    Ok(None)
}

/// The tip of the complete lines in `[0, end)` and the length to keep: `end`, or the start of
/// the last line if that line is damaged.
fn tip_before(file: &File, end: u64, path: &Path) -> StoreResult<(ChainTip, u64)> {
    if end == 0 {
        return Ok((ChainTip::empty(), 0));
    }
    let read_err = |e| StoreError::io(format!("cannot read {}", path.display()), e);
    let (start, line) = line_ending_at(file, end - 1).map_err(read_err)?;
    if let Ok(rec) = decode_line(&line) {
        return Ok((tip_of(rec.seq, rec.hash, end), end));
    }
    if start == 0 {
        return Ok((ChainTip::empty(), 0));
    }
    let (_, before) = line_ending_at(file, start - 1).map_err(read_err)?;
    match decode_line(&before) {
        Ok(rec) => Ok((tip_of(rec.seq, rec.hash, start), start)),
        Err(fault) => Err(StoreError::Corrupt(format!(
            "the last two records of the audit log {} are damaged ({}); this is not a torn \
             write, so nothing was repaired. Run `toolgate audit verify` to locate the damage",
            path.display(),
            fault.reason()
        ))),
    }
}

fn tip_of(seq: u64, hash: String, len: u64) -> ChainTip {
    ChainTip { seq, hash, len }
}

/// The line whose terminating `\n` is at `newline` (or which ends there), without the `\n`,
/// and the offset where it starts.
pub(crate) fn line_ending_at(file: &File, newline: u64) -> std::io::Result<(u64, Vec<u8>)> {
    let start = rfind_newline(file, newline)?.map_or(0, |p| p + 1);
    let len = usize::try_from(newline - start).map_err(std::io::Error::other)?;
    let mut line = vec![0u8; len];
    file.read_exact_at(&mut line, start)?;
    Ok((start, line))
}

/// Offset of the last `\n` strictly before `before`.
fn rfind_newline(file: &File, before: u64) -> std::io::Result<Option<u64>> {
    let mut end = before;
    let mut buf = vec![0u8; CHUNK];
    while end > 0 {
        let start = end.saturating_sub(CHUNK as u64);
        let chunk = &mut buf[..(end - start) as usize];
        file.read_exact_at(chunk, start)?;
        if let Some(i) = chunk.iter().rposition(|&b| b == b'\n') {
            return Ok(Some(start + i as u64));
        }
        end = start;
    }
    Ok(None)
}

/// The exclusive advisory lock on the log file, released on drop.
pub(crate) struct FileLock<'a> {
    file: &'a File,
}

impl<'a> FileLock<'a> {
    pub(crate) fn exclusive(file: &'a File, path: &Path) -> StoreResult<Self> {
        file.lock().map_err(|e| {
            StoreError::io(format!("cannot lock the audit log {}", path.display()), e)
        })?;
        Ok(FileLock { file })
    }
}

impl Drop for FileLock<'_> {
    fn drop(&mut self) {
        // Closing the file would release it too; an unlock error leaves nothing to undo.
        let _ = self.file.unlock();
    }
}

/// The hash of the file's first record (which chain the file holds); `None` for an empty
/// file or a first line that does not decode.
pub(crate) fn first_hash(file: &File, tip: &ChainTip) -> std::io::Result<Option<String>> {
    if tip.len == 0 {
        return Ok(None);
    }
    let mut line = Vec::new();
    let mut buf = vec![0u8; CHUNK];
    let mut at = 0u64;
    while at < tip.len {
        let n = usize::try_from((tip.len - at).min(CHUNK as u64)).map_err(std::io::Error::other)?;
        file.read_exact_at(&mut buf[..n], at)?;
        if let Some(i) = buf[..n].iter().position(|&b| b == b'\n') {
            line.extend_from_slice(&buf[..i]);
            return Ok(decode_line(&line).ok().map(|r| r.hash));
        }
        line.extend_from_slice(&buf[..n]);
        at += n as u64;
    }
    Ok(None)
}
