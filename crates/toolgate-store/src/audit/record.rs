//! What one audit record says (R-EXE-5): every attempt and every outcome of a tool call, with
//! who, what, when and how it ended. Records are written as given, after redaction; the chain
//! fields (`seq`, `prev`, `hash`) are added by the writer ([`super::chain`]).

use std::time::SystemTime;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// When an append counts as done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// `append` returns once the record is queued; the writer fsyncs every few milliseconds.
    /// A crash may lose the last moments of records, never break the chain.
    Buffered,
    /// `append` returns only after the record's bytes are fsynced.
    #[default]
    Durable,
}

/// Whether a record marks the start of a call or its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RecordKind {
    Attempt,
    Outcome,
}

impl RecordKind {
    /// The wire name (`attempt` / `outcome`).
    pub fn as_str(self) -> &'static str {
        match self {
            RecordKind::Attempt => "attempt",
            RecordKind::Outcome => "outcome",
        }
    }
}

/// One audited event of a tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditRecord {
    pub kind: RecordKind,
    /// RFC 3339 UTC with microseconds, e.g. `2026-01-02T03:04:05.123456Z`.
    pub ts: String,
    pub call_id: String,
    pub session: String,
    pub principal: String,
    pub role: String,
    pub tool: String,
    /// Where the tool comes from (`builtin`, an MCP server name, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub risk: Option<String>,
    pub arguments: Value,
    /// `started` for attempts; `ok` or an `ErrorCode` wire name for outcomes.
    pub outcome: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_us: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approver: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_id: Option<String>,
}

impl AuditRecord {
    /// The current time in the record's `ts` format.
    pub fn now_ts() -> String {
        humantime::format_rfc3339_micros(SystemTime::now()).to_string()
    }
}

/// A record as read back from the log, with its place in the chain.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredRecord {
    /// 1-based position in the chain.
    pub seq: u64,
    /// sha256 (hex) of this record's line after the hash field.
    pub hash: String,
    /// `hash` of the previous record; 64 zeros for the first.
    pub prev: String,
    pub record: AuditRecord,
}
