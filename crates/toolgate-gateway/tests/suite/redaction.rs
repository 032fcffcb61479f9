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
