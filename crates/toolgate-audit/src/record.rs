//! What one audit record says (R-EXE-5): every attempt and every outcome of a tool call, with
//! who, what, when and how it ended. Records are written as given, after redaction; the chain
//! fields (`seq`, `prev`, `hash`) are added by the writer ([`super::chain`]).

use std::time::SystemTime;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use toolgate_protocol::{ErrorCode, Principal, Risk, Role, SessionId};

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

/// How an audited event ended, written as one word: `started` (an attempt), `ok`, or the
/// closed error code's wire name (`approval_denied`, `timeout`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AuditOutcome {
    Started,
    Ok,
    Failed(ErrorCode),
}

impl AuditOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            AuditOutcome::Started => "started",
            AuditOutcome::Ok => "ok",
            AuditOutcome::Failed(code) => code.as_str(),
        }
    }
}

impl std::fmt::Display for AuditOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An outcome word that is neither `started`, `ok` nor an error code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown outcome `{0}` (expected started, ok or an error code such as approval_denied)")]
pub struct UnknownOutcome(pub String);

impl std::str::FromStr for AuditOutcome {
    type Err = UnknownOutcome;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "started" => Ok(AuditOutcome::Started),
            "ok" => Ok(AuditOutcome::Ok),
            other => other
                .parse::<ErrorCode>()
                .map(AuditOutcome::Failed)
                .map_err(|_| UnknownOutcome(other.to_owned())),
        }
    }
}

impl Serialize for AuditOutcome {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for AuditOutcome {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let word = std::borrow::Cow::<'de, str>::deserialize(d)?;
        word.parse().map_err(serde::de::Error::custom)
    }
}

/// One audited event of a tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditRecord {
    pub kind: RecordKind,
    /// RFC 3339 UTC with microseconds, e.g. `2026-01-02T03:04:05.123456Z`.
    pub ts: String,
    pub call_id: String,
    pub session: SessionId,
    pub principal: Principal,
    pub role: Role,
    pub tool: String,
    /// Where the tool comes from (`builtin`, an MCP server name, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub risk: Option<Risk>,
    pub arguments: Value,
    /// `started` for attempts; `ok` or an `ErrorCode` wire name for outcomes.
    pub outcome: AuditOutcome,
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
    /// Who vouched for the caller: the access token's issuer (`iss`), or `toolgate` for a
    /// token toolgate issued itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issuer: Option<String>,
    /// The caller as the issuer names it (`sub`; the token id for toolgate's own tokens).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// The id of the `[[policy.rules]]` rule that decided the call, when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_rule: Option<String>,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_are_one_word_each_way_and_unknown_words_are_refused() {
        for (word, outcome) in [
            ("started", AuditOutcome::Started),
            ("ok", AuditOutcome::Ok),
            (
                "approval_denied",
                AuditOutcome::Failed(ErrorCode::ApprovalDenied),
            ),
        ] {
            assert_eq!(word.parse::<AuditOutcome>(), Ok(outcome));
            assert_eq!(serde_json::to_value(outcome).unwrap(), Value::from(word));
            let back: AuditOutcome = serde_json::from_value(Value::from(word)).unwrap();
            assert_eq!(back, outcome);
        }
        assert_eq!(
            "forbiden".parse::<AuditOutcome>(),
            Err(UnknownOutcome("forbiden".into()))
        );
        assert!(serde_json::from_value::<AuditOutcome>(Value::from("nope")).is_err());
    }
}
