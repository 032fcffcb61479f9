//! Credentials that are not token-shaped (issue 12, item 5): passwords in URLs, labelled
//! `password=…` text, credentials on command lines; and error messages that echo long
//! argument values. Each vector is checked through the redactor and through the audit log's
//! file and SQLite index.

use serde_json::json;
use toolgate_audit::{AuditQuery, Durability};
use toolgate_store::redact::{MAX_AUDIT_ERROR_CHARS, Redactor};

use super::audit_fixtures::{LogDir, record};

/// (input, expected output) — each secret is the part a reader must not see.
const VECTORS: &[(&str, &str)] = &[
    (
        "clone https://user:pass1234@git.example.com/r.git now",
        "clone https://user:[REDACTED]@git.example.com/r.git now",
    ),
    (
        "DATABASE_URL=postgres://app:pw-s3cret@db.internal:5432/app",
        "DATABASE_URL=postgres://app:[REDACTED]@db.internal:5432/app",
    ),
    (
        "mysql://root:r00t@pw@localhost/db",
        "mysql://root:[REDACTED]@localhost/db",
    ),
    (
        "redis://:redispass99@cache:6379/0",
        "redis://:[REDACTED]@cache:6379/0",
    ),
    (
        "connect with password=hunter2-x please",
        "connect with password=[REDACTED] please",
    ),
    (
        "passwd: sekrit99 (from /etc)",
        "passwd: [REDACTED] (from /etc)",
    ),
    (
        "PGPASSWORD=pgsecret42 psql -h db -U app",
        "PGPASSWORD=[REDACTED] psql -h db -U app",
    ),
    (
        "mysql -h db -u root -pMyPass123 appdb",
        "mysql -h db -u root -p[REDACTED] appdb",
    ),
    (
        "mysqldump --password=dumppw55 appdb > x.sql",
        "mysqldump --password=[REDACTED] appdb > x.sql",
    ),
    (
        r#"curl -d '{"password":"jsonpw123"}' https://x.test"#,
        r#"curl -d '{"password":"[REDACTED]"}' https://x.test"#,
    ),
    (
        r#"export DB_PASSWORD="quoted secret value""#,
        r#"export DB_PASSWORD="[REDACTED]""#,
    ),
    (
        "settings: api_key=abcd1234efgh; region=eu",
        "settings: api_key=[REDACTED]; region=eu",
    ),
    (
        "curl -u admin:curlpw99 https://x.test",
        "curl -u admin:[REDACTED] https://x.test",
    ),
    (
        "sshpass -p sshpw77 ssh backup@host",
        "sshpass -p [REDACTED] ssh backup@host",
    ),
    (
        "GITHUB_TOKEN=plainlooking1 make release",
        "GITHUB_TOKEN=[REDACTED] make release",
    ),
];

/// The secret part of each vector, for searching raw bytes.
const SECRETS: &[&str] = &[
    "pass1234",
    "pw-s3cret",
    "r00t@pw",
    "redispass99",
    "hunter2-x",
    "sekrit99",
    "pgsecret42",
    "MyPass123",
    "dumppw55",
    "jsonpw123",
    "quoted secret value",
    "abcd1234efgh",
    "curlpw99",
    "sshpw77",
    "plainlooking1",
];

#[test]
fn credentials_in_urls_labels_and_commands_are_masked() {
    let r = Redactor::default();
    for (input, expected) in VECTORS {
        assert_eq!(&r.redact_text(input), expected, "input: {input}");
    }
}

#[test]
fn look_alikes_of_credentials_are_left_alone() {
    let r = Redactor::default();
    for text in [
        "http://localhost:8080/path?q=1 and git@github.com:org/repo.git",
        "write to user@example.com about the password reset link",
        "max_tokens=512 and max_token: 1024 and token: null",
        "mysql -P 3306 -h db.internal appdb",
        "use --password-file /run/secret to read it",
    ] {
        assert_eq!(r.redact_text(text), text);
    }
}

#[test]
fn error_text_is_masked_and_long_values_in_it_are_cut() {
    let r = Redactor::default();
    let path = format!("dir/{}", "p".repeat(3000));
    let message = format!("cannot open `{path}`: No such file (password=hunter2-x)");
    let stored = r.for_audit_text(&message);
    assert!(!stored.contains(&"p".repeat(300)), "{stored}");
    assert!(!stored.contains("hunter2-x"), "{stored}");
    assert!(stored.starts_with("cannot open `"), "{stored}");
    assert!(stored.contains("sha256"), "{stored}");
    assert!(
        stored.ends_with(": No such file (password=[REDACTED])"),
        "{stored}"
    );
    assert!(stored.chars().count() <= MAX_AUDIT_ERROR_CHARS);
    // Many short words add up: the whole message is cut too.
    let wordy = "word ".repeat(2000);
    let stored = r.for_audit_text(&wordy);
    assert!(
        stored.chars().count() <= MAX_AUDIT_ERROR_CHARS,
        "{}",
        stored.len()
    );
    assert!(stored.contains("sha256"));
    // Short messages are kept as they are.
    assert_eq!(r.for_audit_text("no such tool: foo"), "no such tool: foo");
}

#[tokio::test]
async fn no_vector_reaches_the_audit_file_or_index() {
    let dir = LogDir::new();
    let log = dir.open(Durability::Durable);
    let commands: Vec<&str> = VECTORS.iter().map(|(input, _)| *input).collect();
    let mut rec = record(1);
    rec.arguments = json!({"command": commands[7], "url": commands[1], "list": commands});
    rec.result = Some(json!({"stdout": commands.join("\n")}));
    rec.error = Some(format!(
        "cannot open `{}`: {}",
        "q".repeat(3000),
        commands.join(" | ")
    ));
    rec.outcome = "execution_failed".parse().unwrap();
    log.append(rec).await.unwrap();
    let found = log.query(&AuditQuery::default()).unwrap();
    drop(log);

    let mut raw = std::fs::read(&dir.jsonl).unwrap();
    raw.extend(std::fs::read(&dir.db).unwrap());
    let raw = String::from_utf8_lossy(&raw);
    for secret in SECRETS {
        assert!(!raw.contains(secret), "{secret} reached the disk");
    }
    assert!(
        !raw.contains(&"q".repeat(300)),
        "the long value reached the error field"
    );
    let error = found[0].record.error.as_deref().unwrap();
    assert!(error.starts_with("cannot open `"), "{error}");
    assert!(error.contains("PGPASSWORD=[REDACTED]"), "{error}");
}

/// What the `redact` fuzz target found (docs/security.md, Fuzzing): a match before a secret
/// that swallowed it, a Basic credential followed by punctuation, all-digit passwords read as
/// counters, an unclosed quote. Each secret must be gone; the context stays.
#[test]
fn secrets_the_fuzzer_found_behind_other_matches_are_masked() {
    let r = Redactor::default();
    for (input, secret) in [
        (
            "basic sk-proj-AbCdEfGhIjKlMnOpQrStUvWx",
            "AbCdEfGhIjKlMnOpQrStUvWx",
        ),
        (
            "Basic ghp_AbCdEfGhIjKlMnOpQrStUvWxYz012345",
            "AbCdEfGhIjKlMnOpQrStUvWxYz012345",
        ),
        (
            "token=$(mysql -u root -pS3cretPw -e 'select 1')",
            "S3cretPw",
        ),
        ("Authorization: Basic dXNlcjpwYXNz.", "dXNlcjpwYXNz"),
        ("Authorization: Basic dXNlcjpwYXNz- sent", "dXNlcjpwYXNz"),
        ("password=12345678", "12345678"),
        ("postgres://app:12345678@db/app", "12345678"),
        ("https://token:87654321@git.example/repo", "87654321"),
        ("mysql -u app -p12345678 appdb", "12345678"),
        ("password = 'abcdefgh-unclosed", "abcdefgh-unclosed"),
        ("export API_KEY=\"abcdef123456", "abcdef123456"),
    ] {
        let out = r.redact_text(input);
        assert!(!out.contains(secret), "{input:?} → {out:?}");
        assert!(out.contains("[REDACTED]"), "{input:?} → {out:?}");
    }
    // Counters after a token label, and variable references, are no secrets.
    for kept in [
        "max_tokens=512 and num_tokens: 1024",
        "token=$GITHUB_TOKEN and password=`cat /run/pw`",
    ] {
        assert_eq!(r.redact_text(kept), kept);
    }
}
