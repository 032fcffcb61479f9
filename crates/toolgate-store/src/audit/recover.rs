//! Finding the end of the chain and repairing a torn tail.
//!
//! A crash (SIGKILL, power loss) in the middle of a write can leave a partial last line. Such a
//! record was never acknowledged — acks are sent only after fsync — so dropping it loses
//! nothing anyone was told is safe. [`repair_tail`] therefore truncates the file back to the
//! end of the last good line: it drops bytes after the last `\n`, and then the last complete
//! line too if it does not parse or hash. Only the tail is ever touched; a damaged record with
//! another damaged record before it is not a torn write, and opening fails instead so that a
//! human looks (`verify` reports the details). Must be called under the file's exclusive lock.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

use super::chain::{GENESIS_HASH, decode_line};
use crate::{StoreError, StoreResult};

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

/// Truncates a torn tail (see the module docs) and returns the chain's tip.
pub(crate) fn repair_tail(file: &File, path: &Path) -> StoreResult<ChainTip> {
    let io_err = |what: &str, e| StoreError::io(format!("{what} {}", path.display()), e);
    let len = file.metadata().map_err(|e| io_err("cannot stat", e))?.len();
    let complete_end = match rfind_newline(file, len).map_err(|e| io_err("cannot read", e))? {
        Some(pos) => pos + 1,
        None => 0,
    };
    let (tip, cut) = tip_before(file, complete_end, path)?;
    if cut < len {
        file.set_len(cut)
            .map_err(|e| io_err("cannot truncate the torn tail of", e))?;
        file.sync_data().map_err(|e| io_err("cannot sync", e))?;
    }
    Ok(tip)
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
