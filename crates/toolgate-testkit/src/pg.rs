//! A scratch PostgreSQL schema per test: the stores' contract tests and the cluster tests run
//! against a real server, each in a schema of its own (`search_path` set in the URL's
//! `options`), so tests run in parallel on one database without seeing each other's rows.
//!
//! The server: `TOOLGATE_TEST_PG_URL`, else `postgres://postgres@127.0.0.1:5432/test` (the
//! machines' service; `scripts/test.sh` starts a throwaway cluster and sets the variable when
//! none answers). A test that needs PostgreSQL fails, naming the URL, when it cannot connect:
//! it never passes by skipping.

use tokio_postgres::NoTls;

/// The server the tests use.
pub fn server_url() -> String {
    std::env::var("TOOLGATE_TEST_PG_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned())
}

/// A schema created for one test and dropped with it.
#[derive(Debug)]
pub struct Scratch {
    schema: String,
    url: String,
}

impl Scratch {
    /// Creates a fresh schema on [`server_url`].
    pub async fn new() -> Scratch {
        let server = server_url();
        let schema = format!("t_{}", uuid::Uuid::new_v4().simple());
        let (client, connection) = tokio_postgres::connect(&server, NoTls)
            .await
            .unwrap_or_else(|e| {
                panic!(
                    "PostgreSQL at {server} is needed by this test and does not answer ({e}); \
                     run scripts/test.sh (it starts one) or set TOOLGATE_TEST_PG_URL"
                )
            });
        tokio::spawn(connection);
        client
            .batch_execute(&format!("CREATE SCHEMA {schema}"))
            .await
            .unwrap_or_else(|e| panic!("cannot create schema {schema} on {server}: {e}"));
        let sep = if server.contains('?') { '&' } else { '?' };
        let url = format!("{server}{sep}options=-c%20search_path%3D{schema}");
        Scratch { schema, url }
    }

    /// The URL whose connections work in this schema only.
    pub fn url(&self) -> &str {
        &self.url
    }

    pub fn schema(&self) -> &str {
        &self.schema
    }

    /// The server's `host:port`, as the URL names it.
    pub fn server_addr(&self) -> String {
        authority(&self.url).1.to_owned()
    }

    /// [`Scratch::url`] with `addr` (`host:port`) in place of the server's: the same
    /// database reached through, say, a proxy the test can cut.
    pub fn url_via(&self, addr: &str) -> String {
        let (at, current) = authority(&self.url);
        format!(
            "{}{addr}{}",
            &self.url[..at],
            &self.url[at + current.len()..]
        )
    }
}

/// Where the `host:port` of a `postgres://user@host:port/db…` URL starts, and it.
fn authority(url: &str) -> (usize, &str) {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    let start = url[after_scheme..]
        .find('@')
        .map_or(after_scheme, |i| after_scheme + i + 1);
    let end = url[start..]
        .find(['/', '?'])
        .map_or(url.len(), |i| start + i);
    (start, &url[start..end])
}

impl Drop for Scratch {
    fn drop(&mut self) {
        // Best effort, on a thread of its own: the test's runtime may be gone.
        let (server, schema) = (server_url(), self.schema.clone());
        let _ = std::thread::spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            rt.block_on(async {
                if let Ok((client, connection)) = tokio_postgres::connect(&server, NoTls).await {
                    tokio::spawn(connection);
                    let _ = client
                        .batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
                        .await;
                }
            });
        })
        .join();
    }
}
