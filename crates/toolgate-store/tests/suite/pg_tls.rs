//! TLS to PostgreSQL as `sslmode` promises, against the real server: `verify-full` never
//! connects to a server whose certificate the system's roots do not vouch for (the test
//! server's is self-signed, or it offers no TLS at all); `require` encrypts without verifying,
//! as libpq does, so it connects exactly when the server offers TLS.

use tokio_postgres::NoTls;
use toolgate_store::StoreError;
use toolgate_store::pg::{PgPool, PgUrl};

fn with_mode(mode: &str) -> PgUrl {
    let server = toolgate_testkit::pg::server_url();
    let sep = if server.contains('?') { '&' } else { '?' };
    format!("{server}{sep}sslmode={mode}").parse().unwrap()
}

async fn connects(url: &PgUrl) -> Result<(), StoreError> {
    let pool = PgPool::new(url)?;
    pool.get().await.map(drop)
}

#[tokio::test]
async fn verify_full_refuses_an_untrusted_server_and_require_follows_the_server() {
    let server = toolgate_testkit::pg::server_url();
    let (client, conn) = tokio_postgres::connect(&server, NoTls).await.unwrap();
    tokio::spawn(conn);
    let offers_tls: String = client.query_one("SHOW ssl", &[]).await.unwrap().get(0);
    let refused = connects(&with_mode("verify-full")).await;
    assert!(
        matches!(refused, Err(StoreError::Unavailable(_))),
        "verify-full connected to an unverified server: {refused:?}"
    );
    let required = connects(&with_mode("require")).await;
    assert_eq!(
        required.is_ok(),
        offers_tls == "on",
        "ssl={offers_tls}: {required:?}"
    );
}
