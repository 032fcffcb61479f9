//! The audit chain as written: round trip, durability of an acknowledged append, redaction on
//! disk, buffered mode, many concurrent appenders, two logs on one file.

use std::sync::Arc;

use serde_json::json;
use toolgate_audit::{
    AuditQuery, AuditRecord, Durability, GENESIS_HASH, RecordKind, StoredRecord, verify,
};

use super::audit_fixtures::{LogDir, record, write_log};

#[tokio::test]
async fn appended_records_come_back_chained_and_verify() {
    let dir = LogDir::new();
    let log = dir.open(Durability::Durable);
    for i in 1..=3 {
        assert_eq!(log.append(record(i)).await.unwrap(), i);
    }
    let stored = log.query(&AuditQuery::default()).unwrap();
    let lines = dir.lines();
    let hash_of = |line: &str| line[9..73].to_owned();
    let expected: Vec<StoredRecord> = (1..=3)
        .map(|i| StoredRecord {
            seq: i,
            hash: hash_of(&lines[i as usize - 1]),
            prev: if i == 1 {
                GENESIS_HASH.to_owned()
            } else {
                hash_of(&lines[i as usize - 2])
            },
            record: record(i),
        })
        .collect();
    assert_eq!(stored, expected);

    let report = verify(&dir.jsonl, Some(&dir.db)).unwrap();
    assert!(report.ok(), "{report:?}");
    assert_eq!(report.records, 3);
    assert_eq!(report.head, Some(hash_of(&lines[2])));
}

#[tokio::test]
async fn a_durable_append_is_in_the_file_when_it_returns() {
    let dir = LogDir::new();
    let log = dir.open(Durability::Durable);
    for i in 1..=5 {
        let seq = log.append(record(i)).await.unwrap();
        let lines = dir.lines();
        assert_eq!(lines.len() as u64, seq);
        assert!(lines[seq as usize - 1].contains(&format!("\"call_id\":\"c{i}\"")));
    }
}

#[tokio::test]
async fn secrets_never_reach_the_file_or_the_index() {
    let dir = LogDir::new();
    let log = dir.open(Durability::Durable);
    let mut rec = record(1);
    rec.kind = RecordKind::Outcome;
    rec.arguments = json!({
        "password": "hunter2-very-secret",
        "note": "send Authorization: Bearer abcdefghijklmnop123456 along",
        "blob": "q".repeat(3000),
    });
    rec.outcome = "execution_failed".parse().unwrap();
    rec.error = Some("upstream rejected key sk-proj-abcdefghijklmnopqrstuvwx1234".into());
    rec.result = Some(json!({"api_key": "AKIAIOSFODNN7EXAMPLE"}));
    log.append(rec.clone()).await.unwrap();

    let text = std::fs::read_to_string(&dir.jsonl).unwrap();
    for secret in [
        "hunter2",
        "abcdefghijklmnop123456",
        "sk-proj-",
        "AKIAIOSFODNN7EXAMPLE",
        "qqqq",
    ] {
        assert!(!text.contains(secret), "{secret} leaked into the log");
    }
    let stored = log.query(&AuditQuery::default()).unwrap();
    let blob = json!("q".repeat(3000)).to_string();
    let expected = AuditRecord {
        arguments: json!({
            "password": "[REDACTED]",
            "note": "send Authorization: Bearer [REDACTED] along",
            "blob": {"length": 3002, "sha256": hex::encode(<sha2::Sha256 as sha2::Digest>::digest(blob.as_bytes()))},
        }),
        error: Some("upstream rejected key [REDACTED]".into()),
        result: Some(json!({"api_key": "[REDACTED]"})),
        ..rec
    };
    assert_eq!(
        stored.into_iter().map(|s| s.record).collect::<Vec<_>>(),
        vec![expected]
    );
}

#[tokio::test]
async fn buffered_appends_are_written_by_flush() {
    let dir = LogDir::new();
    let log = dir.open(Durability::Buffered);
    assert_eq!(log.durability(), Durability::Buffered);
    for i in 1..=500 {
        assert_eq!(log.append(record(i)).await.unwrap(), 0);
    }
    log.flush().await.unwrap();
    assert_eq!(dir.lines().len(), 500);
    let report = verify(&dir.jsonl, Some(&dir.db)).unwrap();
    assert_eq!((report.ok(), report.records), (true, 500));
}

#[tokio::test]
async fn dropping_the_log_writes_what_was_queued() {
    let dir = LogDir::new();
    {
        let log = dir.open(Durability::Buffered);
        for i in 1..=50 {
            log.append(record(i)).await.unwrap();
        }
    }
    assert_eq!(dir.lines().len(), 50);
    assert!(verify(&dir.jsonl, Some(&dir.db)).unwrap().ok());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn many_concurrent_appenders_get_distinct_consecutive_seqs() {
    const TASKS: u64 = 32;
    const EACH: u64 = 200;
    let dir = LogDir::new();
    let log = Arc::new(dir.open(Durability::Durable));
    let tasks: Vec<_> = (0..TASKS)
        .map(|t| {
            let log = Arc::clone(&log);
            tokio::spawn(async move {
                let mut seqs = Vec::new();
                for i in 0..EACH {
                    seqs.push(log.append(record(t * EACH + i)).await.unwrap());
                }
                seqs
            })
        })
        .collect();
    let mut seqs = Vec::new();
    for task in tasks {
        seqs.extend(task.await.unwrap());
    }
    seqs.sort_unstable();
    assert_eq!(seqs, (1..=TASKS * EACH).collect::<Vec<_>>());

    let all = log.query(&AuditQuery::default()).unwrap();
    assert_eq!(all.len() as u64, TASKS * EACH);
    let report = verify(&dir.jsonl, Some(&dir.db)).unwrap();
    assert_eq!((report.ok(), report.records), (true, TASKS * EACH));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_logs_on_one_file_interleave_into_one_chain() {
    let dir = LogDir::new();
    let a = dir.open(Durability::Durable);
    let b = dir.open(Durability::Durable);
    let mut seqs = Vec::new();
    for i in 0..40 {
        seqs.push(a.append(record(2 * i)).await.unwrap());
        seqs.push(b.append(record(2 * i + 1)).await.unwrap());
    }
    // And concurrently, so batches of the two writers race for the lock.
    let (ra, rb) = tokio::join!(
        async {
            let mut s = Vec::new();
            for i in 100..150 {
                s.push(a.append(record(i)).await.unwrap());
            }
            s
        },
        async {
            let mut s = Vec::new();
            for i in 200..250 {
                s.push(b.append(record(i)).await.unwrap());
            }
            s
        }
    );
    seqs.extend(ra);
    seqs.extend(rb);
    seqs.sort_unstable();
    assert_eq!(seqs, (1..=180).collect::<Vec<_>>());

    // Each log's query sees the other's records too.
    assert_eq!(a.query(&AuditQuery::default()).unwrap().len(), 180);
    assert_eq!(b.query(&AuditQuery::default()).unwrap().len(), 180);
    drop((a, b));
    let report = verify(&dir.jsonl, Some(&dir.db)).unwrap();
    assert_eq!((report.ok(), report.records), (true, 180));
}

#[tokio::test]
async fn reopening_continues_the_chain() {
    let dir = LogDir::new();
    write_log(&dir, 3).await;
    let log = dir.open(Durability::Durable);
    assert_eq!(log.append(record(4)).await.unwrap(), 4);
    drop(log);
    let report = verify(&dir.jsonl, Some(&dir.db)).unwrap();
    assert_eq!((report.ok(), report.records), (true, 4));
}
