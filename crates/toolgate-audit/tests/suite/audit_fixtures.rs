//! Shared setup for the audit tests: a temporary data directory and records to append.

use std::path::PathBuf;

use serde_json::json;
use tempfile::TempDir;
use toolgate_audit::{AuditKey, AuditLog, AuditRecord, Durability, RecordKind};
use toolgate_store::StoreResult;

/// A data directory with the default layout: `logs/tool-audit.jsonl` and `toolgate.db`.
pub(super) struct LogDir {
    _dir: TempDir,
    pub jsonl: PathBuf,
    pub db: PathBuf,
    /// The audit key's directory, outside the data dir.
    pub keys: PathBuf,
}

impl LogDir {
    pub(super) fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        LogDir {
            jsonl: dir
                .path()
                .join("data")
                .join("logs")
                .join("tool-audit.jsonl"),
            db: dir.path().join("data").join("toolgate.db"),
            keys: dir.path().join("config").join("keys"),
            _dir: dir,
        }
    }

    pub(super) fn key(&self) -> AuditKey {
        AuditKey::open_or_create(&self.keys).unwrap()
    }

    pub(super) fn open_keyed(&self, durability: Durability) -> StoreResult<AuditLog> {
        AuditLog::open_keyed(&self.jsonl, &self.db, durability, self.key())
    }

    pub(super) fn open(&self, durability: Durability) -> AuditLog {
        AuditLog::open(&self.jsonl, &self.db, durability).unwrap()
    }

    /// The file's lines, each with its `\n`.
    pub(super) fn lines(&self) -> Vec<String> {
        std::fs::read_to_string(&self.jsonl)
            .unwrap()
            .split_inclusive('\n')
            .map(str::to_owned)
            .collect()
    }

    pub(super) fn write_lines(&self, lines: &[String]) {
        std::fs::write(&self.jsonl, lines.concat()).unwrap();
    }

    pub(super) fn append_raw(&self, bytes: &[u8]) {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&self.jsonl)
            .unwrap();
        f.write_all(bytes).unwrap();
    }
}

/// An attempt record of call `c{n}` by alice to `echo`, at second `n` of 2026.
pub(super) fn record(n: u64) -> AuditRecord {
    AuditRecord {
        kind: RecordKind::Attempt,
        ts: format!("2026-01-01T00:{:02}:{:02}.000000Z", n / 60, n % 60),
        call_id: format!("c{n}"),
        session: "s1".into(),
        principal: "alice".into(),
        role: "dev".into(),
        tool: "echo".into(),
        source: Some("builtin".into()),
        risk: Some(toolgate_protocol::Risk::Read),
        arguments: json!({"text": format!("hello {n}")}),
        outcome: toolgate_audit::AuditOutcome::Started,
        error: None,
        result: None,
        duration_us: None,
        approver: None,
        approval_id: None,
        issuer: None,
        subject: None,
        policy_rule: None,
    }
}

/// Appends records 1..=n durably and closes the log.
pub(super) async fn write_log(dir: &LogDir, n: u64) {
    let log = dir.open(Durability::Durable);
    for i in 1..=n {
        log.append(record(i)).await.unwrap();
    }
}
