//! `audit verify` (`toolgate_audit::verify`) on arbitrary bytes.
//!
//! Input: one mode byte, then bytes written to a temporary file:
//! - 0: the bytes are the log, no index;
//! - 1: the bytes are the log, checked against the index of a real 3-record chain;
//! - 2: the bytes follow that real chain's log (continuing a valid chain), with its index;
//! - 3: the bytes are the index database, the log is the real chain;
//! - 4: the bytes replace a keyed log (MACs, head anchor), checked with its key;
//! - 5: the bytes follow that keyed log's real records, checked with its key.
//!
//! Properties: no panic, no hang; a report never counts more good records than the file
//! has lines; an intact verdict means every line was a good record and the file does not
//! end in a torn line; against the index, an intact verdict needs at least the 3 records
//! the index knows; and with the key, only the real keyed log itself is intact — bytes
//! written without the key (appended, replacing, rewriting) never pass as records.

use std::path::PathBuf;
use std::sync::LazyLock;

use serde_json::json;
use toolgate_audit::{AuditKey, AuditLog, AuditRecord, Durability, verify, verify_with};

struct Fixture {
    _dir: tempfile::TempDir,
    /// The real chain's log, as written.
    good: Vec<u8>,
    index: PathBuf,
    jsonl: PathBuf,
    db: PathBuf,
    /// The keyed log (its anchor names this path), its real bytes and its key.
    keyed: PathBuf,
    keyed_good: Vec<u8>,
    key: AuditKey,
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
    let keyed = dir.path().join("keyed/logs/tool-audit.jsonl");
    let key_dir = dir.path().join("key");
    let key = AuditKey::open_or_create(&key_dir).unwrap_or_else(|e| panic!("{e}"));
    runtime.block_on(async {
        let plain = AuditLog::open(&real_jsonl, &index, Durability::Durable)
            .unwrap_or_else(|e| panic!("{e}"));
        let keyed_log = AuditLog::open_keyed(
            &keyed,
            &dir.path().join("keyed/toolgate.db"),
            Durability::Durable,
            key.clone(),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        for log in [&plain, &keyed_log] {
            for n in 0..INDEXED {
                log.append(record(n))
                    .await
                    .unwrap_or_else(|e| panic!("{e}"));
            }
            log.flush().await.unwrap_or_else(|e| panic!("{e}"));
        }
    });
    // The anchor follows the fsynced records from the writer thread: wait until it names
    // them all, so the real keyed log is the only one that can pass.
    let mut anchored = None;
    for _ in 0..200 {
        anchored = verify_with(&keyed, None, Some(&key))
            .ok()
            .filter(|r| r.ok())
            .and_then(|r| r.anchored);
        if anchored == Some(INDEXED) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(
        anchored,
        Some(INDEXED),
        "the keyed fixture log is not anchored"
    );
    let keyed_good = std::fs::read(&keyed).unwrap_or_else(|e| panic!("{e}"));
    let good = std::fs::read(&real_jsonl).unwrap_or_else(|e| panic!("{e}"));
    Fixture {
        jsonl: dir.path().join("fuzz.jsonl"),
        db: dir.path().join("fuzz.db"),
        _dir: dir,
        good,
        index,
        keyed,
        keyed_good,
        key,
    }
});

fn record(n: u64) -> AuditRecord {
    serde_json::from_value(json!({
        "kind": if n.is_multiple_of(2) { "attempt" } else { "outcome" },
        "ts": format!("2026-01-01T00:00:0{n}.000000Z"),
        "call_id": format!("c{}", n / 2),
        "session": "s1",
        "principal": "alice",
        "role": "default",
        "tool": "read_file",
        "arguments": {"path": "a.md"},
        "outcome": if n.is_multiple_of(2) { "started" } else { "ok" },
    }))
    .unwrap_or_else(|e| panic!("{e}"))
}

/// One input: see the module doc for the properties checked.
pub fn run(data: &[u8]) {
    let Some((&mode, bytes)) = data.split_first() else {
        return;
    };
    let f = &*FIXTURE;
    let mode = mode % 6;
    if mode >= 4 {
        let log = match mode {
            4 => bytes.to_vec(),
            _ => [f.keyed_good.as_slice(), bytes].concat(),
        };
        std::fs::write(&f.keyed, &log).unwrap_or_else(|e| panic!("{e}"));
        if let Ok(report) = verify_with(&f.keyed, None, Some(&f.key)) {
            assert!(
                !report.ok() || log == f.keyed_good,
                "bytes written without the key verified under it: {report:?}"
            );
        }
        return;
    }
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
}
