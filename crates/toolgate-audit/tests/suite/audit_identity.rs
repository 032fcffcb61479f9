//! The log is the one its anchor names, and the index says what the log says (issue 30,
//! item 1). Each attack is done by someone who can write the data dir but not the key dir:
//! `logs/` or the data dir replaced by a link to a rebuilt chain, index rows edited or
//! deleted to hide records from queries. Each fails `verify`, and the next open refuses the
//! forged log instead of adopting it.

use std::path::Path;

use rusqlite::Connection;
use toolgate_audit::{AuditKey, AuditLog, Durability, VerifyReport, verify, verify_with};
use toolgate_store::StoreError;

use super::audit_fixtures::{LogDir, record};

async fn keyed_log(n: u64) -> LogDir {
    let dir = LogDir::new();
    let log = dir.open_keyed(Durability::Durable).unwrap();
    for i in 1..=n {
        log.append(record(i)).await.unwrap();
    }
    drop(log);
    dir
}

/// A chain anyone can build: hashes right, no MAC, at `data/logs/tool-audit.jsonl` under
/// `root`.
async fn rebuilt_chain(root: &Path, n: u64) {
    let jsonl = root.join("logs").join("tool-audit.jsonl");
    let log = AuditLog::open(&jsonl, &root.join("toolgate.db"), Durability::Durable).unwrap();
    for i in 1..=n {
        log.append(record(100 + i)).await.unwrap();
    }
}

fn keyed_check(dir: &LogDir) -> VerifyReport {
    let key = AuditKey::open_existing(&dir.keys).unwrap().unwrap();
    verify_with(&dir.jsonl, None, Some(&key)).unwrap()
}

fn reason(report: &VerifyReport) -> String {
    report
        .first_bad
        .as_ref()
        .map(|b| b.reason.clone())
        .unwrap_or_default()
}

fn refused_open(dir: &LogDir) -> String {
    match dir.open_keyed(Durability::Durable) {
        Err(StoreError::Corrupt(why)) => why,
        Err(other) => panic!("refused, but not as tampering: {other}"),
        Ok(_) => panic!("the forged log was adopted"),
    }
}

#[tokio::test]
async fn logs_replaced_by_a_link_to_a_rebuilt_chain_fails_and_is_not_adopted() {
    let dir = keyed_log(3).await;
    let data = dir.jsonl.parent().unwrap().parent().unwrap().to_owned();
    let elsewhere = data.parent().unwrap().join("elsewhere");
    rebuilt_chain(&elsewhere, 5).await;
    std::fs::rename(data.join("logs"), data.join("logs.real")).unwrap();
    std::os::unix::fs::symlink(elsewhere.join("logs"), data.join("logs")).unwrap();

    let report = keyed_check(&dir);
    assert!(!report.ok(), "{report:?}");
    assert!(reason(&report).contains("is a symbolic link"), "{report:?}");
    assert!(refused_open(&dir).contains("is a symbolic link"));
    // Readers refuse too: nothing is read through the link.
    assert!(verify(&dir.jsonl, None).is_ok_and(|r| !r.ok()));
    // Nothing was written through the link either.
    assert_eq!(
        std::fs::read_to_string(elsewhere.join("logs/tool-audit.jsonl"))
            .unwrap()
            .lines()
            .count(),
        5
    );
}

#[tokio::test]
async fn the_data_dir_replaced_by_a_link_fails_and_is_not_adopted() {
    let dir = keyed_log(3).await;
    let data = dir.jsonl.parent().unwrap().parent().unwrap().to_owned();
    let elsewhere = data.parent().unwrap().join("rebuilt");
    rebuilt_chain(&elsewhere, 4).await;
    std::fs::rename(&data, data.with_file_name("data.real")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &data).unwrap();

    let report = keyed_check(&dir);
    assert!(reason(&report).contains("is a symbolic link"), "{report:?}");
    assert!(refused_open(&dir).contains("is a symbolic link"));
}

/// The link is refused even before the log is first anchored, and the log file itself may
/// not be one.
#[tokio::test]
async fn a_linked_log_file_is_refused() {
    let dir = LogDir::new();
    let elsewhere = dir.keys.parent().unwrap().parent().unwrap().join("other");
    rebuilt_chain(&elsewhere, 2).await;
    std::fs::create_dir_all(dir.jsonl.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(elsewhere.join("logs/tool-audit.jsonl"), &dir.jsonl).unwrap();
    assert!(refused_open(&dir).contains("is a symbolic link"));
}

/// The same attack without a link: a rebuilt chain put in place of the log, or the log
/// cut back to an earlier copy of itself, is not what the anchor names.
#[tokio::test]
async fn a_rebuilt_log_at_the_same_path_fails_and_is_not_adopted() {
    let dir = keyed_log(3).await;
    let data = dir.jsonl.parent().unwrap().parent().unwrap().to_owned();
    std::fs::rename(data.join("logs"), data.join("logs.real")).unwrap();
    rebuilt_chain(&data, 6).await;
    let report = keyed_check(&dir);
    assert!(!report.ok(), "{report:?}");
    assert_eq!(report.first_bad.as_ref().unwrap().seq, Some(1));
    assert!(refused_open(&dir).contains("head anchor"));
}

/// An unkeyed log of five records, indexed, closed.
async fn indexed_log() -> LogDir {
    let dir = LogDir::new();
    let log = dir.open(Durability::Durable);
    for i in 1..=5 {
        log.append(record(i)).await.unwrap();
    }
    // Queries catch the index up: every record is indexed before the log is closed.
    assert_eq!(
        log.query(&Default::default()).unwrap().len(),
        5,
        "all indexed"
    );
    drop(log);
    dir
}

fn sql(dir: &LogDir, statement: &str) {
    Connection::open(&dir.db)
        .unwrap()
        .execute_batch(statement)
        .unwrap();
}

#[tokio::test]
async fn an_edited_index_row_is_reported() {
    let dir = indexed_log().await;
    assert!(verify(&dir.jsonl, Some(&dir.db)).unwrap().ok());
    sql(
        &dir,
        "UPDATE audit_records SET principal = 'mallory' WHERE seq = 3",
    );
    let report = verify(&dir.jsonl, Some(&dir.db)).unwrap();
    let bad = report.first_bad.clone().expect("detected");
    assert_eq!(bad.seq, Some(3));
    assert!(bad.reason.contains("another principal"), "{bad:?}");
    assert!(bad.reason.contains("index row edited"), "{bad:?}");

    let dir = indexed_log().await;
    sql(
        &dir,
        "UPDATE audit_records SET ts_us = 0, tool = 'x', outcome = 'ok' WHERE seq = 4",
    );
    let bad = verify(&dir.jsonl, Some(&dir.db))
        .unwrap()
        .first_bad
        .unwrap();
    assert!(
        bad.reason.contains("another ts_us, tool, outcome"),
        "{bad:?}"
    );
}

#[tokio::test]
async fn a_deleted_index_row_is_reported() {
    let dir = indexed_log().await;
    sql(&dir, "DELETE FROM audit_records WHERE seq = 2");
    let bad = verify(&dir.jsonl, Some(&dir.db))
        .unwrap()
        .first_bad
        .unwrap();
    assert_eq!(bad.seq, Some(2));
    assert!(bad.reason.contains("index row deleted"), "{bad:?}");
}
