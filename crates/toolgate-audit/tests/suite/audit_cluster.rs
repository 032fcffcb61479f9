//! The cluster's audit log in PostgreSQL: writers append concurrently, each to a chain of its
//! own; `verify_cluster` accepts what they wrote and reports every kind of tampering done to
//! the rows behind their back — edited, forged without the key, deleted, cut off, inserted,
//! reordered, moved between chains, a head edited. Each attack is a test that fails on a
//! verifier that does not check it.

use std::sync::Arc;

use serde_json::json;
use tokio_postgres::NoTls;
use tokio_util::sync::CancellationToken;
use toolgate_audit::{
    AuditKey, AuditLog, AuditOutcome, AuditQuery, AuditRecord, Durability, RecordKind, cluster, pg,
};
use toolgate_store::PgBackend;
use toolgate_store::pg::PgUrl;
use toolgate_testkit::pg::Scratch;

fn record(n: usize, writer: &str) -> AuditRecord {
    AuditRecord {
        kind: RecordKind::Outcome,
        ts: AuditRecord::now_ts(),
        call_id: format!("{writer}-{n}"),
        session: "s".into(),
        principal: writer.into(),
        role: "default".into(),
        tool: "echo".into(),
        source: None,
        risk: None,
        arguments: json!({"n": n, "password": "hunter2"}),
        outcome: AuditOutcome::Ok,
        error: None,
        result: None,
        duration_us: Some(10),
        approver: None,
        approval_id: None,
        issuer: None,
        subject: None,
        policy_rule: None,
    }
}

struct Cluster {
    scratch: Scratch,
    backend: PgBackend,
    key: AuditKey,
    _keys: tempfile::TempDir,
}

impl Cluster {
    async fn new() -> Cluster {
        let scratch = Scratch::new().await;
        let url: PgUrl = scratch.url().parse().unwrap();
        let backend = PgBackend::open(&url, CancellationToken::new())
            .await
            .unwrap();
        let keys = tempfile::tempdir().unwrap();
        let key = AuditKey::open_or_create(&keys.path().join("keys")).unwrap();
        Cluster {
            scratch,
            backend,
            key,
            _keys: keys,
        }
    }

    async fn log(&self) -> AuditLog {
        AuditLog::open_postgres(
            self.backend.pool.clone(),
            Durability::Durable,
            Some(self.key.clone()),
        )
        .await
        .unwrap()
    }

    async fn sql(&self, statement: &str) {
        let (client, conn) = tokio_postgres::connect(self.scratch.url(), NoTls)
            .await
            .unwrap();
        tokio::spawn(conn);
        client.batch_execute(statement).await.unwrap();
    }

    async fn verify(&self) -> cluster::ClusterReport {
        let (heads, records) = pg::dump(&self.backend.pool).await.unwrap();
        cluster::check(&heads, &records, Some(&self.key))
    }

    /// Two writers (two replicas), 40 records each, appended concurrently.
    async fn with_two_chains() -> (Cluster, Vec<String>) {
        let c = Cluster::new().await;
        let (a, b) = (Arc::new(c.log().await), Arc::new(c.log().await));
        let mut tasks = Vec::new();
        for (log, name) in [(a, "alice"), (b, "bob")] {
            for n in 0..40 {
                let log = Arc::clone(&log);
                tasks.push(tokio::spawn(async move {
                    log.append(record(n, name)).await.unwrap()
                }));
            }
        }
        for t in tasks {
            assert!(t.await.unwrap() >= 1);
        }
        let (heads, _) = pg::dump(&c.backend.pool).await.unwrap();
        let chains = heads.into_iter().map(|h| h.chain).collect();
        (c, chains)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_writers_each_keep_an_intact_chain_and_secrets_are_masked() {
    let (c, chains) = Cluster::with_two_chains().await;
    assert_eq!(chains.len(), 2);
    let report = c.verify().await;
    assert!(report.ok(), "{report:?}");
    assert_eq!((report.chains, report.records), (2, 80));
    let log = c.log().await;
    let found = log
        .query_async(&AuditQuery {
            principal: Some("bob".into()),
            ..AuditQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(found.len(), 40);
    assert_eq!(found[0].record.arguments["password"], json!("[REDACTED]"));
    // The database never saw the secret.
    let (_, records) = pg::dump(&c.backend.pool).await.unwrap();
    assert!(records.iter().all(|row| !row.line.contains("hunter2")));
    assert!(log.verify_cluster().await.unwrap().ok());
}

async fn tampered(statement: &str, expect: &str) {
    let (c, chains) = Cluster::with_two_chains().await;
    let statement = statement
        .replace("{A}", &chains[0])
        .replace("{B}", &chains[1]);
    c.sql(&statement).await;
    let report = c.verify().await;
    assert!(!report.ok(), "{statement}: not detected");
    assert!(
        report.problems.iter().any(|p| p.reason.contains(expect)),
        "{statement}: {:?}",
        report.problems
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edited_record_is_reported() {
    tampered(
        "UPDATE audit_records SET line = replace(line, '\"tool\":\"echo\"', '\"tool\":\"ohce\"') \
         WHERE chain = '{A}' AND seq = 7",
        "hash mismatch",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_record_is_reported() {
    tampered(
        "DELETE FROM audit_records WHERE chain = '{A}' AND seq = 12",
        "missing (deleted)",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_cut_off_the_end_are_reported() {
    tampered(
        "DELETE FROM audit_records WHERE chain = '{B}' AND seq > 35",
        "records cut off",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn swapped_records_are_reported() {
    tampered(
        "UPDATE audit_records r SET line = o.line FROM audit_records o \
         WHERE r.chain = '{A}' AND o.chain = '{A}' \
           AND ((r.seq = 3 AND o.seq = 4) OR (r.seq = 4 AND o.seq = 3))",
        "reordered",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_record_moved_to_another_chain_is_reported() {
    tampered(
        "UPDATE audit_records SET chain = '{B}', seq = 41 WHERE chain = '{A}' AND seq = 40; \
         UPDATE audit_chains SET head_seq = 39 WHERE chain = '{A}'",
        "moved between chains",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_inserted_chain_or_an_edited_head_is_reported() {
    tampered(
        "INSERT INTO audit_records SELECT 'feedface', seq, line, kind, ts_us, call_id, session, \
         principal, tool, outcome FROM audit_records WHERE chain = '{A}'",
        "no head (inserted)",
    )
    .await;
    tampered(
        "UPDATE audit_chains SET head_seq = 38, head_hash = (SELECT substr(line, 10, 64) \
         FROM audit_records WHERE chain = '{A}' AND seq = 38) WHERE chain = '{A}'; \
         DELETE FROM audit_records WHERE chain = '{A}' AND seq > 38",
        "head MAC is wrong",
    )
    .await;
}

/// A record rewritten with a correct hash but without the key: its MAC gives it away.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forged_record_with_a_valid_hash_is_reported_by_its_mac() {
    let (c, chains) = Cluster::with_two_chains().await;
    let (_, records) = pg::dump(&c.backend.pool).await.unwrap();
    let line = records
        .iter()
        .find(|row| row.chain == chains[0] && row.seq == 40)
        .unwrap()
        .line
        .clone();
    // Edit the last record and recompute its hash (anyone can), keeping the old MAC.
    let rest_at = line.find(",\"seq\"").unwrap() + 1;
    let rest = line[rest_at..].replace("\"tool\":\"echo\"", "\"tool\":\"ohce\"");
    let hash = {
        use sha2::Digest;
        hex::encode(sha2::Sha256::digest(rest.as_bytes()))
    };
    let forged = format!("{{\"hash\":\"{hash}\",{}{rest}", &line[75..rest_at]);
    c.sql(&format!(
        "UPDATE audit_records SET line = $${forged}$$ WHERE chain = '{}' AND seq = 40",
        chains[0]
    ))
    .await;
    let report = c.verify().await;
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.reason.contains("MAC mismatch")),
        "{:?}",
        report.problems
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_export_verifies_and_a_line_removed_from_it_does_not() {
    let (c, _) = Cluster::with_two_chains().await;
    let (heads, records) = pg::dump(&c.backend.pool).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("audit.jsonl");
    let mut out = Vec::new();
    cluster::export(&heads, &records, &mut out).unwrap();
    std::fs::write(&file, &out).unwrap();
    let (h, r) = cluster::read_export(&file).unwrap().unwrap();
    assert!(cluster::check(&h, &r, Some(&c.key)).ok());
    let text = String::from_utf8(out).unwrap();
    let cut: Vec<&str> = text
        .lines()
        .enumerate()
        .filter(|(i, _)| *i != 5)
        .map(|(_, l)| l)
        .collect();
    std::fs::write(&file, cut.join("\n")).unwrap();
    let (h, r) = cluster::read_export(&file).unwrap().unwrap();
    assert!(!cluster::check(&h, &r, Some(&c.key)).ok());
}

/// A lost batch (the table gone for a while, as during a failover) fails its callers; the
/// writer then reads its head back and goes on, and the chain verifies.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_writer_goes_on_after_a_failed_batch() {
    let c = Cluster::new().await;
    let log = c.log().await;
    assert_eq!(log.append(record(1, "alice")).await.unwrap(), 1);
    c.sql("ALTER TABLE audit_records RENAME TO audit_records_away")
        .await;
    assert!(log.append(record(2, "alice")).await.is_err());
    c.sql("ALTER TABLE audit_records_away RENAME TO audit_records")
        .await;
    assert_eq!(log.append(record(3, "alice")).await.unwrap(), 2);
    assert!(c.verify().await.ok());
}

/// Someone cuts the newest records and sets the head back to an earlier, validly MACed one:
/// the writer's next batch fails, and it refuses to write on from the moved head (which
/// would bury the cut under new records) — the cut stays visible.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_head_moved_back_is_not_written_over() {
    let c = Cluster::new().await;
    let log = c.log().await;
    for n in 0..5 {
        log.append(record(n, "alice")).await.unwrap();
    }
    let (heads, records) = pg::dump(&c.backend.pool).await.unwrap();
    let chain = &heads[0].chain;
    let line3 = &records.iter().find(|row| row.seq == 3).unwrap().line;
    let hash3 = &line3[9..73];
    c.sql(&format!(
        "DELETE FROM audit_records WHERE chain = '{chain}' AND seq > 3; \
         UPDATE audit_chains SET head_seq = 3, head_hash = '{hash3}' WHERE chain = '{chain}'"
    ))
    .await;
    assert!(
        log.append(record(9, "alice")).await.is_err(),
        "the stale head refuses"
    );
    let again = log
        .append(record(10, "alice"))
        .await
        .unwrap_err()
        .to_string();
    assert!(again.contains("moved back"), "{again}");
    // Still nothing written over the cut: seq 4 and 5 stay missing.
    let (_, records) = pg::dump(&c.backend.pool).await.unwrap();
    assert_eq!(records.len(), 3);
}

/// Issue 30: the query columns rewritten to hide or misreport a record — `audit query`
/// filters on them — while the line stays intact.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edited_query_columns_are_reported() {
    for (column, value) in [
        ("principal", "'mallory'"),
        ("ts_us", "0"),
        ("tool", "'ohce'"),
        ("outcome", "'policy_denied'"),
    ] {
        tampered(
            &format!(
                "UPDATE audit_records SET {column} = {value} WHERE chain = '{{A}}' AND seq = 9"
            ),
            &format!("the row's {column} column(s) say otherwise"),
        )
        .await;
    }
}

/// Issue 30: a replica's whole chain deleted, head and rows — the newest one or an older one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_chain_is_reported() {
    for victim in ["{A}", "{B}"] {
        tampered(
            &format!(
                "DELETE FROM audit_records WHERE chain = '{victim}'; \
                 DELETE FROM audit_chains WHERE chain = '{victim}'"
            ),
            "deleted)",
        )
        .await;
    }
    // Deleting every chain but the last still leaves the last one's number behind.
    let (c, chains) = Cluster::with_two_chains().await;
    let (heads, _) = pg::dump(&c.backend.pool).await.unwrap();
    let first = heads.iter().find(|h| h.ordinal == Some(1)).unwrap();
    assert!(chains.contains(&first.chain));
    c.sql(&format!(
        "DELETE FROM audit_records WHERE chain = '{0}'; DELETE FROM audit_chains WHERE chain = '{0}'",
        first.chain
    ))
    .await;
    let report = c.verify().await;
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.reason.contains("number 1 is gone (deleted)")),
        "{:?}",
        report.problems
    );
}

/// Issue 30: one caller's record the database refuses must not take the rest of its batch
/// with it. 200 callers append at once on one chain (batches of many records); the records
/// of the tool the table refuses fail, every other caller's lands, and the chain verifies.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_record_fails_alone_and_its_batch_lands() {
    let c = Cluster::new().await;
    c.sql("ALTER TABLE audit_records ADD CONSTRAINT no_poison CHECK (tool <> 'poison')")
        .await;
    let log = Arc::new(c.log().await);
    let mut tasks = Vec::new();
    for n in 0..200 {
        let log = Arc::clone(&log);
        tasks.push(tokio::spawn(async move {
            let mut rec = record(n, "alice");
            if n % 50 == 7 {
                rec.tool = "poison".into();
            }
            (n, log.append(rec).await)
        }));
    }
    let mut failed = Vec::new();
    for t in tasks {
        let (n, result) = t.await.unwrap();
        if result.is_err() {
            failed.push(n);
        }
    }
    assert_eq!(failed, vec![7, 57, 107, 157]);
    let report = c.verify().await;
    assert!(report.ok(), "{report:?}");
    assert_eq!(report.records, 196);
}

/// Issue 30, the attack as reported: a NUL byte in one caller's session failed the shared
/// batch, and the other callers' records with it. Now every record lands (the column holds
/// the NUL escaped, as the line does) and the chain verifies.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_nul_in_one_callers_session_costs_no_other_caller_its_record() {
    let c = Cluster::new().await;
    let log = Arc::new(c.log().await);
    let mut tasks = Vec::new();
    for n in 0..200 {
        let log = Arc::clone(&log);
        tasks.push(tokio::spawn(async move {
            let mut rec = record(n, "alice");
            if n == 11 {
                rec.session = "evil\0session".into();
                rec.tool = "to\0ol".into();
            }
            log.append(rec).await
        }));
    }
    for t in tasks {
        t.await.unwrap().unwrap();
    }
    let report = c.verify().await;
    assert!(report.ok(), "{report:?}");
    assert_eq!(report.records, 200);
    let found = log
        .query_async(&AuditQuery {
            session: Some("evil\\u0000session".into()),
            ..AuditQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(found[0].record.session, "evil\0session");
}
