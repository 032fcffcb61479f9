//! The PostgreSQL backend's connection: a pool of `tokio-postgres` clients (deadpool), TLS
//! through rustls when the URL asks for it, the versioned schema ([`migrate`]) and the
//! change feed over `LISTEN`/`NOTIFY` ([`notify`]).
//!
//! Why these crates (docs/internals.md, Storage): `tokio-postgres` is async end to end, so no
//! PostgreSQL call ever blocks a tokio worker; it links no SQLite (sqlx's SQLite driver and
//! rusqlite cannot share `libsqlite3-sys`) and speaks `LISTEN`/`NOTIFY`, which the change feed
//! needs and which sqlx's `Any` driver cannot carry.
//!
//! # URL
//! `postgres://user:password@host:port/db?sslmode=…&sslrootcert=…` as libpq reads it
//! (`tokio-postgres`'s parser, `sslmode` and `sslrootcert` as [`tls`] says). The password
//! never appears in an error or log ([`PgUrl`]'s `Display`).

pub mod migrate;
pub mod notify;
pub mod tls;

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use tokio_postgres::config::Host;
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::{StoreError, StoreResult};

/// How many connections one process holds at most.
const POOL_SIZE: usize = 16;
/// How long a call waits for a pooled connection, or for a new one to be made.
const POOL_WAIT: Duration = Duration::from_secs(5);
/// How long a connection attempt may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// A parsed PostgreSQL URL; shown without its password.
#[derive(Clone)]
pub struct PgUrl {
    config: tokio_postgres::Config,
    tls: tls::TlsSettings,
    shown: String,
}

/// Takes `sslmode` and `sslrootcert` out of a URL's query (tokio-postgres knows neither
/// `verify-*` nor `sslrootcert`), leaving the rest for its parser.
fn split_tls(url: &str) -> StoreResult<(String, tls::TlsSettings)> {
    let mut settings = tls::TlsSettings {
        mode: tls::SslMode::Prefer,
        root_cert: None,
    };
    let Some((base, query)) = url.split_once('?') else {
        return Ok((url.to_owned(), settings));
    };
    // Kept pairs stay as written: re-encoding would turn %20 into `+`, which libpq-style
    // parsers do not read as a space.
    let mut kept = Vec::new();
    for raw in query.split('&').filter(|p| !p.is_empty()) {
        let Some((key, value)) = url::form_urlencoded::parse(raw.as_bytes()).next() else {
            continue;
        };
        match key.as_ref() {
            "sslmode" => settings.mode = tls::SslMode::parse(&value)?,
            "sslrootcert" => settings.root_cert = Some(value.into_owned().into()),
            _ => kept.push(raw),
        }
    }
    if kept.is_empty() {
        return Ok((base.to_owned(), settings));
    }
    let query = kept.join("&");
    Ok((format!("{base}?{query}"), settings))
}

impl FromStr for PgUrl {
    type Err = StoreError;

    fn from_str(url: &str) -> StoreResult<Self> {
        let (url, tls) = split_tls(url)?;
        let mut config: tokio_postgres::Config = url.parse().map_err(|e| {
            StoreError::Config(format!(
                "the store URL is not a PostgreSQL URL ({e}); expected postgres://user@host:5432/database"
            ))
        })?;
        if config.get_hosts().is_empty() {
            return Err(StoreError::Config(
                "the store URL names no host; expected postgres://user@host:5432/database".into(),
            ));
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        if config.get_application_name().is_none() {
            config.application_name("toolgate");
        }
        config.ssl_mode(tls.mode.wire());
        let shown = shown(&config);
        Ok(PgUrl { config, tls, shown })
    }
}

/// `postgres://user@host:port/db` — what may be shown in logs and errors.
fn shown(config: &tokio_postgres::Config) -> String {
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(h)) => h.clone(),
        Some(Host::Unix(p)) => p.display().to_string(),
        None => String::new(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    format!(
        "postgres://{}@{host}:{port}/{}",
        config.get_user().unwrap_or(""),
        config.get_dbname().unwrap_or("")
    )
}

impl fmt::Display for PgUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown)
    }
}

impl fmt::Debug for PgUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PgUrl({})", self.shown)
    }
}

impl PgUrl {
    pub(crate) fn config(&self) -> &tokio_postgres::Config {
        &self.config
    }

    /// The TLS connector every connection of this URL is made with (used only when `sslmode`
    /// allows TLS).
    pub(crate) fn connector(&self) -> StoreResult<MakeRustlsConnect> {
        self.tls.connector()
    }

    pub fn tls(&self) -> &tls::TlsSettings {
        &self.tls
    }
}

/// A pool of connections to one PostgreSQL database.
#[derive(Clone)]
pub struct PgPool {
    pool: Pool,
    url: PgUrl,
}

impl fmt::Debug for PgPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PgPool").field("url", &self.url).finish()
    }
}

impl PgPool {
    /// A pool for `url`; connects lazily (the first [`PgPool::get`]).
    pub fn new(url: &PgUrl) -> StoreResult<Self> {
        let manager = Manager::from_config(
            url.config.clone(),
            url.connector()?,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(POOL_SIZE)
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(POOL_WAIT))
            .create_timeout(Some(POOL_WAIT))
            .recycle_timeout(Some(POOL_WAIT))
            .build()
            .map_err(|e| StoreError::Config(format!("PostgreSQL pool for {url}: {e}")))?;
        Ok(PgPool {
            pool,
            url: url.clone(),
        })
    }

    /// A connection from the pool.
    pub async fn get(&self) -> StoreResult<deadpool_postgres::Object> {
        self.pool.get().await.map_err(|e| match e {
            deadpool_postgres::PoolError::Backend(e) => pg_error(e),
            other => StoreError::Unavailable(format!(
                "PostgreSQL at {} is unreachable: {other}",
                self.url
            )),
        })
    }

    pub fn url(&self) -> &PgUrl {
        &self.url
    }
}

/// A PostgreSQL error as a store error: connection failures are `Unavailable` (retryable,
/// and the store recovers by itself once the server answers again), unique violations a
/// `Conflict`, anything else a database error with its SQLSTATE.
pub fn pg_error(e: tokio_postgres::Error) -> StoreError {
    use tokio_postgres::error::SqlState;
    let code = e.code().cloned();
    // No SQLSTATE: the connection failed (closed, refused, timed out) — or the client
    // refused a value before sending it, which is a bug, not an outage.
    let lost = e.is_closed()
        || std::error::Error::source(&e).is_some_and(|s| s.is::<std::io::Error>())
        || {
            let text = e.to_string();
            text.contains("connect") || text.contains("timeout") || text.contains("closed")
        };
    // The server's message (a bare `db error` says nothing).
    let e = match e.as_db_error() {
        Some(db) => db.to_string(),
        None => match std::error::Error::source(&e) {
            Some(source) => format!("{e}: {source}"),
            None => e.to_string(),
        },
    };
    match code.as_ref() {
        None if lost => StoreError::Unavailable(format!("PostgreSQL: {e}")),
        None => StoreError::Postgres(e),
        Some(code) if *code == SqlState::UNIQUE_VIOLATION => {
            StoreError::Conflict(format!("PostgreSQL: {e}"))
        }
        Some(code)
            if code.code().starts_with("08")
                || *code == SqlState::ADMIN_SHUTDOWN
                || *code == SqlState::CRASH_SHUTDOWN
                || *code == SqlState::CANNOT_CONNECT_NOW =>
        {
            StoreError::Unavailable(format!("PostgreSQL: {e}"))
        }
        Some(code) => StoreError::Postgres(format!("{e} (SQLSTATE {})", code.code())),
    }
}

/// Milliseconds as PostgreSQL's `BIGINT`.
pub fn ms(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// A `BIGINT` read back as milliseconds (never negative in our tables).
pub fn from_ms(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_shown_without_their_password() {
        let url: PgUrl = "postgres://alice:s3cret@db.internal:6543/toolgate?sslmode=require"
            .parse()
            .unwrap();
        assert_eq!(
            url.to_string(),
            "postgres://alice@db.internal:6543/toolgate"
        );
        assert!(!format!("{url:?}").contains("s3cret"));
    }

    #[test]
    fn sslmode_and_root_certificate_are_read_like_libpq() {
        let url: PgUrl =
            "postgres://u@h/db?application_name=x&sslmode=verify-full&sslrootcert=%2Fetc%2Fca.pem"
                .parse()
                .unwrap();
        assert_eq!(
            url.tls(),
            &tls::TlsSettings {
                mode: tls::SslMode::VerifyFull,
                root_cert: Some("/etc/ca.pem".into()),
            }
        );
        assert_eq!(url.config().get_application_name(), Some("x"));
        let plain: PgUrl = "postgres://u@h/db".parse().unwrap();
        assert_eq!(plain.tls().mode, tls::SslMode::Prefer);
        let e = "postgres://u@h/db?sslmode=sometimes"
            .parse::<PgUrl>()
            .unwrap_err();
        assert!(e.to_string().contains("verify-full"), "{e}");
    }

    #[test]
    fn a_url_without_host_or_of_another_scheme_is_refused() {
        for bad in ["mysql://root@localhost/db", "postgres:///db", "nonsense"] {
            let e = bad.parse::<PgUrl>().unwrap_err().to_string();
            assert!(e.contains("postgres://"), "{bad}: {e}");
        }
    }
}
