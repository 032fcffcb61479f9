//! Offloaded results (R-EXE-4): a result too long for the model's context is stored here in
//! full and replaced by its id, which the `read_result` tool pages through — on the replica
//! that stored it or, with the PostgreSQL backend, on any replica.
//!
//! # Layout
//! - [`ResultStore`]: the handle — ids, redaction, the size limit, paging.
//! - [`ResultBackend`]: where the texts live: `files` ([`ResultFiles`], one file per result
//!   in the data dir) or `postgres` ([`PgResults`], table `offloaded_results`).
//!
//! # Invariants
//! - Nothing unredacted is stored: the handle masks secrets before a backend sees the text.
//! - Ids are checked against their exact shape (`res_` + 16 hex) before any backend sees
//!   them, so an id can never name a path outside the directory or anything else.
//! - Pages never split a UTF-8 character: both ends snap forward to a character boundary, so
//!   following `next_offset` from 0 yields every byte exactly once, in order, and every page
//!   makes progress.
//! - Retention ([`ResultRetention`]): after each `put` the oldest results are removed until
//!   at most `max_count` results and `max_total_bytes` bytes are kept, and any older than
//!   `max_age` too; the result just stored is never the one evicted. A single result larger
//!   than `max_total_bytes` is refused. Reading an evicted id says that it may have been
//!   evicted, and by which limits.

mod files;
mod postgres;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde::Serialize;

pub use files::ResultFiles;
pub use postgres::PgResults;

use crate::{StoreError, StoreResult};

const ID_PREFIX: &str = "res_";
const ID_HEX_LEN: usize = 16;
/// A UTF-8 character is at most 4 bytes, so at most 3 continuation bytes follow a boundary.
const MAX_CONTINUATION: u64 = 3;

/// How much the result store keeps (`[limits] result_retention_*`); oldest go first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResultRetention {
    /// Total size of the stored results; also the largest single result stored.
    pub max_total_bytes: u64,
    /// Number of stored results; 0: no limit.
    pub max_count: usize,
    /// Results older than this are removed; zero: no limit.
    pub max_age: Duration,
}

impl Default for ResultRetention {
    /// 256 MiB, 1,000 results, 7 days.
    fn default() -> Self {
        ResultRetention {
            max_total_bytes: 256 << 20,
            max_count: 1000,
            max_age: Duration::from_secs(7 * 24 * 3600),
        }
    }
}

impl std::fmt::Display for ResultRetention {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} bytes", self.max_total_bytes)?;
        if self.max_count > 0 {
            write!(f, ", {} results", self.max_count)?;
        }
        if !self.max_age.is_zero() {
            write!(f, ", {} seconds", self.max_age.as_secs())?;
        }
        Ok(())
    }
}

/// One page of an offloaded result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ResultPage {
    pub id: String,
    /// Byte offset where `text` starts (the requested offset snapped to a character boundary).
    pub offset: u64,
    pub total_bytes: u64,
    pub text: String,
    /// Where the next page starts; `None` at the end.
    pub next_offset: Option<u64>,
    pub eof: bool,
}

/// A stored result's length and the bytes of a window of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    pub total: u64,
    pub bytes: Vec<u8>,
}

/// Where the texts of offloaded results live.
#[async_trait]
pub trait ResultBackend: Send + Sync + 'static {
    /// Stores `text` (redacted, within the size limit) under the new `id`, then applies
    /// `retention`, never evicting `id`.
    async fn put(
        &self,
        id: &str,
        call_id: &str,
        text: &str,
        retention: ResultRetention,
    ) -> StoreResult<()>;
    /// Result `id`'s length and up to `len` of its bytes from `offset` (fewer at the end);
    /// `None` when no such result is stored.
    async fn window(&self, id: &str, offset: u64, len: u64) -> StoreResult<Option<Window>>;
}

/// Full texts of offloaded results, over either backend.
#[derive(Clone)]
pub struct ResultStore {
    backend: Arc<dyn ResultBackend>,
    retention: ResultRetention,
}

impl std::fmt::Debug for ResultStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResultStore")
            .field("retention", &self.retention)
            .finish_non_exhaustive()
    }
}

impl ResultStore {
    /// The embedded store: one file per result in `dir` (created `0700` if needed).
    pub fn open(dir: &std::path::Path) -> StoreResult<Self> {
        Ok(ResultStore::with_backend(Arc::new(ResultFiles::open(dir)?)))
    }

    pub fn with_backend(backend: Arc<dyn ResultBackend>) -> Self {
        ResultStore {
            backend,
            retention: ResultRetention::default(),
        }
    }

    /// Replaces the default [`ResultRetention`].
    #[must_use]
    pub fn with_retention(mut self, retention: ResultRetention) -> Self {
        self.retention = retention;
        self
    }

    pub fn retention(&self) -> ResultRetention {
        self.retention
    }

    /// Stores the full text of the result of call `call_id`, token-shaped secrets masked;
    /// returns its id (`res_` + 16 hex).
    pub async fn put(&self, call_id: &str, text: &str) -> StoreResult<String> {
        let id = format!(
            "{ID_PREFIX}{}",
            hex::encode(&uuid::Uuid::new_v4().into_bytes()[..ID_HEX_LEN / 2])
        );
        // Nothing unredacted is stored (R-EXE-6), whatever the caller passed.
        let text = crate::redact::Redactor::shared().redact_text(text);
        if text.len() as u64 > self.retention.max_total_bytes {
            return Err(StoreError::io(
                format!(
                    "storing the result of call {call_id}: it is {} bytes; the result store keeps at most {} bytes ([limits] result_retention_bytes)",
                    text.len(),
                    self.retention.max_total_bytes
                ),
                std::io::Error::from(std::io::ErrorKind::FileTooLarge),
            ));
        }
        self.backend
            .put(&id, call_id, &text, self.retention)
            .await?;
        Ok(id)
    }

    /// Reads up to about `limit` bytes of result `id` from byte `offset`. Both ends snap
    /// forward to character boundaries, so a page may run up to 3 bytes over `limit`, and a
    /// `limit` of 0 still returns one character. An offset at or past the end gives an empty,
    /// `eof` page. A malformed or unknown id is [`StoreError::NotFound`].
    pub async fn read(&self, id: &str, offset: u64, limit: u64) -> StoreResult<ResultPage> {
        if !is_valid_id(id) {
            return Err(not_found(id));
        }
        // Enough bytes to snap the start forward, take `limit`, and snap the end forward.
        let window_len = MAX_CONTINUATION
            .saturating_add(limit.max(1))
            .saturating_add(MAX_CONTINUATION);
        let Some(Window { total, bytes }) = self.backend.window(id, offset, window_len).await?
        else {
            return Err(self.gone(id));
        };
        if offset >= total {
            return Ok(ResultPage {
                id: id.to_owned(),
                offset: total,
                total_bytes: total,
                text: String::new(),
                next_offset: None,
                eof: true,
            });
        }
        let start = snap_forward(&bytes, 0);
        let end = snap_forward(&bytes, start.saturating_add(to_usize(limit.max(1))));
        let text = std::str::from_utf8(&bytes[start..end])
            .map_err(|e| StoreError::Corrupt(format!("result {id} is not valid UTF-8: {e}")))?
            .to_owned();
        let page_start = offset + start as u64;
        let page_end = offset + end as u64;
        let eof = page_end >= total;
        Ok(ResultPage {
            id: id.to_owned(),
            offset: page_start,
            total_bytes: total,
            text,
            next_offset: (!eof).then_some(page_end),
            eof,
        })
    }

    /// A well-formed id with nothing stored: never stored, or evicted by retention.
    fn gone(&self, id: &str) -> StoreError {
        StoreError::NotFound(format!(
            "result {id} is not stored: it does not exist or was evicted by the result retention limits (the oldest go first beyond {}); repeat the call that produced it",
            self.retention
        ))
    }
}

/// `res_` followed by exactly 16 lowercase hex digits: nothing else reaches a backend.
pub(crate) fn is_valid_id(id: &str) -> bool {
    id.strip_prefix(ID_PREFIX).is_some_and(|hex| {
        hex.len() == ID_HEX_LEN
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// The first character boundary at or after `at` (clamped to the end of `bytes`).
fn snap_forward(bytes: &[u8], at: usize) -> usize {
    let mut i = at.min(bytes.len());
    while i < bytes.len() && is_continuation(bytes[i]) {
        i += 1;
    }
    i
}

fn is_continuation(byte: u8) -> bool {
    byte & 0b1100_0000 == 0b1000_0000
}

fn to_usize(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

fn not_found(id: &str) -> StoreError {
    StoreError::NotFound(format!(
        "result {id} does not exist (ids look like res_ followed by 16 hex digits)"
    ))
}
