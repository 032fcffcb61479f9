//! `audit verify` (`toolgate_store::audit::verify`) on arbitrary bytes.
//!
//! Input: one mode byte, then bytes written to a temporary file:
//! - 0: the bytes are the log, no index;
//! - 1: the bytes are the log, checked against the index of a real 3-record chain;
//! - 2: the bytes follow that real chain's log (continuing a valid chain), with its index;
//! - 3: the bytes are the index database, the log is the real chain.
//!
//! Properties: no panic, no hang; a report never counts more good records than the file
//! has lines; an intact verdict means every line was a good record and the file does not
//! end in a torn line; against the index, an intact verdict needs at least the 3 records
//! the index knows.
#![no_main]

use std::path::PathBuf;
use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use serde_json::json;
use toolgate_store::audit::{AuditLog, AuditRecord, Durability, verify};

struct Fixture {
    _dir: tempfile::TempDir,
    /// The real chain's log, as written.
    good: Vec<u8>,
    index: PathBuf,
    jsonl: PathBuf,
    db: PathBuf,
}

const INDEXED: u64 = 3;

static FIXTURE: LazyLock<Fixture> = LazyLock::new(|| {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let real_jsonl = dir.path().join("real/logs/tool-audit.jsonl");
    let index = dir.path().join("real/toolgate.db");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    runtime.block_on(async {
        let log = AuditLog::open(&real_jsonl, &index, Durability::Durable)
            .unwrap_or_else(|e| panic!("{e}"));
        for n in 0..INDEXED {
            let record: AuditRecord = serde_json::from_value(json!({
                "kind": if n % 2 == 0 { "attempt" } else { "outcome" },
                "ts": format!("2026-01-01T00:00:0{n}.000000Z"),
                "call_id": format!("c{}", n / 2),
                "session": "s1",
                "principal": "alice",
                "role": "default",
                "tool": "read_file",
                "arguments": {"path": "a.md"},
                "outcome": if n % 2 == 0 { "started" } else { "ok" },
            }))
            .unwrap_or_else(|e| panic!("{e}"));
            log.append(record).await.unwrap_or_else(|e| panic!("{e}"));
        }
        log.flush().await.unwrap_or_else(|e| panic!("{e}"));
    });
    let good = std::fs::read(&real_jsonl).unwrap_or_else(|e| panic!("{e}"));
    Fixture {
        jsonl: dir.path().join("fuzz.jsonl"),
        db: dir.path().join("fuzz.db"),
        _dir: dir,
        good,
        index,
    }
});

fuzz_target!(|data: &[u8]| {
    let Some((&mode, bytes)) = data.split_first() else {
        return;
    };
    let f = &*FIXTURE;
    let mode = mode % 4;
    let (log, db): (Vec<u8>, Option<&PathBuf>) = match mode {
        0 => (bytes.to_vec(), None),
        1 => (bytes.to_vec(), Some(&f.index)),
        2 => ([f.good.as_slice(), bytes].concat(), Some(&f.index)),
        _ => {
            std::fs::write(&f.db, bytes).unwrap_or_else(|e| panic!("{e}"));
            (f.good.clone(), Some(&f.db))
        }
    };
    std::fs::write(&f.jsonl, &log).unwrap_or_else(|e| panic!("{e}"));
    let Ok(report) = verify(&f.jsonl, db.map(PathBuf::as_path)) else {
        return;
    };
    let lines = log.iter().filter(|b| **b == b'\n').count() as u64;
    assert!(
        report.records <= lines,
        "{} good records in {lines} lines",
        report.records
    );
    assert_eq!(report.head.is_some(), report.records > 0, "{report:?}");
    if report.ok() {
        assert_eq!(
            report.records, lines,
            "intact, yet not every line was a good record"
        );
        assert!(
            log.is_empty() || log.ends_with(b"\n"),
            "a torn last line was accepted"
        );
        if mode == 1 || mode == 2 {
            assert!(
                report.records >= INDEXED,
                "intact with records the index knows missing: {report:?}"
            );
        }
    }
    if mode == 2 {
        assert!(
            report.records >= INDEXED,
            "the real chain's records stopped verifying: {report:?}"
        );
    }
});
