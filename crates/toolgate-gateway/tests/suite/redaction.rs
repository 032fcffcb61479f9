//! Secrets in arguments AND results never reach the audit file or the approval store.

use serde_json::json;

use super::fixture::{Harness, audit_path, code};

const SECRETS: [&str; 5] = [
    "sk-proj-Abcdefghijklmnopqrstuvwxyz012345",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "AKIAIOSFODNN7EXAMPLE",
    "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
    "s3cr3t-cookie-value",
];

fn raw_store_bytes(h: &Harness) -> Vec<u8> {
    let mut bytes = std::fs::read(audit_path(h.dir.path())).unwrap();
    for entry in std::fs::read_dir(h.dir.path()).unwrap() {
        let p = entry.unwrap().path();
        if p.is_file() {
            bytes.extend(std::fs::read(p).unwrap());
        }
    }
    bytes
}

#[tokio::test]
async fn secrets_are_masked_in_arguments_results_and_approvals() {
    let h = Harness::new();
    let args = json!({
        "token": SECRETS[0],
        "note": format!("Authorization: Bearer {} and aws {} ok", SECRETS[1], SECRETS[2]),
        "say": {"cookie": SECRETS[4], "list": [format!("github {}", SECRETS[3])]}
    });
    let e = h.call("echo", args.clone()).await;
    assert!(e.ok, "{e:?}");
    // The caller still gets the real result; only what is written is masked.
    assert_eq!(e.data.unwrap()["cookie"], SECRETS[4]);
    // A write call: its approval request stores a preview of the arguments.
    let pending = h
        .call("writer", json!({"token": SECRETS[0], "note": SECRETS[2]}))
        .await;
    assert_eq!(code(&pending), "approval_required");
    h.gateway.audit().flush().await.unwrap();

    let bytes = raw_store_bytes(&h);
    let text = String::from_utf8_lossy(&bytes);
    for s in SECRETS {
        assert!(!text.contains(s), "secret {s} reached the disk");
    }
    let rec = h
        .audit_lines()
        .into_iter()
        .find(|r| r["tool"] == "echo")
        .unwrap();
    assert_eq!(rec["arguments"]["token"], "[REDACTED]");
    assert_eq!(rec["result"]["data"]["cookie"], "[REDACTED]");
    assert!(
        rec["arguments"]["note"]
            .as_str()
            .unwrap()
            .starts_with("Authorization: Bearer [REDACTED]")
    );
}

#[tokio::test]
async fn long_values_are_stored_as_length_and_hash() {
    use sha2::{Digest, Sha256};
    let h = Harness::new();
    let long = "y".repeat(5000);
    let e = h.call("echo", json!({"note": long})).await;
    assert!(e.ok);
    let rec = h.audit_lines().pop().unwrap();
    let expected = hex::encode(Sha256::digest(
        serde_json::to_string(&long).unwrap().as_bytes(),
    ));
    assert_eq!(rec["arguments"]["note"]["length"], 5002);
    assert_eq!(rec["arguments"]["note"]["sha256"], expected);
}

#[tokio::test]
async fn offloaded_results_are_stored_redacted() {
    let h = Harness::new();
    let say = json!({"password": "hunter2-hunter2", "note": format!("key {} end", SECRETS[0]), "pad": "z".repeat(500)});
    let e = h.call("echo", json!({"say": say})).await;
    let id = e.truncated.unwrap().result_id.unwrap();
    let stored =
        std::fs::read_to_string(h.dir.path().join("results").join(format!("{id}.txt"))).unwrap();
    assert!(
        !stored.contains("hunter2-hunter2") && !stored.contains(SECRETS[0]),
        "{stored}"
    );
    assert!(stored.contains("[REDACTED]"));
    let head = e.data.unwrap();
    assert!(!head.as_str().unwrap().contains("hunter2-hunter2"));
}

/// Credentials that are not token-shaped (issue 12, item 5), in every place a call leaves
/// text: the audit file, the SQLite database (index, approval previews), offloaded results.
const CREDENTIALS: [(&str, &str); 6] = [
    ("https://user:{}@git.example.com/r.git", "urlpass1234"),
    ("postgres://app:{}@db.internal:5432/app", "pgurlpw77"),
    ("connect with password={} please", "labelpw-99"),
    ("passwd: {} (from /etc)", "passwdcolon42"),
    ("PGPASSWORD={} psql -h db -U app", "pgenvsecret5"),
    ("mysql -h db -u root -p{} appdb", "mysqlflagpw3"),
];

fn credential_text() -> String {
    CREDENTIALS
        .iter()
        .map(|(form, secret)| form.replace("{}", secret))
        .collect::<Vec<_>>()
        .join("\n")
}

fn all_bytes_under(dir: &std::path::Path, out: &mut Vec<u8>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            all_bytes_under(&p, out);
        } else {
            out.extend(std::fs::read(p).unwrap());
        }
    }
}

#[tokio::test]
async fn credentials_and_long_error_values_reach_no_store() {
    let h = Harness::new();
    let text = credential_text();
    // Arguments and a (small) result.
    assert!(h.call("echo", json!({"note": text})).await.ok);
    // An offloaded result (over the 100-byte budget of the fixture).
    let big = h
        .call(
            "echo",
            json!({"say": format!("{text}\n{}", "z".repeat(300))}),
        )
        .await;
    assert!(big.truncated.unwrap().result_id.is_some());
    // An approval preview.
    let pending = h.call("writer", json!({"note": text})).await;
    assert_eq!(code(&pending), "approval_required");
    // An error message that echoes a long value and credentials.
    let long_path = format!("dir/{}", "L".repeat(3000));
    let failed = h
        .call(
            "echo",
            json!({"fail": format!("cannot open `{long_path}`: {text}")}),
        )
        .await;
    assert_eq!(code(&failed), "execution_failed");
    h.gateway.audit().flush().await.unwrap();

    let mut bytes = Vec::new();
    all_bytes_under(h.dir.path(), &mut bytes);
    let raw = String::from_utf8_lossy(&bytes);
    for (_, secret) in CREDENTIALS {
        assert!(!raw.contains(secret), "{secret} reached the disk");
    }
    let rec = h.audit_lines().pop().unwrap();
    let error = rec["error"].as_str().unwrap();
    assert!(!error.contains(&"L".repeat(201)), "{error}");
    assert!(error.contains("3004 chars sha256:"), "{error}");
    assert!(error.contains("PGPASSWORD=[REDACTED]"), "{error}");
}
