//! Store errors: IO and database failures, corruption, and bad requests to the store.

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    #[error("database error: {0}")]
    Db(#[from] rusqlite::Error),
    #[error("{0}")]
    Corrupt(String),
    #[error("not found: {0}")]
    NotFound(String),
    #[error("{0}")]
    Conflict(String),
    #[error("the audit writer has stopped: {0}")]
    WriterStopped(String),
    #[error("cannot encode {0}")]
    Encode(String),
    /// The store is configured wrongly (a bad URL, a schema to migrate).
    #[error("{0}")]
    Config(String),
    /// The database cannot be reached now; a later try may succeed.
    #[error("{0}")]
    Unavailable(String),
    /// A PostgreSQL error other than an unreachable server.
    #[error("PostgreSQL error: {0}")]
    Postgres(String),
    /// The database's schema is newer than this binary knows.
    #[error(
        "the store's schema is at version {found}, newer than this toolgate knows ({known}):          upgrade toolgate (an older binary must not write to a newer schema)"
    )]
    SchemaTooNew { found: i32, known: i32 },
}

impl StoreError {
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        StoreError::Io {
            context: context.into(),
            source,
        }
    }
}

pub type StoreResult<T> = Result<T, StoreError>;
