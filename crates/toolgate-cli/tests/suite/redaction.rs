//! Redaction end to end: secrets in arguments and in results reach the caller unchanged but
//! never the disk — not the audit JSONL, not the SQLite files (index, approvals). Long values
//! are stored as `{length, sha256}`.

use std::path::Path;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::harness::{Env, approval_id};

const OPENAI_KEY: &str = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXyZ0";
const BEARER: &str = "abc.def.ghi";
const JWT: &str =
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";
const AWS_KEY: &str = "AKIAIOSFODNN7EXAMPLE";

/// Every file under `dir`, as (path, bytes).
fn files_under(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("read dir") {
        let entry = entry.expect("entry");
        let path = entry.path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push((
                path.display().to_string(),
                std::fs::read(&path).expect("read"),
            ));
        }
    }
    out
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// `{length, sha256}` of a value's JSON text, computed independently of the store.
fn digest(value: &Value) -> Value {
    let text = value.to_string();
    json!({"length": text.chars().count(), "sha256": hex::encode(Sha256::digest(text.as_bytes()))})
}

#[test]
fn secrets_in_arguments_and_results_never_reach_the_disk() {
    let env = Env::new();
    env.write("a.txt", "plain\n");

    // 1. Secrets in arguments of a call the schema rejects: still audited, masked.
    let rejected = env.call(
        "read_file",
        &json!({
            "path": "a.txt",
            "api_key": OPENAI_KEY,
            "headers": {"Authorization": format!("Bearer {BEARER}")},
            "note": format!("session {JWT} and creds={AWS_KEY};region=eu"),
        }),
    );
    rejected.assert_code(2);
    let rec = env.outcome_of(rejected.json()["call_id"].as_str().unwrap_or_default());
    assert_eq!(
        rec["arguments"],
        json!({
            "path": "a.txt",
            "api_key": "[REDACTED]",
            "headers": {"Authorization": "[REDACTED]"},
            "note": "session [REDACTED] and creds=[REDACTED];region=eu",
        })
    );

    // 2. Secrets in the content of a write that needs approval: the pending request (SQLite)
    //    and the records keep them masked; the file gets the real bytes.
    let secret_text = format!(
        "key {OPENAI_KEY}\nAuthorization: Bearer {BEARER}\ntoken {JWT}\naws creds={AWS_KEY};x\n"
    );
    let masked_text = "key [REDACTED]\nAuthorization: Bearer [REDACTED]\ntoken [REDACTED]\naws creds=[REDACTED];x\n";
    let write_args = json!({"path": "secrets.txt", "content": secret_text});
    let pending = env.call("write_file", &write_args);
    pending.assert_code(3);
    let id = approval_id(&pending.json());
    let listed = env.run(&["approvals", "show", &id]).json();
    assert_eq!(
        listed["arguments"],
        json!({"path": "secrets.txt", "content": masked_text})
    );
    env.approve(&id, &[]);
    env.call("write_file", &write_args).assert_code(0);
    assert_eq!(env.read("secrets.txt"), secret_text);

    // 3. A result holding the secrets: the caller sees them, the audit does not.
    let read = env.call("read_file", &json!({"path": "secrets.txt"}));
    read.assert_code(0);
    assert_eq!(read.json()["data"]["content"], json!(secret_text));
    let rec = env.outcome_of(read.json()["call_id"].as_str().unwrap_or_default());
    assert_eq!(
        rec["result"],
        json!({"data": {
            "content": masked_text, "encoding": "utf-8", "lines_returned": 4,
            "path": "secrets.txt", "start_line": 1, "total_lines": 4, "truncated": false}})
    );

    // 4. A 5,000-character argument is stored as its length and hash.
    let long = "L".repeat(5000);
    let long_call = env.call("write_file", &json!({"path": "long.txt", "content": long}));
    long_call.assert_code(3);
    let rec = env.outcome_of(long_call.json()["call_id"].as_str().unwrap_or_default());
    let expected_digest = digest(&json!(long));
    assert_eq!(
        expected_digest["length"],
        json!(5002),
        "the JSON text has quotes"
    );
    assert_eq!(
        rec["arguments"],
        json!({"path": "long.txt", "content": expected_digest})
    );

    // The pending request holds the long value whole: the approver must read what would run
    // (issue 12, item 2). Only the approvals table keeps it; the audit keeps the digest.
    let long_id = approval_id(&long_call.json());
    let shown = env.run(&["approvals", "show", &long_id]).json();
    assert_eq!(shown["arguments"]["content"], json!(long));
    let audit = std::fs::read(env.audit_path()).unwrap_or_default();
    assert!(
        !contains(&audit, long.as_bytes()),
        "the audit log holds the long value"
    );

    // Nothing under the data dir holds a secret; the masks are there.
    let files = files_under(&env.data);
    for (path, bytes) in &files {
        for secret in [OPENAI_KEY, BEARER, JWT, AWS_KEY] {
            assert!(
                !contains(bytes, secret.as_bytes()),
                "{path} holds `{}`",
                &secret[..20.min(secret.len())]
            );
        }
    }
    let redacted_in = |suffixes: &[&str]| {
        files
            .iter()
            .any(|(p, b)| suffixes.iter().any(|s| p.ends_with(s)) && contains(b, b"[REDACTED]"))
    };
    assert!(redacted_in(&["tool-audit.jsonl"]), "the JSONL has masks");
    assert!(
        redacted_in(&["toolgate.db", "toolgate.db-wal"]),
        "the SQLite files have masks"
    );
}

/// The idempotency store keeps a write call's outcome for replay: in SQLite, so masked too.
#[test]
fn idempotent_outcomes_are_stored_masked() {
    let env = Env::with_config("[roles.ops]\nrules = [{tool = \"shell\", decision = \"allow\"}]\n");
    env.write("creds.txt", format!("{OPENAI_KEY} {AWS_KEY}\n"));
    let args = json!({"command": "cat creds.txt; echo ran >> runs.txt", "idempotency_key": "k-1"});
    let first = env.call_with(&["--role", "ops"], "shell", &args, &[]);
    first.assert_code(0);
    assert_eq!(
        first.json()["data"]["stdout"],
        json!(format!("{OPENAI_KEY} {AWS_KEY}\n"))
    );
    // The retry replays the recorded outcome instead of running the command again.
    let retry = env.call_with(&["--role", "ops"], "shell", &args, &[]);
    retry.assert_code(0);
    assert_eq!(env.read("runs.txt"), "ran\n");
    assert_eq!(
        retry.json()["data"]["stdout"],
        json!("[REDACTED] [REDACTED]\n")
    );
    for (path, bytes) in files_under(&env.data) {
        for secret in [OPENAI_KEY, AWS_KEY] {
            assert!(
                !contains(&bytes, secret.as_bytes()),
                "{path} holds `{secret}`"
            );
        }
    }
}
