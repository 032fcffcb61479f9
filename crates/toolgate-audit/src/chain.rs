//! The line format of the hash chain. Each line is
//!
//! ```text
//! {"hash":"<64 hex>",REST\n        REST = "seq":N,"prev":"<64 hex>",<record fields>}
//! ```
//!
//! with `hash = sha256(REST bytes)`. `prev` is the previous line's hash (64 zeros for the
//! first line) and `seq` counts from 1. Checking a line needs no canonical re-serialisation:
//! hash the exact bytes after the prefix, then parse `{` + REST.
//!
//! A log written with an [`AuditKey`] has a MAC between the two:
//! `{"hash":"<64 hex>","mac":"<64 hex>",REST` with `mac = HMAC-SHA256(key, hash hex)`; since
//! REST holds `prev`, the MAC of each record covers the whole chain before it.

use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::key::AuditKey;
use super::record::{AuditRecord, StoredRecord};

/// `prev` of the first record.
pub const GENESIS_HASH: &str = "0000000000000000000000000000000000000000000000000000000000000000";

const HASH_PREFIX: &[u8] = b"{\"hash\":\"";
const HASH_HEX_LEN: usize = 64;
/// Bytes before REST: the prefix, the hex digest and `",`.
const REST_OFFSET: usize = HASH_PREFIX.len() + HASH_HEX_LEN + 2;
const MAC_PREFIX: &[u8] = b"\"mac\":\"";
/// Bytes of the MAC field, `"mac":"<64 hex>",`.
const MAC_FIELD_LEN: usize = MAC_PREFIX.len() + HASH_HEX_LEN + 2;

/// Why a line is not a valid chain record (on its own, before linking to its neighbours).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LineFault {
    NotJson,
    MissingHash,
    HashMismatch,
}

impl LineFault {
    /// The wording `verify` reports.
    pub(crate) fn reason(self) -> &'static str {
        match self {
            LineFault::NotJson => "not valid JSON",
            LineFault::MissingHash => "no leading hash field (not a chain record)",
            LineFault::HashMismatch => "hash mismatch (record edited)",
        }
    }
}

/// The record's JSON text without its opening brace: `"kind":…}`. Made on the caller's thread
/// so the writer only has to prepend the chain fields.
pub(crate) fn record_body(record: &AuditRecord) -> Result<String, serde_json::Error> {
    let mut text = serde_json::to_string(record)?;
    text.remove(0);
    Ok(text)
}

/// Appends the line for `body` at `seq` after `prev` to `out` and returns the line's hash.
/// The line is built in place: the hash field is filled in once REST is there to hash.
/// With a key, the line carries the hash's MAC.
pub(crate) fn encode_line(
    out: &mut Vec<u8>,
    seq: u64,
    prev: &str,
    body: &str,
    key: Option<&AuditKey>,
) -> String {
    let hash_at = out.len() + HASH_PREFIX.len();
    out.extend_from_slice(HASH_PREFIX);
    out.extend_from_slice(&[b'0'; HASH_HEX_LEN]);
    out.extend_from_slice(b"\",");
    let mac_at = out.len() + MAC_PREFIX.len();
    if key.is_some() {
        out.extend_from_slice(MAC_PREFIX);
        out.extend_from_slice(&[b'0'; HASH_HEX_LEN]);
        out.extend_from_slice(b"\",");
    }
    let rest_at = out.len();
    out.extend_from_slice(b"\"seq\":");
    out.extend_from_slice(seq.to_string().as_bytes());
    out.extend_from_slice(b",\"prev\":\"");
    out.extend_from_slice(prev.as_bytes());
    out.extend_from_slice(b"\",");
    out.extend_from_slice(body.as_bytes());
    let hash = sha256_hex(&out[rest_at..]);
    out[hash_at..hash_at + HASH_HEX_LEN].copy_from_slice(hash.as_bytes());
    if let Some(key) = key {
        let mac = key.mac(hash.as_bytes());
        out[mac_at..mac_at + HASH_HEX_LEN].copy_from_slice(mac.as_bytes());
    }
    out.push(b'\n');
    hash
}

/// Lowercase hex of the sha256 of `bytes`.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let digest = Sha256::digest(bytes);
    let mut hex = String::with_capacity(HASH_HEX_LEN);
    for b in digest {
        hex.push(char::from(DIGITS[usize::from(b >> 4)]));
        hex.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    hex
}

#[derive(Deserialize)]
struct LineFields {
    seq: u64,
    prev: String,
    #[serde(flatten)]
    record: AuditRecord,
}

/// `{` + REST of a line that has the hash prefix: what the index stores.
pub(crate) fn braced_text(line: &[u8]) -> Option<String> {
    let rest = line.get(REST_OFFSET..)?;
    let rest = match split_mac(rest) {
        Some((_, rest)) => rest,
        None => rest,
    };
    let mut braced = String::with_capacity(rest.len() + 1);
    braced.push('{');
    braced.push_str(std::str::from_utf8(rest).ok()?);
    Some(braced)
}

/// Checks and parses one line (without its `\n`).
pub(crate) fn decode_line(line: &[u8]) -> Result<StoredRecord, LineFault> {
    decode_keyed_line(line).map(|(stored, _)| stored)
}

/// [`decode_line`], with the line's MAC (not checked here) if it has one.
pub(crate) fn decode_keyed_line(line: &[u8]) -> Result<(StoredRecord, Option<String>), LineFault> {
    let (hash, rest) = split_hash(line)?;
    let (mac, rest) = match split_mac(rest) {
        Some((mac, rest)) => (Some(mac.to_owned()), rest),
        None => (None, rest),
    };
    if sha256_hex(rest) != hash {
        return Err(LineFault::HashMismatch);
    }
    let mut braced = Vec::with_capacity(rest.len() + 1);
    braced.push(b'{');
    braced.extend_from_slice(rest);
    let mut stored = decode_braced(&braced)?;
    stored.hash = hash.to_owned();
    Ok((stored, mac))
}

/// The MAC and what follows it, when `rest` starts with a well-formed MAC field.
fn split_mac(rest: &[u8]) -> Option<(&str, &[u8])> {
    let after = rest.strip_prefix(MAC_PREFIX)?;
    let hex = after.get(..HASH_HEX_LEN)?;
    if !hex.iter().all(u8::is_ascii_hexdigit)
        || after.get(HASH_HEX_LEN..HASH_HEX_LEN + 2)? != b"\","
    {
        return None;
    }
    Some((std::str::from_utf8(hex).ok()?, &rest[MAC_FIELD_LEN..]))
}

/// Parses `{` + REST; the hash is left empty for the caller to fill.
fn decode_braced(braced: &[u8]) -> Result<StoredRecord, LineFault> {
    let fields: LineFields = serde_json::from_slice(braced).map_err(|_| LineFault::NotJson)?;
    Ok(StoredRecord {
        seq: fields.seq,
        hash: String::new(),
        prev: fields.prev,
        record: fields.record,
    })
}

/// The declared hash and the REST bytes of a line.
fn split_hash(line: &[u8]) -> Result<(&str, &[u8]), LineFault> {
    let Some(after_prefix) = line.strip_prefix(HASH_PREFIX) else {
        return Err(
            if serde_json::from_slice::<serde::de::IgnoredAny>(line).is_ok() {
                LineFault::MissingHash
            } else {
                LineFault::NotJson
            },
        );
    };
    let well_formed = line.len() > REST_OFFSET
        && after_prefix[..HASH_HEX_LEN]
            .iter()
            .all(u8::is_ascii_hexdigit)
        && &after_prefix[HASH_HEX_LEN..HASH_HEX_LEN + 2] == b"\",";
    if !well_formed {
        return Err(LineFault::NotJson);
    }
    let hash =
        std::str::from_utf8(&after_prefix[..HASH_HEX_LEN]).map_err(|_| LineFault::NotJson)?;
    Ok((hash, &line[REST_OFFSET..]))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::RecordKind;

    fn record() -> AuditRecord {
        AuditRecord {
            kind: RecordKind::Attempt,
            ts: "2026-01-02T03:04:05.000006Z".into(),
            call_id: "c1".into(),
            session: "s1".into(),
            principal: "alice".into(),
            role: "dev".into(),
            tool: "echo".into(),
            source: None,
            risk: None,
            arguments: json!({"text": "hi"}),
            outcome: crate::AuditOutcome::Started,
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

    #[test]
    fn encoded_line_decodes_to_the_same_record() {
        let mut out = Vec::new();
        let body = record_body(&record()).unwrap();
        let hash = encode_line(&mut out, 1, GENESIS_HASH, &body, None);
        assert_eq!(out.last(), Some(&b'\n'));
        let stored = decode_line(&out[..out.len() - 1]).unwrap();
        assert_eq!(
            stored,
            StoredRecord {
                seq: 1,
                hash: hash.clone(),
                prev: GENESIS_HASH.into(),
                record: record()
            }
        );
        assert_eq!(hex::encode(Sha256::digest(&out[75..out.len() - 1])), hash);
    }

    #[test]
    fn faults_are_told_apart() {
        let mut out = Vec::new();
        let body = record_body(&record()).unwrap();
        encode_line(&mut out, 1, GENESIS_HASH, &body, None);
        let line = String::from_utf8(out[..out.len() - 1].to_vec()).unwrap();
        let edited = line.replace("alice", "alicf");
        assert_eq!(decode_line(edited.as_bytes()), Err(LineFault::HashMismatch));
        assert_eq!(decode_line(b"{\"seq\":1}"), Err(LineFault::MissingHash));
        assert_eq!(decode_line(b"garbage"), Err(LineFault::NotJson));
        assert_eq!(decode_line(&line.as_bytes()[..40]), Err(LineFault::NotJson));
    }
}
