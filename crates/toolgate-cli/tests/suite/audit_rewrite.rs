//! The audit against someone who can write the data dir but not the key dir (issue 30,
//! item 1), through the binary: `logs/` replaced by a link to a rebuilt chain, a wholly
//! forged export, SQLite index rows edited or deleted to hide records, the torn-tail
//! evidence deleted. Each exits 4 from `toolgate audit verify`, and no call adopts a forged
//! log.

use serde_json::{Value, json};

use super::harness::{Env, Run};

/// Three audited calls on the real (anchored) data dir.
fn three_calls() -> Env {
    let env = Env::new();
    for i in 0..3 {
        env.write(&format!("f{i}.txt"), "x\n");
        env.call("read_file", &json!({"path": format!("f{i}.txt")}))
            .assert_code(0);
    }
    env
}

fn verify_json(env: &Env, extra: &[&str]) -> (i32, Value) {
    let mut args = vec!["audit", "verify", "--json"];
    args.extend(extra);
    let run = env.run(&args);
    (run.code, run.json())
}

fn reason(v: &Value) -> String {
    v["first_bad"]["reason"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// The log's records rebuilt the way anyone can: MACs dropped, hashes recomputed, one
/// principal changed.
fn rebuilt(env: &Env) -> String {
    use sha2::{Digest, Sha256};
    let mut prev = "0".repeat(64);
    let mut text = String::new();
    for (i, rec) in env.audit_records().iter().enumerate() {
        let mut rec = rec.clone();
        for k in ["hash", "mac", "seq", "prev"] {
            rec.as_object_mut().map(|m| m.remove(k));
        }
        rec["principal"] = json!("mallory");
        let body = rec.to_string();
        let rest = format!("\"seq\":{},\"prev\":\"{prev}\",{}", i + 1, &body[1..]);
        prev = hex::encode(Sha256::digest(rest.as_bytes()));
        text.push_str(&format!("{{\"hash\":\"{prev}\",{rest}\n"));
    }
    text
}

#[test]
fn logs_replaced_by_a_link_to_a_rebuilt_chain_exits_4_and_is_not_adopted() {
    let env = three_calls();
    let forged = env.root().join("elsewhere");
    std::fs::create_dir_all(&forged).unwrap();
    let text = rebuilt(&env);
    std::fs::write(forged.join("tool-audit.jsonl"), &text).unwrap();
    std::fs::rename(env.data.join("logs"), env.data.join("logs.real")).unwrap();
    std::os::unix::fs::symlink(&forged, env.data.join("logs")).unwrap();

    let (code, v) = verify_json(&env, &[]);
    assert_eq!(code, 4, "{v}");
    assert!(reason(&v).contains("is a symbolic link"), "{v}");
    // The next call refuses the log instead of adopting it, and writes nothing through
    // the link.
    let run = env.call("read_file", &json!({"path": "f0.txt"}));
    assert_ne!(run.code, 0, "{}", run.stdout);
    assert!(run.stderr.contains("is a symbolic link"), "{}", run.stderr);
    assert_eq!(
        std::fs::read_to_string(forged.join("tool-audit.jsonl")).unwrap(),
        text
    );
    // Nor do the readers read through it.
    assert_ne!(env.run(&["audit", "tail"]).code, 0);
}

#[test]
fn the_data_dir_replaced_by_a_link_exits_4() {
    let env = three_calls();
    let forged = env.root().join("rebuilt");
    std::fs::create_dir_all(forged.join("logs")).unwrap();
    std::fs::write(forged.join("logs/tool-audit.jsonl"), rebuilt(&env)).unwrap();
    std::fs::rename(&env.data, env.root().join("data.real")).unwrap();
    std::os::unix::fs::symlink(&forged, &env.data).unwrap();
    let (code, v) = verify_json(&env, &[]);
    assert_eq!(code, 4, "{v}");
    assert!(reason(&v).contains("is a symbolic link"), "{v}");
    assert_ne!(env.call("read_file", &json!({"path": "f0.txt"})).code, 0);
}

fn verify_file(env: &Env, file: &std::path::Path) -> Run {
    env.run(&["audit", "verify", "--file", &file.display().to_string()])
}

#[test]
fn a_wholly_forged_export_exits_4_and_a_real_one_0() {
    let env = three_calls();
    let export = env.root().join("export.jsonl");
    env.run(&["audit", "export", "--out", &export.display().to_string()])
        .assert_code(0);
    let run = verify_file(&env, &export);
    run.assert_code(0);
    assert_eq!(run.stdout, "ok: 3 records, chain intact\n");

    let forged = env.root().join("forged.jsonl");
    std::fs::write(&forged, rebuilt(&env)).unwrap();
    let run = verify_file(&env, &forged);
    run.assert_code(4);
    assert!(run.stdout.contains("no MAC"), "{}", run.stdout);
    // The real export's head put under the forged records: its MAC names other records.
    let head = std::fs::read_to_string(&export)
        .unwrap()
        .lines()
        .last()
        .unwrap()
        .to_owned();
    std::fs::write(&forged, format!("{}{head}\n", rebuilt(&env))).unwrap();
    verify_file(&env, &forged).assert_code(4);
    // An empty file is no export.
    std::fs::write(&forged, "").unwrap();
    verify_file(&env, &forged).assert_code(4);
}

fn sql(env: &Env, statement: &str) {
    rusqlite::Connection::open(env.data.join("toolgate.db"))
        .unwrap()
        .execute_batch(statement)
        .unwrap();
}

#[test]
fn index_rows_edited_or_deleted_exit_4() {
    let env = three_calls();
    // Readers catch the index up first: every record is indexed.
    env.run(&["audit", "tail"]).assert_code(0);
    assert_eq!(verify_json(&env, &[]).0, 0);
    sql(
        &env,
        "UPDATE audit_records SET principal = 'nobody' WHERE seq = 2",
    );
    let (code, v) = verify_json(&env, &[]);
    assert_eq!((code, v["first_bad"]["seq"].clone()), (4, json!(2)), "{v}");
    assert!(reason(&v).contains("index row edited"), "{v}");

    let env = three_calls();
    env.run(&["audit", "tail"]).assert_code(0);
    sql(&env, "DELETE FROM audit_records WHERE seq = 1");
    let (code, v) = verify_json(&env, &[]);
    assert_eq!((code, v["first_bad"]["seq"].clone()), (4, json!(1)), "{v}");
    assert!(reason(&v).contains("index row deleted"), "{v}");
}

#[test]
fn torn_tail_evidence_is_anchored_and_deleting_it_exits_4() {
    let env = three_calls();
    let mut text = std::fs::read_to_string(env.audit_path()).unwrap();
    text.push_str("{\"hash\":\"0123");
    std::fs::write(env.audit_path(), &text).unwrap();
    // The next call sets the torn tail aside and records it in the anchor.
    env.call("read_file", &json!({"path": "f0.txt"}))
        .assert_code(0);
    let (code, v) = verify_json(&env, &[]);
    assert_eq!(code, 4, "{v}");
    assert!(reason(&v).contains("set aside"), "{v}");
    let evidence = std::path::PathBuf::from(v["evidence"][0].as_str().unwrap());
    // A human looked at it: accepted with the key, it stays as evidence.
    let (code, v) = verify_json(&env, &["--accept-evidence"]);
    assert_eq!(code, 0, "{v}");
    // Deleted, it fails.
    std::fs::remove_file(&evidence).unwrap();
    let (code, v) = verify_json(&env, &[]);
    assert_eq!(code, 4, "{v}");
    assert!(reason(&v).contains("is gone (deleted)"), "{v}");
}
