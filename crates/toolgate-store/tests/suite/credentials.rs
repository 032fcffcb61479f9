//! MCP OAuth credentials on both backends: keyed by server and resource, replaced in place,
//! deleted per resource or per server, never shown in `Debug`; the embedded files private to
//! the owner; in PostgreSQL, encrypted at rest and bound to their row.

use std::sync::Arc;

use tokio_postgres::NoTls;
use tokio_util::sync::CancellationToken;
use toolgate_store::PgBackend;
use toolgate_store::credentials::{
    CredentialKey, CredentialRecord, CredentialSecret, PgCredentials,
};
use toolgate_store::pg::PgUrl;
use toolgate_store::{CredentialStore, StoreError};
use toolgate_testkit::pg::Scratch;

use crate::suite::backends::Backend;

const KEY: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

async fn rows_are_keyed_by_server_and_resource_and_replace_in_place(b: Backend) {
    let store = b
        .credentials()
        .await
        .with_clock(Arc::new(|| 1_700_000_000_000));
    let secret = CredentialSecret::new(r#"{"access_token":"at-1"}"#);
    store
        .save(
            "docs",
            "https://a.example/mcp",
            Some("https://as.example"),
            "c1",
            &secret,
        )
        .await
        .unwrap();
    store
        .save(
            "docs",
            "https://b.example/mcp",
            None,
            "c2",
            &CredentialSecret::new("{}"),
        )
        .await
        .unwrap();
    let newer = CredentialSecret::new(r#"{"access_token":"at-2"}"#);
    store
        .save(
            "docs",
            "https://a.example/mcp",
            Some("https://as.example"),
            "c1",
            &newer,
        )
        .await
        .unwrap();
    assert_eq!(
        store.load("docs", "https://a.example/mcp").await.unwrap(),
        Some(CredentialRecord {
            server: "docs".into(),
            resource: "https://a.example/mcp".into(),
            issuer: Some("https://as.example".into()),
            client_id: "c1".into(),
            secret: newer,
            updated_at_ms: 1_700_000_000_000,
        })
    );
    assert_eq!(
        store.load("other", "https://a.example/mcp").await.unwrap(),
        None
    );
    assert_eq!(store.list().await.unwrap().len(), 2);
    assert_eq!(
        store
            .delete("docs", Some("https://b.example/mcp"))
            .await
            .unwrap(),
        1
    );
    assert_eq!(store.delete("docs", None).await.unwrap(), 1);
    assert_eq!(store.list().await.unwrap(), Vec::new());
}

async fn secrets_never_show_in_debug(b: Backend) {
    let store = b.credentials().await;
    let secret = CredentialSecret::new("at-very-secret");
    store.save("s", "r", None, "c", &secret).await.unwrap();
    let shown = format!("{:?} {:?}", store.list().await.unwrap(), secret);
    assert!(!shown.contains("at-very-secret"), "{shown}");
    assert!(shown.contains("[redacted]"), "{shown}");
}

on_both_backends!(
    rows_are_keyed_by_server_and_resource_and_replace_in_place,
    secrets_never_show_in_debug,
);

#[cfg(unix)]
#[tokio::test]
async fn the_database_files_are_private_to_the_owner() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("toolgate.db");
    std::fs::write(&db, b"").unwrap();
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();
    let store = CredentialStore::open(&db).unwrap();
    store
        .save("s", "r", None, "c", &CredentialSecret::new("{}"))
        .await
        .unwrap();
    drop(store);
    let store = CredentialStore::open(&db).unwrap();
    for name in ["toolgate.db", "toolgate.db-wal", "toolgate.db-shm"] {
        let path = dir.path().join(name);
        if path.exists() {
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "{name}");
        }
    }
    drop(store);
}

async fn pg() -> (Scratch, PgBackend) {
    let scratch = Scratch::new().await;
    let url: PgUrl = scratch.url().parse().unwrap();
    let backend = PgBackend::open(&url, CancellationToken::new())
        .await
        .unwrap();
    (scratch, backend)
}

/// What an attacker with the database sees, and what altering it achieves: no token in any
/// column, a ciphertext copied to another row does not decrypt, another key reads nothing,
/// and without the key nothing is stored or read (the error names the variable).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_postgresql_the_secret_is_encrypted_and_bound_to_its_row() {
    let (scratch, backend) = pg().await;
    let key = CredentialKey::parse(KEY).unwrap();
    let store = toolgate_store::Store::postgres(backend.clone()).credentials(Some(key.clone()));
    let token = "ghp_SuperSecretAccessToken0123456789";
    store
        .save(
            "gh",
            "https://gh.example/mcp",
            None,
            "c",
            &CredentialSecret::new(format!(r#"{{"access_token":"{token}"}}"#)),
        )
        .await
        .unwrap();
    store
        .save(
            "other",
            "https://o.example/mcp",
            None,
            "c",
            &CredentialSecret::new("{}"),
        )
        .await
        .unwrap();
    let (client, conn) = tokio_postgres::connect(scratch.url(), NoTls).await.unwrap();
    tokio::spawn(conn);
    let dump: String = client
        .query_one(
            "SELECT string_agg(mcp_credentials::text, ' ') FROM mcp_credentials",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert!(
        !dump.contains(token) && !dump.contains("access_token"),
        "{dump}"
    );

    // The token's ciphertext moved into another server's row.
    client
        .batch_execute(
            "UPDATE mcp_credentials SET secret = (SELECT secret FROM mcp_credentials WHERE server = 'gh') \
             WHERE server = 'other'",
        )
        .await
        .unwrap();
    assert!(matches!(
        store.load("other", "https://o.example/mcp").await,
        Err(StoreError::Corrupt(_))
    ));
    let other_key = CredentialKey::parse(&"ab".repeat(32)).unwrap();
    assert!(matches!(
        toolgate_store::Store::postgres(backend.clone())
            .credentials(Some(other_key))
            .load("gh", "https://gh.example/mcp")
            .await,
        Err(StoreError::Corrupt(_))
    ));
    let keyless =
        CredentialStore::with_backend(Arc::new(PgCredentials::new(backend.pool.clone(), None)));
    let refused = keyless
        .save("x", "y", None, "c", &CredentialSecret::new("{}"))
        .await
        .unwrap_err()
        .to_string();
    assert!(refused.contains("TOOLGATE_CREDENTIALS_KEY"), "{refused}");
    // The right key still reads the untouched row.
    let back = store
        .load("gh", "https://gh.example/mcp")
        .await
        .unwrap()
        .unwrap();
    assert!(back.secret.expose().contains(token));
}

#[test]
fn a_malformed_key_is_refused_with_how_to_make_one() {
    for bad in ["", "00", &"zz".repeat(32), &"00".repeat(31)] {
        let e = CredentialKey::parse(bad).unwrap_err().to_string();
        assert!(e.contains("64 hex digits"), "{bad:?}: {e}");
    }
    assert!(!format!("{:?}", CredentialKey::parse(KEY).unwrap()).contains("0001"));
}
