//! Queries over the index: each filter, time ranges, limits and order.

use std::time::{Duration, SystemTime};

use toolgate_audit::{AuditIndex, AuditLog, AuditQuery, Durability, RecordKind};

use super::audit_fixtures::{LogDir, record};

/// Records 1..=8 at seconds 1..=8 of 2026: tools alternate echo/fetch, principals
/// alice/bob by thirds, odd records are outcomes.
async fn sample() -> (LogDir, AuditLog) {
    let dir = LogDir::new();
    let log = dir.open(Durability::Durable);
    for i in 1..=8u64 {
        let mut r = record(i);
        r.tool = if i % 2 == 0 { "fetch" } else { "echo" }.into();
        r.principal = if i <= 3 { "alice" } else { "bob" }.into();
        r.session = format!("s{}", i % 3).into();
        if i % 2 == 1 {
            r.kind = RecordKind::Outcome;
            r.outcome = if i == 5 { "timeout" } else { "ok" }.parse().unwrap();
        }
        log.append(r).await.unwrap();
    }
    (dir, log)
}

fn seqs(log: &AuditLog, q: AuditQuery) -> Vec<u64> {
    log.query(&q).unwrap().into_iter().map(|s| s.seq).collect()
}

fn at_second(s: u64) -> SystemTime {
    humantime::parse_rfc3339("2026-01-01T00:00:00Z").unwrap() + Duration::from_secs(s)
}

#[tokio::test]
async fn each_filter_selects_exactly_its_records() {
    let (_dir, log) = sample().await;
    let q = AuditQuery::default;
    assert_eq!(seqs(&log, q()), vec![1, 2, 3, 4, 5, 6, 7, 8]);
    assert_eq!(
        seqs(
            &log,
            AuditQuery {
                tool: Some("fetch".into()),
                ..q()
            }
        ),
        vec![2, 4, 6, 8]
    );
    assert_eq!(
        seqs(
            &log,
            AuditQuery {
                principal: Some("alice".into()),
                ..q()
            }
        ),
        vec![1, 2, 3]
    );
    assert_eq!(
        seqs(
            &log,
            AuditQuery {
                outcome: Some("timeout".parse().unwrap()),
                ..q()
            }
        ),
        vec![5]
    );
    assert_eq!(
        seqs(
            &log,
            AuditQuery {
                outcome: Some("started".parse().unwrap()),
                ..q()
            }
        ),
        vec![2, 4, 6, 8]
    );
    assert_eq!(
        seqs(
            &log,
            AuditQuery {
                session: Some("s0".into()),
                ..q()
            }
        ),
        vec![3, 6]
    );
    assert_eq!(
        seqs(
            &log,
            AuditQuery {
                call_id: Some("c7".into()),
                ..q()
            }
        ),
        vec![7]
    );
    assert_eq!(
        seqs(
            &log,
            AuditQuery {
                kind: Some(RecordKind::Outcome),
                ..q()
            }
        ),
        vec![1, 3, 5, 7]
    );
    assert_eq!(
        seqs(
            &log,
            AuditQuery {
                tool: Some("echo".into()),
                principal: Some("bob".into()),
                ..q()
            }
        ),
        vec![5, 7]
    );
    assert_eq!(
        seqs(
            &log,
            AuditQuery {
                tool: Some("nope".into()),
                ..q()
            }
        ),
        Vec::<u64>::new()
    );
}

#[tokio::test]
async fn time_range_limit_and_order() {
    let (_dir, log) = sample().await;
    let q = AuditQuery::default;
    let range = || AuditQuery {
        since: Some(at_second(3)),
        until: Some(at_second(6)),
        ..q()
    };
    assert_eq!(
        seqs(&log, range()),
        vec![3, 4, 5],
        "since is inclusive, until exclusive"
    );
    assert_eq!(
        seqs(
            &log,
            AuditQuery {
                limit: Some(2),
                ..range()
            }
        ),
        vec![3, 4]
    );
    assert_eq!(
        seqs(
            &log,
            AuditQuery {
                newest_first: true,
                limit: Some(2),
                ..range()
            }
        ),
        vec![5, 4]
    );
    assert_eq!(
        seqs(
            &log,
            AuditQuery {
                newest_first: true,
                ..q()
            }
        ),
        vec![8, 7, 6, 5, 4, 3, 2, 1]
    );
    assert_eq!(
        seqs(
            &log,
            AuditQuery {
                since: Some(at_second(9)),
                ..q()
            }
        ),
        Vec::<u64>::new()
    );
}

#[tokio::test]
async fn a_separate_index_reader_catches_up_with_the_file() {
    let (dir, log) = sample().await;
    let reader = AuditIndex::open(&dir.jsonl, &dir.db).unwrap();
    log.append(record(9)).await.unwrap();
    let found = reader
        .query(&AuditQuery {
            call_id: Some("c9".into()),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(
        found
            .into_iter()
            .map(|s| (s.seq, s.record))
            .collect::<Vec<_>>(),
        vec![(9, record(9))]
    );
}
