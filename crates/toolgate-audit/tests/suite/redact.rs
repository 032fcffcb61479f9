//! Redaction: every token pattern, sensitive keys at any depth, no false positives on ordinary
//! text and counters, and the 2,000-character digest rule with an independently computed
//! sha256.

mod corpus;
mod scan;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use toolgate_store::redact::{MAX_AUDIT_VALUE_CHARS, REDACTED, Redactor};

const JWT: &str =
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";

fn digest(text: &str) -> Value {
    json!({"length": text.chars().count(), "sha256": hex::encode(Sha256::digest(text.as_bytes()))})
}

#[test]
fn every_token_pattern_is_masked_inside_longer_text() {
    let r = Redactor::default();
    let cases = [
        (
            "curl -H 'Authorization: Bearer abcdef1234567890XYZ' https://api.test",
            "curl -H 'Authorization: Bearer [REDACTED]' https://api.test",
        ),
        (
            "header was basic dXNlcjpwYXNzd29yZA== today",
            "header was basic [REDACTED] today",
        ),
        (
            &format!("session {JWT} expired"),
            "session [REDACTED] expired",
        ),
        (
            "OPENAI=sk-proj-abcdefghijklmnopqrstuvwx1234",
            "OPENAI=[REDACTED]",
        ),
        (
            "use sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789 now",
            "use [REDACTED] now",
        ),
        (
            "access key AKIAIOSFODNN7EXAMPLE in use",
            "access key [REDACTED] in use",
        ),
        (
            "temporary ASIAIOSFODNN7EXAMPLE too",
            "temporary [REDACTED] too",
        ),
        (
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\nregion=eu",
            "aws_secret_access_key = [REDACTED]\nregion=eu",
        ),
        (
            "AWS_SECRET_KEY: \"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\"",
            "AWS_SECRET_KEY: \"[REDACTED]\"",
        ),
        (
            "clone with ghp_abcdefghijklmnopqrstuvwxyz0123456789 ok",
            "clone with [REDACTED] ok",
        ),
        ("gho_abcdefghijklmnopqrstuvwxyz0123456789", "[REDACTED]"),
        ("ghs_abcdefghijklmnopqrstuvwxyz0123456789", "[REDACTED]"),
        (
            "pat github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
            "pat [REDACTED]",
        ),
        (
            "slack xoxb-1234567890-abcdefghij here",
            "slack [REDACTED] here",
        ),
        (
            "maps AIzaSyA-1234567890abcdefghijklmnopqrstu!",
            "maps [REDACTED]!",
        ),
        (
            "key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nabc\n-----END RSA PRIVATE KEY-----\ndone",
            "key:\n[REDACTED]\ndone",
        ),
        (
            "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC (cut off)",
            "[REDACTED]",
        ),
    ];
    for (input, expected) in cases {
        assert_eq!(r.redact_text(input), expected, "input: {input}");
    }
}

#[test]
fn ordinary_text_is_left_alone() {
    let r = Redactor::default();
    for text in [
        "tokenizer settings for the basic model",
        "Basic settings are documented in the manual",
        "the bearer of this letter is welcome",
        "Bearer authentication is described in RFC 6750",
        "task-management-system-for-small-teams",
        "AKIA is a prefix; AKIAshort is not a key",
        "a sha256 of 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    ] {
        assert_eq!(r.redact_text(text), text);
    }
}

#[test]
fn sensitive_keys_are_masked_at_any_depth_and_in_arrays() {
    let r = Redactor::default();
    let input = json!({
        "url": "https://api.test/v1",
        "headers": {"Authorization": "Bearer abc", "X-Api-Key": "k1", "Accept": "json"},
        "auth": [{"password": "hunter2"}, {"client_secret": {"nested": true}}],
        "oauth": {"code": 4242, "state": "xyz", "refresh_token": "r1"},
        "github_token": "ghp_short",
        "max_token": 512,
        "max_tokens": 1024,
        "tokens_used": 17,
        "token": 5,
        "cookies": ["a=b"],
        "Set-Cookie": ["sid=1"],
        "note": format!("call with {JWT} please"),
        "list": ["plain", "Bearer abcdefghij0123456789"],
    });
    let expected = json!({
        "url": "https://api.test/v1",
        "headers": {"Authorization": REDACTED, "X-Api-Key": REDACTED, "Accept": "json"},
        "auth": [{"password": REDACTED}, {"client_secret": REDACTED}],
        "oauth": {"code": REDACTED, "state": "xyz", "refresh_token": REDACTED},
        "github_token": REDACTED,
        "max_token": 512,
        "max_tokens": 1024,
        "tokens_used": 17,
        "token": REDACTED,
        "cookies": REDACTED,
        "Set-Cookie": REDACTED,
        "note": "call with [REDACTED] please",
        "list": ["plain", "Bearer [REDACTED]"],
    });
    assert_eq!(r.redact_value(&input), expected);
}

#[test]
fn arguments_longer_than_the_limit_become_length_and_sha256_of_the_original() {
    let r = Redactor::default();
    // 1,998 characters + 2 quotes: exactly at the limit, kept.
    let at_limit = "a".repeat(MAX_AUDIT_VALUE_CHARS - 2);
    let over = format!(
        "{} password=x Bearer abcdefghij0123456789",
        "b".repeat(2000)
    );
    let nested = json!({"rows": (0..300).map(|i| json!({"n": i})).collect::<Vec<_>>()});
    let args = json!({
        "at_limit": at_limit,
        "over": over,
        "nested": nested,
        "api_key": "z".repeat(3000),
        "small": "Bearer abcdefghij0123456789",
    });
    let expected = json!({
        "at_limit": at_limit,
        "over": digest(&Value::String(over.clone()).to_string()),
        "nested": digest(&nested.to_string()),
        "api_key": REDACTED,
        "small": "Bearer [REDACTED]",
    });
    assert_eq!(r.for_audit_arguments(&args), expected);
    // The digest is of the JSON text: a string's length includes its quotes.
    assert_eq!(expected["over"]["length"], json!(over.chars().count() + 2));
}

#[test]
fn long_results_and_long_strings_anywhere_are_digested() {
    let r = Redactor::default();
    let small = json!({"ok": true, "token": "t"});
    assert_eq!(
        r.for_audit_result(&small),
        json!({"ok": true, "token": REDACTED})
    );

    let big = json!({"text": "é".repeat(1500), "more": "x".repeat(600)});
    assert_eq!(r.for_audit_result(&big), digest(&big.to_string()));

    // Arguments that are not an object follow the result rule; a long string inside an
    // otherwise short array is digested on its own only when the whole value is short, which
    // cannot happen, so the whole value goes.
    let array = json!(["short", "y".repeat(2500)]);
    assert_eq!(r.for_audit_arguments(&array), digest(&array.to_string()));
}

#[test]
fn non_ascii_text_and_short_values_are_kept() {
    let r = Redactor::default();
    let v =
        json!({"greeting": "héllo wörld — ünïcode text that is long enough", "n": 1.5, "b": null});
    assert_eq!(r.redact_value(&v), v);
}

#[test]
fn in_place_redaction_gives_what_the_by_reference_methods_give() {
    let r = Redactor::default();
    let long = "x".repeat(MAX_AUDIT_VALUE_CHARS + 10);
    let args = json!({
        "api_key": "sk-proj-abcdefghijklmnopqrstuvwx1234",
        "body": long,
        "headers": {"Authorization": "Bearer abcdef1234567890XYZ", "accept": "text/plain"},
        "notes": ["plain", format!("token {JWT} here"), {"password": 42}],
        "max_tokens": 512
    });
    let expected_args = json!({
        "api_key": REDACTED,
        "body": digest(&Value::String(long.clone()).to_string()),
        "headers": {"Authorization": REDACTED, "accept": "text/plain"},
        "notes": ["plain", "token [REDACTED] here", {"password": REDACTED}],
        "max_tokens": 512
    });
    let mut in_place = args.clone();
    r.for_audit_arguments_in_place(&mut in_place);
    assert_eq!(in_place, expected_args);
    assert_eq!(r.for_audit_arguments(&args), expected_args);

    let short = json!({"data": {"out": format!("Bearer {JWT}"), "n": 1}});
    let long_result = json!({"data": {"tail": long}});
    for (result, expected) in [
        (
            &short,
            json!({"data": {"out": "Bearer [REDACTED]", "n": 1}}),
        ),
        (&long_result, digest(&long_result.to_string())),
    ] {
        let mut in_place = result.clone();
        r.for_audit_result_in_place(&mut in_place);
        assert_eq!(in_place, expected);
        assert_eq!(r.for_audit_result(result), expected);
    }
}
