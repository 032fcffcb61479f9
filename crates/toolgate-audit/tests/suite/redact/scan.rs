//! The redactor's scan: percent-encoded credentials masked where they are written, keys of
//! structured values, header schemes, a match before a secret, and linear time on nested
//! labels.

use serde_json::{Value, json};
use toolgate_store::redact::Redactor;

use super::corpus::fakes::Fakes;
use super::corpus::shapes::ATTACK_SHAPES;

#[test]
fn percent_encoded_credentials_are_masked_where_they_are_written() {
    let r = Redactor::default();
    assert_eq!(
        r.redact_text("next=https%3A%2F%2Fadmin%3Ahunter2pw%40db.internal%2F"),
        "next=https%3A%2F%2Fadmin%3A[REDACTED]%40db.internal%2F"
    );
    assert_eq!(
        r.redact_text("q=password%3Ds3cr3t-value&x=1"),
        "q=password%3D[REDACTED]&x=1"
    );
    let v: Value = r.redact_value(&json!({"u": "postgres://app:p%40ss%21word@db/app"}));
    assert_eq!(v, json!({"u": "postgres://app:[REDACTED]@db/app"}));
}

#[test]
fn secrets_under_keys_of_structured_values_are_masked() {
    let r = Redactor::default();
    let docker = json!({"auths": {"registry.example.com": {"auth": "ZGVwbG95OnMzY3JldA==", "email": "ci@example.com"}}});
    assert_eq!(
        r.redact_value(&docker),
        json!({"auths": {"registry.example.com": {"auth": "[REDACTED]", "email": "ci@example.com"}}})
    );
    let azure = json!({"AccountKey": "bm90IGEgcmVhbCBrZXk=", "sig": "abc%2Bdef", "ssh_passphrase": "correct horse"});
    assert_eq!(
        r.redact_value(&azure),
        json!({"AccountKey": "[REDACTED]", "sig": "[REDACTED]", "ssh_passphrase": "[REDACTED]"})
    );
}

#[test]
fn headers_keep_the_text_after_a_one_token_scheme() {
    let r = Redactor::default();
    for (input, expected) in [
        (
            "Authorization: Bearer abcdef1234567890XYZ and aws AKIAIOSFODNN7EXAMPLE ok",
            "Authorization: Bearer [REDACTED] and aws [REDACTED] ok",
        ),
        (
            "Authorization: Digest username=\"bob\", response=\"6629fae49393a05397450978507c4ef1\"",
            "Authorization: Digest [REDACTED]",
        ),
        (
            "Cookie: sessionid=abc123def456; theme=dark",
            "Cookie: [REDACTED]",
        ),
        (
            "the authorization: required field",
            "the authorization: required field",
        ),
        (
            r#"{"Cookie": "sid=abc123; theme=dark", "Accept": "json"}"#,
            r#"{"Cookie": "[REDACTED]", "Accept": "json"}"#,
        ),
    ] {
        assert_eq!(r.redact_text(input), expected, "input: {input}");
    }
}

/// What the `redact` fuzz target reported as open gaps (docs/security.md, Fuzzing), and what
/// a sweep of its generator found with the gaps' skip off: a match that starts before a
/// secret took the secret's context as its own value.
#[test]
fn a_match_before_a_secret_no_longer_swallows_it() {
    let r = Redactor::default();
    for (input, secret) in [
        (
            "Bearer aws-secret-key: wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "wJalrXUtnFEMI",
        ),
        (
            "Authorization: Basic dXNlcjpwYXNzd29yZA.x",
            "dXNlcjpwYXNzd29yZA",
        ),
        ("token: mysql -u root -pS3cretPw99 app", "S3cretPw99"),
        (
            "<apiToken> Cookie: sessionid=a1b2c3d4e5f6a7b8",
            "a1b2c3d4e5f6a7b8",
        ),
        (
            "api_key=abc.-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg\n-----END PRIVATE KEY-----",
            "MIIEvQIBADANBg",
        ),
        (
            "9.Authorization: ApiKey ZKRYfmt07ELSZgnu18FM",
            "ZKRYfmt07ELSZgnu18FM",
        ),
        (
            "token:`sk-AlKvU5eDoNyX8hGrQ1a-kJuT4dCnMxW7\t key=value",
            "AlKvU5eDoNyX8hGrQ1a",
        ),
        (
            "machine m login l password = 'FqR2dEpItU5gHsLwX8jK'",
            "FqR2dEpItU5gHsLwX8jK",
        ),
    ] {
        let out = r.redact_text(input);
        assert!(!out.contains(secret), "{input:?} → {out:?}");
    }
}

/// Searching again inside matches stays linear: 50,000 nested labels (each one's value is
/// the rest of the text) and 50,000 unconfirmed generic labels end, and still mask.
#[test]
fn nested_labels_do_not_make_the_scan_quadratic() {
    let r = Redactor::default();
    let nested = format!("{}end", "token=".repeat(50_000));
    assert!(r.redact_text(&nested).contains("[REDACTED]"));
    let unconfirmed = format!("{}ghp_{}", "key=".repeat(50_000), "a1".repeat(18));
    assert!(!r.redact_text(&unconfirmed).contains("a1a1a1a1"));
}

/// The attack's 49 shapes as a call's arguments and error text reach neither the audit log
/// nor its SQLite index (where the attack found 20 of them).
#[tokio::test]
async fn the_attack_shapes_never_reach_the_audit_file_or_index() {
    use toolgate_audit::Durability;

    use super::super::audit_fixtures::{LogDir, record};

    let dir = LogDir::new();
    let log = dir.open(Durability::Durable);
    let mut arguments = serde_json::Map::new();
    let mut texts = Vec::new();
    let mut parts = Vec::new();
    for (n, &(name, template, format)) in ATTACK_SHAPES.iter().enumerate() {
        let (secret, random) = Fakes::new(name).expand(format);
        let text = template.replace("{s}", &secret);
        arguments.insert(format!("arg{n}"), Value::String(text.clone()));
        texts.push(text);
        parts.extend(random.into_iter().filter(|p| p.len() >= 8));
    }
    let mut rec = record(1);
    rec.arguments = Value::Object(arguments);
    rec.error = Some(texts.join(" | "));
    rec.outcome = "execution_failed".parse().unwrap();
    log.append(rec).await.unwrap();
    drop(log);

    let mut raw = std::fs::read(&dir.jsonl).unwrap();
    raw.extend(std::fs::read(&dir.db).unwrap());
    let raw = String::from_utf8_lossy(&raw);
    let kept: Vec<&String> = parts.iter().filter(|p| raw.contains(p.as_str())).collect();
    assert_eq!(kept, Vec::<&String>::new(), "reached the disk");
    assert!(raw.contains("[REDACTED]"));
}
