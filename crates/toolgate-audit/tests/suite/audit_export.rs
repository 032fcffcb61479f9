//! Exports that carry their proof (issue 30, item 1): `verify_export` with the key accepts
//! what `export` wrote and nothing a forger without the key can write — a wholly rebuilt
//! chain, a forged export head, an export cut short or extended.

use std::path::PathBuf;

use toolgate_audit::{AuditLog, Durability, VerifyReport, export, verify_export};

use super::audit_fixtures::{LogDir, record, write_log};

async fn keyed_log(dir: &LogDir, n: u64) {
    let log = dir.open_keyed(Durability::Durable).unwrap();
    for i in 1..=n {
        log.append(record(i)).await.unwrap();
    }
}

fn exported(dir: &LogDir) -> (PathBuf, String) {
    let mut out = Vec::new();
    export(&dir.jsonl, &dir.key(), &mut out).unwrap();
    let file = dir.keys.parent().unwrap().join("export.jsonl");
    let text = String::from_utf8(out).unwrap();
    std::fs::write(&file, &text).unwrap();
    (file, text)
}

fn reason(report: &VerifyReport) -> String {
    report
        .first_bad
        .as_ref()
        .map(|b| b.reason.clone())
        .unwrap_or_default()
}

#[tokio::test]
async fn an_export_verifies_with_the_key() {
    let dir = LogDir::new();
    keyed_log(&dir, 4).await;
    let (file, text) = exported(&dir);
    assert_eq!(text.lines().count(), 5);
    let report = verify_export(&file, Some(&dir.key())).unwrap();
    assert!(report.ok(), "{report:?}");
    assert_eq!((report.records, report.unkeyed), (4, 0));
}

/// Records from before the key are vouched for by the export head's hash.
#[tokio::test]
async fn an_export_of_a_log_older_than_its_key_verifies() {
    let dir = LogDir::new();
    write_log(&dir, 2).await;
    keyed_log(&dir, 0).await;
    let log = dir.open_keyed(Durability::Durable).unwrap();
    log.append(record(3)).await.unwrap();
    drop(log);
    let (file, text) = exported(&dir);
    let report = verify_export(&file, Some(&dir.key())).unwrap();
    assert!(report.ok(), "{report:?}");
    assert_eq!((report.records, report.unkeyed), (3, 2));
    // Rewriting a record from before the key changes the chain's head: caught.
    let lines: Vec<&str> = text.lines().collect();
    std::fs::write(&file, format!("{}\n{}\n", lines[2], lines[3])).unwrap();
    assert!(!verify_export(&file, Some(&dir.key())).unwrap().ok());
}

/// The attack: a chain anyone can build (right hashes, no MACs), passed off as an export.
#[tokio::test]
async fn a_wholly_forged_export_fails() {
    let dir = LogDir::new();
    keyed_log(&dir, 1).await;
    let forged = dir.keys.parent().unwrap().join("forged");
    let log = AuditLog::open(
        &forged.join("logs/tool-audit.jsonl"),
        &forged.join("toolgate.db"),
        Durability::Durable,
    )
    .unwrap();
    for i in 1..=3 {
        log.append(record(i)).await.unwrap();
    }
    drop(log);
    let file = forged.join("logs/tool-audit.jsonl");
    let report = verify_export(&file, Some(&dir.key())).unwrap();
    assert_eq!(
        report.first_bad.as_ref().unwrap().seq,
        Some(1),
        "{report:?}"
    );
    assert!(reason(&report).contains("no MAC"), "{report:?}");

    // With an export head made up for it: the head's MAC gives it away.
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push_str(&format!(
        "{{\"export_head\":{{\"records\":3,\"head\":\"{}\",\"keyed_from\":4,\"mac\":\"{}\"}}}}\n",
        "0".repeat(64),
        "a".repeat(64)
    ));
    std::fs::write(&file, text).unwrap();
    let report = verify_export(&file, Some(&dir.key())).unwrap();
    assert!(
        reason(&report).contains("export head's MAC is wrong"),
        "{report:?}"
    );

    // An empty file is no export either.
    std::fs::write(&file, "").unwrap();
    assert!(!verify_export(&file, Some(&dir.key())).unwrap().ok());
}

#[tokio::test]
async fn an_export_cut_short_or_extended_fails() {
    let dir = LogDir::new();
    keyed_log(&dir, 4).await;
    let (file, text) = exported(&dir);
    let lines: Vec<&str> = text.lines().collect();
    let key = dir.key();
    // The last record removed, the head kept.
    std::fs::write(&file, format!("{}\n{}\n", lines[..3].join("\n"), lines[4])).unwrap();
    let report = verify_export(&file, Some(&key)).unwrap();
    assert!(
        reason(&report).contains("records removed or added"),
        "{report:?}"
    );
    // The end cut off with the head: nothing vouches for the end.
    std::fs::write(&file, format!("{}\n", lines[..3].join("\n"))).unwrap();
    let report = verify_export(&file, Some(&key)).unwrap();
    assert!(reason(&report).contains("no export head"), "{report:?}");
    // A genuine record line after the head.
    std::fs::write(&file, format!("{text}{}\n", lines[3])).unwrap();
    assert!(!verify_export(&file, Some(&key)).unwrap().ok());
}

/// Export vouches only for a log that verifies.
#[tokio::test]
async fn a_tampered_log_is_not_exported() {
    let dir = LogDir::new();
    keyed_log(&dir, 3).await;
    let mut lines = dir.lines();
    lines[1] = lines[1].replace("hello 2", "hello 9");
    dir.write_lines(&lines);
    let mut out = Vec::new();
    assert!(export(&dir.jsonl, &dir.key(), &mut out).is_err());
}
