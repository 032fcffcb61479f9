//! Tamper evidence and crash safety: `verify` reports the first bad record after an edit,
//! deletion, insertion, reordering or tail truncation; reopening repairs a torn tail.

use toolgate_audit::{AuditLog, AuditQuery, BadRecord, Durability, VerifyReport, verify};
use toolgate_store::StoreError;

use super::audit_fixtures::{LogDir, record, write_log};

const PREV: &str =
    "prev does not match the previous record (record deleted, inserted or reordered)";

fn bad(line: u64, seq: Option<u64>, reason: &str) -> Option<BadRecord> {
    Some(BadRecord {
        line,
        seq,
        reason: reason.to_owned(),
    })
}

/// A log of six records, and the verdict on it after `tamper` changed its lines.
async fn tampered(tamper: impl FnOnce(&mut Vec<String>)) -> (LogDir, VerifyReport) {
    let dir = LogDir::new();
    write_log(&dir, 6).await;
    let mut lines = dir.lines();
    tamper(&mut lines);
    dir.write_lines(&lines);
    let report = verify(&dir.jsonl, None).unwrap();
    (dir, report)
}

#[tokio::test]
async fn an_edited_record_is_a_hash_mismatch() {
    let (_dir, report) = tampered(|lines| lines[2] = lines[2].replace("alice", "alicf")).await;
    assert_eq!(
        report.first_bad,
        bad(3, Some(3), "hash mismatch (record edited)")
    );
    assert_eq!(report.records, 2);
}

#[tokio::test]
async fn a_deleted_record_breaks_prev() {
    let (_dir, report) = tampered(|lines| {
        lines.remove(2);
    })
    .await;
    assert_eq!(report.first_bad, bad(3, Some(4), PREV));
}

#[tokio::test]
async fn an_inserted_record_breaks_prev() {
    let (_dir, report) = tampered(|lines| {
        let copy = lines[2].clone();
        lines.insert(3, copy);
    })
    .await;
    assert_eq!(report.first_bad, bad(4, Some(3), PREV));
}

#[tokio::test]
async fn reordered_records_break_prev() {
    let (_dir, report) = tampered(|lines| lines.swap(2, 3)).await;
    assert_eq!(report.first_bad, bad(3, Some(4), PREV));
}

#[tokio::test]
async fn a_garbage_line_and_a_torn_tail_are_named() {
    let (_dir, report) = tampered(|lines| lines[1] = "not json at all\n".into()).await;
    assert_eq!(report.first_bad, bad(2, None, "not valid JSON"));

    let (_dir, report) = tampered(|lines| lines.push("{\"hash\":\"ab".into())).await;
    assert_eq!(report.first_bad, bad(7, None, "torn record at end of file"));
    assert_eq!(report.records, 6);
}

#[tokio::test]
async fn an_intact_log_reports_its_head() {
    let (dir, report) = tampered(|_| {}).await;
    let last = dir.lines().pop().unwrap();
    assert_eq!(
        report,
        VerifyReport {
            records: 6,
            head: Some(last[9..73].to_owned()),
            first_bad: None,
            unkeyed: 6,
            ..VerifyReport::default()
        }
    );
}

#[tokio::test]
async fn tail_truncation_is_caught_by_the_index_only() {
    let (dir, report) = tampered(|lines| lines.truncate(4)).await;
    assert!(report.ok(), "the chain alone cannot see a cut tail");
    let with_index = verify(&dir.jsonl, Some(&dir.db)).unwrap();
    assert_eq!(
        with_index.first_bad,
        bad(
            5,
            Some(5),
            "the index knows records up to seq 6 but the file ends at seq 4 (records removed from the end)"
        )
    );
}

#[tokio::test]
async fn truncation_stays_evident_after_the_log_continues() {
    let (dir, _) = tampered(|lines| lines.truncate(4)).await;
    let log = dir.open(Durability::Durable);
    let mut replacement = record(50);
    replacement.tool = "other".into();
    assert_eq!(log.append(replacement.clone()).await.unwrap(), 5);
    // Queries show the file's records, not the lost ones.
    let tools: Vec<_> = log
        .query(&AuditQuery::default())
        .unwrap()
        .into_iter()
        .map(|s| (s.seq, s.record.tool))
        .collect();
    assert_eq!(
        tools,
        vec![
            (1, "echo".to_owned()),
            (2, "echo".to_owned()),
            (3, "echo".to_owned()),
            (4, "echo".to_owned()),
            (5, "other".to_owned())
        ]
    );
    drop(log);
    let report = verify(&dir.jsonl, Some(&dir.db)).unwrap();
    assert_eq!(report.records, 5);
    assert_eq!(
        report.first_bad,
        bad(
            5,
            Some(5),
            "the index kept 2 record(s) from seq 5 on that the file no longer has (records removed or replaced, then the log continued)"
        )
    );
}

#[tokio::test]
async fn a_record_edited_after_indexing_disagrees_with_the_index() {
    // Recompute a consistent chain from the edit on: only the index can tell.
    let dir = LogDir::new();
    write_log(&dir, 3).await;
    let other = LogDir::new();
    {
        let log = other.open(Durability::Durable);
        log.append(record(1)).await.unwrap();
        let mut forged = record(2);
        forged.principal = "mallory".into();
        log.append(forged).await.unwrap();
        log.append(record(3)).await.unwrap();
    }
    std::fs::copy(&other.jsonl, &dir.jsonl).unwrap();
    assert!(verify(&dir.jsonl, None).unwrap().ok());
    let report = verify(&dir.jsonl, Some(&dir.db)).unwrap();
    assert_eq!(
        report.first_bad,
        bad(
            2,
            Some(2),
            "the index holds a different hash for this record (replaced after it was indexed)"
        )
    );
}

#[tokio::test]
async fn reopening_sets_a_torn_tail_aside_and_the_chain_continues() {
    let dir = LogDir::new();
    write_log(&dir, 3).await;
    let torn = b"{\"hash\":\"0123456789abcdef\",\"seq\":4,\"prev\":";
    dir.append_raw(torn);
    assert_eq!(
        verify(&dir.jsonl, None).unwrap().first_bad,
        bad(4, None, "torn record at end of file")
    );

    let log = dir.open(Durability::Durable);
    assert_eq!(log.append(record(4)).await.unwrap(), 4);
    drop(log);
    // The chain is whole; the torn bytes are kept as evidence, reported until removed.
    let report = verify(&dir.jsonl, Some(&dir.db)).unwrap();
    assert_eq!((report.ok(), report.records), (false, 4));
    assert_eq!(std::fs::read(&report.evidence[0]).unwrap(), torn);
    std::fs::remove_file(&report.evidence[0]).unwrap();
    assert!(verify(&dir.jsonl, Some(&dir.db)).unwrap().ok());
}

#[tokio::test]
async fn reopening_sets_a_damaged_last_line_aside() {
    let dir = LogDir::new();
    write_log(&dir, 3).await;
    dir.append_raw(b"\0\0\0\0 crash garbage\n");
    let log = dir.open(Durability::Durable);
    assert_eq!(log.append(record(4)).await.unwrap(), 4);
    drop(log);
    let report = verify(&dir.jsonl, None).unwrap();
    assert_eq!(report.records, 4);
    assert_eq!(
        std::fs::read(&report.evidence[0]).unwrap(),
        b"\0\0\0\0 crash garbage\n"
    );
}

#[tokio::test]
async fn reopening_refuses_damage_that_is_not_a_torn_write() {
    let dir = LogDir::new();
    write_log(&dir, 3).await;
    let mut lines = dir.lines();
    lines[2] = lines[2].replace("alice", "alicf");
    lines.push("garbage\n".into());
    dir.write_lines(&lines);
    let before = std::fs::read(&dir.jsonl).unwrap();
    let err = AuditLog::open(&dir.jsonl, &dir.db, Durability::Durable)
        .err()
        .unwrap();
    assert!(matches!(err, StoreError::Corrupt(_)), "{err:?}");
    assert_eq!(
        std::fs::read(&dir.jsonl).unwrap(),
        before,
        "nothing was repaired"
    );
}

#[tokio::test]
async fn an_empty_or_missing_log() {
    let dir = LogDir::new();
    assert!(matches!(
        verify(&dir.jsonl, None),
        Err(StoreError::NotFound(_))
    ));
    drop(dir.open(Durability::Durable));
    assert_eq!(
        verify(&dir.jsonl, Some(&dir.db)).unwrap(),
        VerifyReport {
            records: 0,
            head: None,
            first_bad: None,
            ..VerifyReport::default()
        }
    );
}

#[tokio::test]
async fn long_records_survive_tail_repair_and_reopening() {
    // Lines far longer than the chunk the tail is scanned backwards in.
    let dir = LogDir::new();
    let mut big = record(1);
    big.arguments = serde_json::Value::Object(
        (0..20)
            .map(|i| (format!("field{i}"), serde_json::json!("x".repeat(1900))))
            .collect(),
    );
    {
        let log = dir.open(Durability::Durable);
        log.append(big.clone()).await.unwrap();
        log.append(big.clone()).await.unwrap();
    }
    assert!(dir.lines()[1].len() > 38_000);
    dir.append_raw(&dir.lines()[1].as_bytes()[..20_000]);

    let log = dir.open(Durability::Durable);
    assert_eq!(log.append(big.clone()).await.unwrap(), 3);
    let stored = log.query(&AuditQuery::default()).unwrap();
    assert_eq!(
        stored.into_iter().map(|s| s.record).collect::<Vec<_>>(),
        vec![big.clone(), big.clone(), big]
    );
    drop(log);
    let report = verify(&dir.jsonl, Some(&dir.db)).unwrap();
    assert_eq!((report.records, report.evidence.len()), (3, 1));
}
