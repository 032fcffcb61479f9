//! Exports of the embedded log that carry their own proof. A copy of the log's lines alone
//! proves nothing to someone holding the key: a chain of records without MACs is easy to
//! build. So [`export`] checks the log as it copies it (chain, MACs, head anchor) and ends the
//! copy with one more line, the export head:
//!
//! ```text
//! {"export_head":{"records":N,"head":"<hash of record N>","keyed_from":K,"mac":"<64 hex>"}}
//! ```
//!
//! with `mac = HMAC-SHA256(key, "toolgate-audit-export\n<N>\n<head>\n<K>")`. [`verify_export`]
//! with the key accepts a file only if its head's MAC is the key's and names exactly the
//! records before it, and every record from `keyed_from` on carries a valid MAC. A file
//! without an export head fails with the key: nothing vouches for its end. A forger without
//! the key can write neither a record from `keyed_from` on nor the head.

use std::fs::File;
use std::io::{BufReader, Read, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::anchor::AnchorFile;
use super::chain::GENESIS_HASH;
use super::key::AuditKey;
use super::place::{Access, open_log};
use super::verify::{BadRecord, VerifyReport, Walk, WalkError};
use toolgate_store::{StoreError, StoreResult};

/// The key of the export head's line.
pub(crate) const EXPORT_HEAD: &str = "export_head";
const PREFIX: &[u8] = b"{\"export_head\":";

/// What the exporter vouches for, MACed with the audit key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExportHead {
    /// Records in the export.
    pub records: u64,
    /// Hash of the last one ([`GENESIS_HASH`] for none).
    pub head: String,
    /// Records from this seq on carry a MAC; earlier ones predate the key.
    pub keyed_from: u64,
    pub mac: String,
}

impl ExportHead {
    fn message(&self) -> String {
        format!(
            "toolgate-audit-export\n{}\n{}\n{}",
            self.records, self.head, self.keyed_from
        )
    }

    fn line(&self) -> StoreResult<String> {
        let value = serde_json::json!({ EXPORT_HEAD: self });
        Ok(value.to_string())
    }
}

/// Copies the log at `jsonl` to `out`, checking it on the way against `key` and its head
/// anchor, and ends the copy with the MACed export head. Fails (the copy incomplete) when the
/// log does not verify: an export vouches only for an intact log.
pub fn export(jsonl: &Path, key: &AuditKey, out: &mut impl Write) -> StoreResult<ExportHead> {
    let read_err = |e| StoreError::io(format!("cannot read the audit log {}", jsonl.display()), e);
    let anchor = AnchorFile::for_log(key, jsonl).load()?;
    let file = open_log(jsonl, Access::Read)?;
    file.lock_shared().map_err(read_err)?;
    let len = file.metadata().map(|m| m.len());
    file.unlock().map_err(read_err)?;
    let len = len.map_err(read_err)?;
    let mut reader = BufReader::with_capacity(
        256 * 1024,
        Tee {
            inner: (&file).take(len),
            out,
        },
    );
    let mut report = VerifyReport {
        keyed: true,
        ..VerifyReport::default()
    };
    let mut walk = Walk::new(Some(key), anchor.as_ref());
    walk.run(&mut reader, &mut report, |_| false)
        .map_err(|e| match e {
            WalkError::Read(e) => StoreError::io("cannot export the audit log", e),
            WalkError::Store(e) => e,
        })?;
    if let Some(bad) = &report.first_bad {
        return Err(StoreError::Corrupt(format!(
            "the audit log {} does not verify (line {}: {}); nothing vouched for. Run \
             `toolgate audit verify`, and copy the file itself as evidence",
            jsonl.display(),
            bad.line,
            bad.reason
        )));
    }
    let out = reader.into_inner().out;
    let mut head = ExportHead {
        records: report.records,
        head: report.head.unwrap_or_else(|| GENESIS_HASH.to_owned()),
        keyed_from: walk.first_mac.unwrap_or(report.records + 1),
        mac: String::new(),
    };
    head.mac = key.mac(head.message().as_bytes());
    writeln!(out, "{}", head.line()?).map_err(|e| StoreError::io("cannot write the export", e))?;
    Ok(head)
}

/// Passes what is read through to `out`.
struct Tee<'o, R, W> {
    inner: R,
    out: &'o mut W,
}

impl<R: Read, W: Write> Read for Tee<'_, R, W> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.out.write_all(&buf[..n])?;
        Ok(n)
    }
}

/// Verifies an export (or a copy of a log) at `path`: the chain, and with `key` the export
/// head and every MAC it requires (module docs). The file may be anywhere; no anchor or
/// index is consulted.
pub fn verify_export(path: &Path, key: Option<&AuditKey>) -> StoreResult<VerifyReport> {
    let read_err = |e| StoreError::io(format!("cannot read {}", path.display()), e);
    let file = File::open(path).map_err(read_err)?;
    let head = last_line(&file)
        .map_err(read_err)?
        .and_then(|(start, line)| {
            let value: serde_json::Value = serde_json::from_slice(&line).ok()?;
            let head: ExportHead = serde_json::from_value(value.get(EXPORT_HEAD)?.clone()).ok()?;
            Some((start, head))
        });
    let mut report = VerifyReport {
        keyed: key.is_some(),
        ..VerifyReport::default()
    };
    let bad = |line: u64, reason: &str| {
        Some(BadRecord {
            line,
            seq: None,
            reason: reason.to_owned(),
        })
    };
    // With the key, only an authentic head may let records go without a MAC.
    let keyed_from = match (key, &head) {
        (Some(key), Some((_, h))) if !key.verify(h.message().as_bytes(), &h.mac) => {
            report.first_bad = bad(
                1,
                "the export head's MAC is wrong (forged, or exported with another key)",
            );
            return Ok(report);
        }
        (_, Some((_, h))) => h.keyed_from,
        (Some(_), None) => 1,
        (None, None) => u64::MAX,
    };
    let mut reader = BufReader::with_capacity(256 * 1024, &file);
    let mut walk = Walk::new(key, None).keyed_from(keyed_from);
    let stopped = walk
        .run(&mut reader, &mut report, |l| l.starts_with(PREFIX))
        .map_err(|e| match e {
            WalkError::Read(e) => read_err(e),
            WalkError::Store(e) => e,
        })?;
    if report.first_bad.is_some() {
        return Ok(report);
    }
    let next = walk.line_no + 1;
    report.first_bad = match (&head, stopped) {
        (Some((start, h)), Some(_)) if walk.offset() == *start => {
            compare(h, &report).and_then(|reason| bad(next, &reason))
        }
        (_, Some(_)) => bad(next, "records after the export head (appended)"),
        (None, None) if key.is_some() => bad(
            next,
            "no export head: nothing vouches that these are all the records (a forged file, \
             a raw copy of a log, or an export cut short); export with `toolgate audit export`",
        ),
        _ => None,
    };
    Ok(report)
}

/// The start and bytes of the file's last line (without its newline), if it has one.
fn last_line(file: &File) -> std::io::Result<Option<(u64, Vec<u8>)>> {
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(None);
    }
    let mut last = [0u8; 1];
    std::os::unix::fs::FileExt::read_exact_at(file, &mut last, len - 1)?;
    let end = if last[0] == b'\n' { len - 1 } else { len };
    super::recover::line_ending_at(file, end).map(Some)
}

/// Whether the records read are exactly those the export head names.
fn compare(head: &ExportHead, report: &VerifyReport) -> Option<String> {
    let found = report.head.as_deref().unwrap_or(GENESIS_HASH);
    (head.records != report.records || head.head != found).then(|| {
        format!(
            "the export head names {} records ending at {}, but the file holds {} ending at \
             {found} (records removed or added)",
            head.records, head.head, report.records
        )
    })
}
