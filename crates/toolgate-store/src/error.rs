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
