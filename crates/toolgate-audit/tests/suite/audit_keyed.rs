//! The keyed chain (issue 12, item 6): whoever can write the data dir but not the key
//! directory cannot forge, rewrite, cut or delete the log without `verify` failing on the
//! first bad record; a damaged acknowledged tail is refused, not repaired, and a torn
//! unacknowledged one is kept as evidence.

use serde_json::Value;
use sha2::{Digest, Sha256};
use toolgate_audit::{AuditKey, Durability, VerifyReport, accept_evidence, verify_with};
use toolgate_store::StoreError;

use super::audit_fixtures::{LogDir, record};

const NO_MAC: &str =
    "no MAC on a record of a keyed log (appended or rewritten without the audit key)";
const BAD_MAC: &str = "MAC mismatch (record forged or rewritten without the audit key)";

async fn keyed_log(n: u64) -> LogDir {
    let dir = LogDir::new();
    let log = dir.open_keyed(Durability::Durable).unwrap();
    for i in 1..=n {
        log.append(record(i)).await.unwrap();
    }
    drop(log);
    dir
}

fn check(dir: &LogDir, with_index: bool) -> VerifyReport {
    let key = AuditKey::open_existing(&dir.keys).unwrap().unwrap();
    let db = (with_index && dir.db.exists()).then_some(dir.db.as_path());
    verify_with(&dir.jsonl, db, Some(&key)).unwrap()
}

fn first_bad(report: &VerifyReport) -> (Option<u64>, String) {
    let bad = report.first_bad.as_ref().expect("a bad record");
    (bad.seq, bad.reason.clone())
}

/// A chain line for `record` (JSON without chain fields) at `seq` after `prev`, made the way
/// an attacker without the key can: sha256 only. Returns the line and its hash.
fn forge_line(record: &Value, seq: u64, prev: &str) -> (String, String) {
    let body = record.to_string();
    let rest = format!("\"seq\":{seq},\"prev\":\"{prev}\",{}", &body[1..]);
    let hash = hex::encode(Sha256::digest(rest.as_bytes()));
    (format!("{{\"hash\":\"{hash}\",{rest}\n"), hash)
}

/// The record fields of a stored line.
fn record_of(line: &str) -> Value {
    let mut v: Value = serde_json::from_str(line).unwrap();
    let m = v.as_object_mut().unwrap();
    for k in ["hash", "mac", "seq", "prev"] {
        m.remove(k);
    }
    v
}

fn hash_of(line: &str) -> String {
    let v: Value = serde_json::from_str(line).unwrap();
    v["hash"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn an_intact_keyed_log_verifies_with_its_anchor() {
    let dir = keyed_log(5).await;
    assert!(dir.lines().iter().all(|l| l.contains("\"mac\":\"")));
    let report = check(&dir, true);
    assert!(report.ok(), "{report:?}");
    assert_eq!(
        (report.records, report.unkeyed, report.anchored),
        (5, 0, Some(5))
    );
    // Reopening an intact log works and continues the chain.
    let log = dir.open_keyed(Durability::Durable).unwrap();
    assert_eq!(log.append(record(6)).await.unwrap(), 6);
    assert!(log.verify().unwrap().ok());
}

#[tokio::test]
async fn a_forged_appended_record_fails() {
    let dir = keyed_log(5).await;
    let last = dir.lines().pop().unwrap();
    let (line, _) = forge_line(&record_of(&last), 6, &hash_of(&last));
    dir.append_raw(line.as_bytes());
    assert_eq!(first_bad(&check(&dir, true)), (Some(6), NO_MAC.into()));
    // With a made-up MAC in place.
    let mut lines = dir.lines();
    let forged = lines.pop().unwrap().replacen(
        "\",\"seq\"",
        &format!("\",\"mac\":\"{}\",\"seq\"", "ab".repeat(32)),
        1,
    );
    lines.push(forged);
    dir.write_lines(&lines);
    assert_eq!(first_bad(&check(&dir, false)), (Some(6), BAD_MAC.into()));
}

#[tokio::test]
async fn a_rehashed_chain_with_the_index_deleted_fails() {
    let dir = keyed_log(5).await;
    let lines = dir.lines();
    let mut prev = toolgate_audit::GENESIS_HASH.to_owned();
    let mut forged = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let mut rec = record_of(line);
        if i == 2 {
            rec["principal"] = "mallory".into();
        }
        let (l, h) = forge_line(&rec, i as u64 + 1, &prev);
        forged.push(l);
        prev = h;
    }
    dir.write_lines(&forged);
    std::fs::remove_file(&dir.db).unwrap();
    // Stripped of MACs, the whole log claims to predate the key.
    assert_eq!(first_bad(&check(&dir, true)), (Some(1), NO_MAC.into()));
    // Keeping the old MACs on the rewritten records.
    let kept: Vec<String> = lines
        .iter()
        .zip(&forged)
        .map(|(old, new)| {
            let mac = &old[75..148];
            new.replacen("\",\"seq\"", &format!("\",{mac}\"seq\""), 1)
        })
        .collect();
    assert!(kept[0].contains("\"mac\":\""), "{}", kept[0]);
    dir.write_lines(&kept);
    // Record 1 is re-serialised too, so its old MAC no longer fits either.
    assert_eq!(first_bad(&check(&dir, true)), (Some(1), BAD_MAC.into()));
}

#[tokio::test]
async fn a_deleted_log_fails_and_is_not_recreated() {
    let dir = keyed_log(3).await;
    std::fs::remove_file(&dir.jsonl).unwrap();
    let (seq, reason) = first_bad(&check(&dir, true));
    assert_eq!(seq, Some(1));
    assert!(
        reason.contains("missing") && reason.contains("3 records"),
        "{reason}"
    );
    assert!(matches!(
        dir.open_keyed(Durability::Durable),
        Err(StoreError::Corrupt(_))
    ));
    assert!(!dir.jsonl.exists());
}

#[tokio::test]
async fn a_cut_tail_with_the_index_deleted_fails() {
    let dir = keyed_log(5).await;
    let mut lines = dir.lines();
    lines.pop();
    dir.write_lines(&lines);
    std::fs::remove_file(&dir.db).unwrap();
    let (seq, reason) = first_bad(&check(&dir, true));
    assert_eq!(seq, Some(5));
    assert!(reason.contains("up to seq 5"), "{reason}");
    // Opening refuses rather than chaining new records where the cut ones were.
    assert!(matches!(
        dir.open_keyed(Durability::Durable),
        Err(StoreError::Corrupt(_))
    ));
}

#[tokio::test]
async fn an_edited_last_line_is_reported_and_kept_not_truncated() {
    let dir = keyed_log(5).await;
    let mut lines = dir.lines();
    let last = lines.pop().unwrap().replacen("alice", "alicf", 1);
    lines.push(last);
    dir.write_lines(&lines);
    let before = std::fs::read(&dir.jsonl).unwrap();
    let report = check(&dir, true);
    assert_eq!(
        first_bad(&report),
        (Some(5), "hash mismatch (record edited)".into())
    );
    assert!(matches!(
        dir.open_keyed(Durability::Durable),
        Err(StoreError::Corrupt(_))
    ));
    assert_eq!(std::fs::read(&dir.jsonl).unwrap(), before);
}

/// The torn tail is kept as evidence and anchored: verify fails until a human accepts it,
/// and once accepted, editing or deleting the evidence file fails again (the attack: delete
/// the evidence and verify passes).
#[tokio::test]
async fn a_torn_unacknowledged_tail_is_kept_as_anchored_evidence() {
    let dir = keyed_log(3).await;
    let good = std::fs::read(&dir.jsonl).unwrap();
    dir.append_raw(b"{\"hash\":\"0123");
    let log = dir.open_keyed(Durability::Durable).unwrap();
    assert_eq!(std::fs::read(&dir.jsonl).unwrap(), good);
    let report = log.verify().unwrap();
    assert_eq!(report.evidence.len(), 1, "{report:?}");
    let evidence = report.evidence[0].clone();
    assert_eq!(std::fs::read(&evidence).unwrap(), b"{\"hash\":\"0123");
    let (seq, reason) = first_bad(&report);
    assert_eq!(seq, None);
    assert!(reason.contains("set aside"), "{reason}");
    // The log goes on; once a human accepted the evidence (with the key), it verifies.
    assert_eq!(log.append(record(4)).await.unwrap(), 4);
    let accepted = accept_evidence(&dir.jsonl, &dir.key()).unwrap();
    assert_eq!(accepted.len(), 1);
    assert!(log.verify().unwrap().ok());
    // Edited or deleted, the anchored evidence fails verify.
    std::fs::write(&evidence, b"{\"hash\":\"4567").unwrap();
    let (_, reason) = first_bad(&log.verify().unwrap());
    assert!(reason.contains("(edited)"), "{reason}");
    std::fs::remove_file(&evidence).unwrap();
    let (_, reason) = first_bad(&log.verify().unwrap());
    assert!(reason.contains("is gone (deleted)"), "{reason}");
}

#[tokio::test]
async fn an_unkeyed_log_becomes_keyed_and_its_old_records_are_counted() {
    let dir = LogDir::new();
    super::audit_fixtures::write_log(&dir, 2).await;
    let log = dir.open_keyed(Durability::Durable).unwrap();
    log.append(record(3)).await.unwrap();
    let report = log.verify().unwrap();
    assert!(report.ok(), "{report:?}");
    assert_eq!((report.records, report.unkeyed), (3, 2));
    drop(log);
    // Rewriting the old, unkeyed records is caught by the anchor's chain.
    let mut lines = dir.lines();
    let (l1, h1) = forge_line(
        &record_of(&lines[0]).clone(),
        1,
        toolgate_audit::GENESIS_HASH,
    );
    let mut rec2 = record_of(&lines[1]);
    rec2["tool"] = "other".into();
    let (l2, _) = forge_line(&rec2, 2, &h1);
    lines[0] = l1;
    lines[1] = l2;
    dir.write_lines(&lines);
    std::fs::remove_file(&dir.db).unwrap();
    assert!(check(&dir, true).first_bad.is_some());
}

#[test]
fn a_key_others_can_read_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = LogDir::new();
    dir.key();
    let key_file = dir.keys.join(toolgate_audit::KEY_FILE);
    assert_eq!(
        std::fs::metadata(&key_file).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert_eq!(
        std::fs::metadata(&dir.keys).unwrap().permissions().mode() & 0o777,
        0o700
    );
    std::fs::set_permissions(&key_file, std::fs::Permissions::from_mode(0o644)).unwrap();
    assert!(matches!(
        AuditKey::open_existing(&dir.keys),
        Err(StoreError::Corrupt(_))
    ));
}
