//! Verifying the cluster's audit log: every chain, as the database holds it or as
//! `toolgate audit export` wrote it. A chain is sound when its records count 1, 2, 3, … with
//! nothing missing, each record's hash matches its text, each `prev` is the hash before it,
//! each record names the chain it is stored in, every MAC (with the key) is the key's, and
//! the chain's MACed head names its last record. What is found otherwise is reported per
//! record: edited, forged, deleted, inserted, reordered, moved between chains, cut off. Rows
//! read from the database must also have query columns that say what their line says (an
//! edited `principal`, `ts_us`, `tool` or `outcome` would misreport the record to `audit
//! query`), and the register of chains (`roster`) must have every chain it ever
//! had.

use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use super::chain::{GENESIS_HASH, braced_text, decode_keyed_line};
use super::index::IndexFields;
use super::key::AuditKey;
use super::pg::{ChainHead, ChainRow, ChainRows, head_message};
use toolgate_store::{StoreError, StoreResult};

/// One thing wrong, where it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ClusterProblem {
    pub chain: String,
    /// The record's position in its chain (0 for the chain's head).
    pub seq: u64,
    pub reason: String,
}

/// What a verification found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ClusterReport {
    pub chains: usize,
    pub records: u64,
    pub problems: Vec<ClusterProblem>,
}

impl ClusterReport {
    pub fn ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// The first line of a chain's head in an export: `{"chain_head":{…}}`.
const HEAD_KEY: &str = "chain_head";

/// Checks `heads` and `records`, the latter in chain and seq order.
pub fn check(heads: &[ChainHead], records: &[ChainRow], key: Option<&AuditKey>) -> ClusterReport {
    let mut problems = Vec::new();
    let mut by_chain: BTreeMap<&str, Vec<&ChainRow>> = BTreeMap::new();
    for row in records {
        by_chain.entry(row.chain.as_str()).or_default().push(row);
    }
    let known: BTreeMap<&str, &ChainHead> = heads.iter().map(|h| (h.chain.as_str(), h)).collect();
    let mut say = |chain: &str, seq: u64, reason: String| {
        problems.push(ClusterProblem {
            chain: chain.to_owned(),
            seq,
            reason,
        });
    };
    for (chain, rows) in &by_chain {
        if !known.contains_key(chain) {
            say(
                chain,
                0,
                "records of a chain with no head (inserted)".into(),
            );
        }
        let mut expected = 1u64;
        let mut prev = GENESIS_HASH.to_owned();
        for row in rows {
            let (stored_seq, line) = (&row.seq, &row.line);
            if *stored_seq != expected {
                if *stored_seq > expected {
                    say(
                        chain,
                        expected,
                        format!(
                            "records {expected}..{} are missing (deleted)",
                            stored_seq - 1
                        ),
                    );
                }
                expected = *stored_seq;
            }
            let (record, mac) = match decode_keyed_line(line.as_bytes()) {
                Ok(decoded) => decoded,
                Err(fault) => {
                    say(chain, *stored_seq, fault.reason().to_owned());
                    expected += 1;
                    continue;
                }
            };
            let named = braced_text(line.as_bytes())
                .and_then(|t| serde_json::from_str::<Value>(&t).ok())
                .and_then(|v| v.get("chain").and_then(Value::as_str).map(str::to_owned));
            if named.as_deref() != Some(*chain) {
                say(
                    chain,
                    *stored_seq,
                    format!(
                        "the record names chain {} (moved between chains)",
                        named.unwrap_or_else(|| "none".into())
                    ),
                );
            }
            if record.seq != *stored_seq {
                say(
                    chain,
                    *stored_seq,
                    format!(
                        "stored at seq {stored_seq} but numbered {} (reordered)",
                        record.seq
                    ),
                );
            }
            if let Some(columns) = &row.columns {
                let differ = columns.differing(&IndexFields::of(&record.record));
                if !differ.is_empty() {
                    say(
                        chain,
                        *stored_seq,
                        format!(
                            "the row's {} column(s) say otherwise than its record (edited: \
                             queries would misreport it)",
                            differ.join(", ")
                        ),
                    );
                }
            }
            if record.prev != prev {
                say(
                    chain,
                    *stored_seq,
                    "does not link to the record before it (inserted or reordered)".into(),
                );
            }
            if let Some(key) = key {
                match &mac {
                    Some(mac) if key.verify(record.hash.as_bytes(), mac) => {}
                    Some(_) => say(
                        chain,
                        *stored_seq,
                        "MAC mismatch (forged or written with another key)".into(),
                    ),
                    None => say(
                        chain,
                        *stored_seq,
                        "no MAC (written without the key)".into(),
                    ),
                }
            }
            prev = record.hash;
            expected = stored_seq + 1;
        }
        if let Some(head) = known.get(chain) {
            let last = rows.last().map_or(0, |row| row.seq);
            if head.seq != last || (last > 0 && head.hash != prev) {
                say(
                    chain,
                    head.seq,
                    format!(
                        "the chain's head names seq {} but the chain ends at {last} (records cut off or head moved)",
                        head.seq
                    ),
                );
            }
        }
    }
    for head in heads {
        if !by_chain.contains_key(head.chain.as_str()) && head.seq > 0 {
            say(
                &head.chain,
                head.seq,
                format!(
                    "the chain's head names seq {} but the chain holds no record (deleted)",
                    head.seq
                ),
            );
        }
        if let Some(key) = key {
            let message = head_message(&head.chain, head.seq, &head.hash, head.known);
            let good = head
                .mac
                .as_deref()
                .is_some_and(|m| key.verify(message.as_bytes(), m));
            if !good {
                say(
                    &head.chain,
                    0,
                    "the chain's head MAC is wrong (head edited)".into(),
                );
            }
        }
    }
    for (chain, reason) in super::roster::check(heads, key) {
        say(&chain, 0, reason);
    }
    ClusterReport {
        chains: by_chain.len().max(heads.len()),
        records: records.len() as u64,
        problems,
    }
}

/// The export format: every record line, chain by chain, then one `{"chain_head":…}` line
/// per chain.
pub fn export(
    heads: &[ChainHead],
    records: &[ChainRow],
    out: &mut impl std::io::Write,
) -> std::io::Result<()> {
    for row in records {
        out.write_all(row.line.trim_end().as_bytes())?;
        out.write_all(b"\n")?;
    }
    for h in heads {
        let line = serde_json::json!({HEAD_KEY: {
            "chain": h.chain, "seq": h.seq, "hash": h.hash, "mac": h.mac,
            "ordinal": h.ordinal, "link_mac": h.link_mac, "known": h.known,
        }});
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// Reads an export back into heads and records. `None` when the file is not an export (no
/// record names a chain and no head line: an embedded log).
pub fn read_export(path: &Path) -> StoreResult<Option<(Vec<ChainHead>, ChainRows)>> {
    let file = std::fs::File::open(path)
        .map_err(|e| StoreError::io(format!("cannot open {}", path.display()), e))?;
    let mut heads = Vec::new();
    let mut records = Vec::new();
    let mut clustered = false;
    for (n, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| StoreError::io(format!("reading {}", path.display()), e))?;
        if line.trim().is_empty() {
            continue;
        }
        let value: Option<Value> = serde_json::from_str(&line).ok();
        if let Some(head) = value.as_ref().and_then(|v| v.get(HEAD_KEY)) {
            clustered = true;
            heads.push(ChainHead {
                chain: head["chain"].as_str().unwrap_or_default().to_owned(),
                seq: head["seq"].as_u64().unwrap_or(0),
                hash: head["hash"].as_str().unwrap_or_default().to_owned(),
                mac: head["mac"].as_str().map(str::to_owned),
                ordinal: head["ordinal"].as_u64(),
                link_mac: head["link_mac"].as_str().map(str::to_owned),
                known: head["known"].as_u64(),
            });
            continue;
        }
        let chain = value
            .as_ref()
            .and_then(|v| v.get("chain"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let seq = value
            .as_ref()
            .and_then(|v| v.get("seq"))
            .and_then(Value::as_u64)
            .unwrap_or(n as u64 + 1);
        clustered |= chain.is_some();
        records.push(ChainRow {
            chain: chain.unwrap_or_default(),
            seq,
            line,
            columns: None,
        });
    }
    if !clustered {
        return Ok(None);
    }
    // Chain by chain, in the order each chain's records were written (a reordered file is
    // then caught by the prev links).
    let mut order: Vec<String> = Vec::new();
    for row in &records {
        if !order.contains(&row.chain) {
            order.push(row.chain.clone());
        }
    }
    records.sort_by_key(|row| order.iter().position(|c| c == &row.chain));
    Ok(Some((heads, records)))
}
