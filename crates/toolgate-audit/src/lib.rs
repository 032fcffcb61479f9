//! The tamper-evident audit log (R-EXE-5, R-EXE-7): an append-only JSONL file whose lines form
//! a sha256 hash chain (each MACed under the audit key when there is one), and a SQLite index
//! of the same records for queries; on a cluster, the same chain per replica in PostgreSQL
//! (`pg`, `cluster`). It sits on the store's plumbing (errors, the embedded connection
//! settings, the PostgreSQL pool) and the redactor; nothing below it knows it.
//!
//! # Layout
//! - `record`: [`AuditRecord`] (what is said about a call), [`StoredRecord`], [`Durability`].
//! - `chain`: the line format — `{"hash":…,"seq":…,"prev":…,<record>}` — and its checks.
//! - `writer`: the one writer thread, group-committing batches under a file lock;
//!   `syncer`: the fsyncs, several in flight, answering callers in batch order.
//! - `recover`: finding the chain's tip and truncating a torn tail after a crash.
//! - `index` / `indexer`: the SQLite index, fed by the writer and caught up from the file.
//! - `query`: [`AuditIndex`] and [`AuditQuery`].
//! - `verify`: [`verify()`], which walks the chain (and the index) and reports the first
//!   bad record.
//!
//! # Invariants
//! - Secrets are masked before a record leaves the caller ([`toolgate_store::redact`]); nothing
//!   unredacted reaches the writer, the file or the index.
//! - A record is never rewritten or removed: the chain only grows, and `verify` finds the
//!   first line that was altered, dropped or reordered (and, keyed, one forged without the
//!   key). The anchor beside the log (its head, outside the data dir's reach) catches a
//!   truncation of the tail.
//! - The log's directory and file are opened without following a symbolic link, and the
//!   audit key is refused inside the workspace, the data dir or anything a tool may reach.
//! - A durable append is acknowledged only after its bytes are fsynced; a record that was
//!   torn by a crash was therefore never acknowledged, and reopening drops it.
//! - Several processes may append to one file: each batch is chained under an exclusive
//!   `flock` after re-reading the tip if another process moved it.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> toolgate_store::StoreResult<()> {
//! use serde_json::json;
//! use toolgate_audit::{
//!     AuditLog, AuditOutcome, AuditQuery, AuditRecord, Durability, RecordKind, verify,
//! };
//! let dir = tempfile::tempdir().unwrap();
//! let jsonl = dir.path().join("logs/tool-audit.jsonl");
//! let log = AuditLog::open(&jsonl, &dir.path().join("toolgate.db"), Durability::Durable)?;
//! let seq = log.append(AuditRecord {
//!     kind: RecordKind::Attempt, ts: AuditRecord::now_ts(), call_id: "c1".into(),
//!     session: "s1".into(), principal: "alice".into(), role: "dev".into(), tool: "echo".into(),
//!     source: None, risk: None, arguments: json!({"password": "hunter2"}),
//!     outcome: AuditOutcome::Started, error: None, result: None, duration_us: None,
//!     approver: None, approval_id: None, issuer: None, subject: None, policy_rule: None,
//! }).await?;
//! assert_eq!(seq, 1);
//! let found = log.query(&AuditQuery { tool: Some("echo".into()), ..Default::default() })?;
//! assert_eq!(found[0].record.arguments, json!({"password": "[REDACTED]"}));
//! assert!(verify(&jsonl, None)?.ok());
//! # Ok(()) }
//! ```

#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)
)]

mod anchor;
mod chain;
pub mod cluster;
mod export;
mod index;
mod indexer;
mod key;
pub mod pg;
mod place;
mod query;
mod record;
mod recover;
mod roster;
mod syncer;
mod verify;
mod writer;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{self, Sender};
use std::thread::JoinHandle;

use tokio::sync::oneshot;

pub use anchor::resolved_path;
pub use chain::GENESIS_HASH;
pub use export::{ExportHead, export, verify_export};
pub use key::{AuditKey, KEY_FILE, default_key_dir};
pub use query::{AuditIndex, AuditQuery};
pub use record::{AuditOutcome, AuditRecord, Durability, RecordKind, StoredRecord, UnknownOutcome};
pub use verify::{BadRecord, VerifyReport, accept_evidence, verify, verify_with};

use anchor::AnchorFile;
use chain::record_body;
use index::IndexFields;
use recover::{FileLock, first_hash, hash_at_seq, repair_tail};
use toolgate_store::redact::Redactor;
use toolgate_store::{StoreError, StoreResult};
use writer::{ChainWriter, FlushAck, PendingRecord, WriterCommand};

/// Handle to an open audit log: the embedded JSONL chain, or this process's chain of the
/// cluster's log in PostgreSQL ([`pg`]). Cheap to clone; all clones share one writer (a
/// thread, or a task), which stops after writing everything queued when the last clone is
/// dropped.
#[derive(Clone)]
pub struct AuditLog {
    backend: Backend,
}

impl std::fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.backend {
            Backend::File(inner) => f
                .debug_struct("AuditLog")
                .field("path", &inner.path)
                .finish(),
            Backend::Postgres(c) => f
                .debug_struct("AuditLog")
                .field("chain", &c.log.chain())
                .finish(),
        }
    }
}

#[derive(Clone)]
enum Backend {
    File(Arc<Inner>),
    Postgres(Arc<Cluster>),
}

/// The cluster backend and what the handle needs beside it.
struct Cluster {
    log: pg::PgAudit,
    redactor: Arc<Redactor>,
    durability: Durability,
    pool: toolgate_store::pg::PgPool,
    key: Option<AuditKey>,
}

struct Inner {
    tx: Option<Sender<WriterCommand>>,
    writer: Option<JoinHandle<()>>,
    indexer: Option<JoinHandle<()>>,
    index: AuditIndex,
    redactor: Arc<Redactor>,
    durability: Durability,
    path: PathBuf,
    db: PathBuf,
    key: Option<AuditKey>,
}

impl AuditLog {
    /// Opens or creates the log at `jsonl` (and its parent directories) with its index in the
    /// SQLite database `db`, without a key: the chain shows accidental damage but anyone who
    /// can write the file can rewrite it. The binary always opens keyed
    /// ([`AuditLog::open_keyed`]); this is for tests and embeddings.
    pub fn open(jsonl: &Path, db: &Path, durability: Durability) -> StoreResult<AuditLog> {
        AuditLog::open_with(jsonl, db, durability, None)
    }

    /// Opens or creates the log keyed by `key`: every record carries a MAC, and the head
    /// anchor beside the key follows the last fsynced record. Refuses a log that does not
    /// hold what its anchor vouches for (cut, replaced or deleted) or whose acknowledged
    /// tail is damaged; nothing is changed then, and `verify` names the first bad record.
    /// Sets a torn unacknowledged tail aside as an evidence file. Brings the index up to
    /// date and starts the writer and indexer threads.
    pub fn open_keyed(
        jsonl: &Path,
        db: &Path,
        durability: Durability,
        key: AuditKey,
    ) -> StoreResult<AuditLog> {
        AuditLog::open_with(jsonl, db, durability, Some(key))
    }

    fn open_with(
        jsonl: &Path,
        db: &Path,
        durability: Durability,
        key: Option<AuditKey>,
    ) -> StoreResult<AuditLog> {
        let io_err = |what: &str, e| StoreError::io(format!("{what} {}", jsonl.display()), e);
        if let Some(parent) = jsonl.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)
                .map_err(|e| io_err("cannot create the directory of", e))?;
        }
        let mut anchor_file = key.as_ref().map(|k| AnchorFile::for_log(k, jsonl));
        let anchor = match &anchor_file {
            Some(f) => f.load()?,
            None => None,
        };
        let missing = match place::open_log(jsonl, place::Access::Read) {
            Err(StoreError::NotFound(_)) => true,
            Err(e) => return Err(e),
            Ok(_) => false,
        };
        if let Some(a) = &anchor
            && a.seq > 0
            && missing
        {
            return Err(StoreError::Corrupt(format!(
                "the audit log {} is missing, but its head anchor {} says it held {} \
                 records: it was deleted or moved. Run `toolgate audit verify`",
                jsonl.display(),
                anchor_file
                    .as_ref()
                    .map_or(String::new(), |f| f.path().display().to_string()),
                a.seq
            )));
        }
        let file = place::open_log(jsonl, place::Access::Append)?;
        let tip = {
            let _lock = FileLock::exclusive(&file, jsonl)?;
            let tip = repair_tail(
                &file,
                jsonl,
                anchor.as_ref().map_or(0, |a| a.seq),
                anchor_file.as_ref(),
            )?;
            let first = first_hash(&file, &tip).map_err(|e| io_err("cannot read", e))?;
            if let Some(a) = &anchor {
                let held = hash_at_seq(&file, &tip, a.seq).map_err(|e| io_err("cannot read", e))?;
                let matches = a.seq == 0 || held.as_deref() == Some(a.hash.as_str());
                if !matches {
                    return Err(StoreError::Corrupt(format!(
                        "the audit log {} does not hold the record its head anchor vouches for \
                         (seq {}, hash {}): records were removed or the log was replaced. \
                         Nothing was changed; run `toolgate audit verify`",
                        jsonl.display(),
                        a.seq,
                        a.hash
                    )));
                }
                if let (Some(anchored), Some(found)) = (&a.first, &first)
                    && anchored != found
                {
                    return Err(StoreError::Corrupt(format!(
                        "the audit log {} is not the log its head anchor names: its first \
                         record is another (the log was replaced). Nothing was changed; run \
                         `toolgate audit verify`",
                        jsonl.display()
                    )));
                }
            }
            if let (Some(f), Some(first)) = (anchor_file.as_mut(), &first) {
                f.note_first(first);
            }
            tip
        };
        match (&anchor_file, &anchor) {
            // The first keyed open: records before this point predate the key.
            (Some(f), None) => f.advance(tip.seq, &tip.hash, tip.seq + 1)?,
            // An anchor written before it named the log's first record: fill it in.
            (Some(f), Some(a)) if a.first.is_none() && a.seq > 0 => {
                f.advance(a.seq, &a.hash, a.keyed_from)?;
            }
            _ => {}
        }
        let index = AuditIndex::open(jsonl, db)?;
        index.catch_up()?;

        let indexer_conn = index::open_index_db(db)?;
        let indexer_file = place::open_log(jsonl, place::Access::Read)?;
        let (index_tx, index_rx) = mpsc::channel();
        let indexer_path = jsonl.to_owned();
        let indexer = std::thread::Builder::new()
            .name("toolgate-audit-index".into())
            .spawn(move || {
                indexer::run(
                    indexer_conn,
                    indexer_file,
                    indexer_path,
                    anchor_file,
                    index_rx,
                )
            })
            .map_err(|e| io_err("cannot start the indexer thread for", e))?;

        let chain_writer = ChainWriter::new(file, jsonl.to_owned(), tip, key.clone(), index_tx)?;
        let (tx, rx) = mpsc::channel();
        let writer = std::thread::Builder::new()
            .name("toolgate-audit-writer".into())
            .spawn(move || chain_writer.run(rx))
            .map_err(|e| io_err("cannot start the writer thread for", e))?;

        Ok(AuditLog {
            backend: Backend::File(Arc::new(Inner {
                tx: Some(tx),
                writer: Some(writer),
                indexer: Some(indexer),
                index,
                redactor: Redactor::shared(),
                durability,
                path: jsonl.to_owned(),
                db: db.to_owned(),
                key,
            })),
        })
    }

    /// This process's chain of the cluster's audit log in PostgreSQL (schema migrated).
    pub async fn open_postgres(
        pool: toolgate_store::pg::PgPool,
        durability: Durability,
        key: Option<AuditKey>,
    ) -> StoreResult<AuditLog> {
        let log = pg::PgAudit::open(pool.clone(), key.clone()).await?;
        Ok(AuditLog {
            backend: Backend::Postgres(Arc::new(Cluster {
                log,
                redactor: Redactor::shared(),
                durability,
                pool,
                key,
            })),
        })
    }

    fn file(&self) -> StoreResult<&Arc<Inner>> {
        match &self.backend {
            Backend::File(inner) => Ok(inner),
            Backend::Postgres(_) => Err(StoreError::Config(
                "this operation reads the embedded audit file; the log is in PostgreSQL".into(),
            )),
        }
    }

    /// Verifies the whole cluster's audit log (every replica's chain), or this log's file.
    pub async fn verify_cluster(&self) -> StoreResult<cluster::ClusterReport> {
        let Backend::Postgres(c) = &self.backend else {
            return Err(StoreError::Config(
                "the audit log is the embedded file; use verify".into(),
            ));
        };
        c.log.flush().await?;
        let (heads, records) = pg::dump(&c.pool).await?;
        Ok(cluster::check(&heads, &records, c.key.as_ref()))
    }

    /// Whether the log is the cluster's (PostgreSQL).
    pub fn is_cluster(&self) -> bool {
        matches!(self.backend, Backend::Postgres(_))
    }

    /// Flushes, then verifies this log as [`verify_with`] does, with its index and (for a
    /// keyed log) its key and head anchor.
    pub fn verify(&self) -> StoreResult<VerifyReport> {
        self.flush_blocking()?;
        let inner = self.file()?;
        let db = inner.db.exists().then_some(inner.db.as_path());
        verify_with(&inner.path, db, inner.key.as_ref())
    }

    /// Redacts `record` (arguments, result and error text; see [`toolgate_store::redact`]) and appends
    /// it with the log's [`Durability`]. Durable: returns the record's seq once its bytes are
    /// fsynced. Buffered: returns 0 as soon as the record is queued (the seq is assigned by
    /// the writer later; a write failure is reported by the next [`AuditLog::flush`]).
    pub async fn append(&self, record: AuditRecord) -> StoreResult<u64> {
        self.append_with(record, self.durability()).await
    }

    /// [`AuditLog::append`] with an explicit durability for this one record.
    pub async fn append_with(
        &self,
        record: AuditRecord,
        durability: Durability,
    ) -> StoreResult<u64> {
        if let Backend::Postgres(c) = &self.backend {
            let (body, fields) = prepare(&c.redactor, record)?;
            return c
                .log
                .append(body, fields, durability == Durability::Durable)
                .await;
        }
        match durability {
            Durability::Buffered => {
                self.enqueue(record, None)?;
                Ok(0)
            }
            Durability::Durable => {
                let (ack, done) = oneshot::channel();
                self.enqueue(record, Some(ack))?;
                done.await.map_err(|_| self.stopped())?
            }
        }
    }

    /// Returns once everything appended so far is written and fsynced. Fails if a buffered
    /// append since the last flush could not be written.
    pub async fn flush(&self) -> StoreResult<()> {
        if let Backend::Postgres(c) = &self.backend {
            return c.log.flush().await;
        }
        let (ack, done) = oneshot::channel();
        self.send(WriterCommand::Flush(FlushAck::Async(ack)))?;
        done.await.map_err(|_| self.stopped())?
    }

    /// [`AuditLog::flush`] for shutdown paths outside an async runtime (blocks the thread).
    pub fn flush_blocking(&self) -> StoreResult<()> {
        self.file()?;
        let (ack, done) = mpsc::sync_channel(1);
        self.send(WriterCommand::Flush(FlushAck::Blocking(ack)))?;
        done.recv().map_err(|_| self.stopped())?
    }

    /// Flushes, catches the index up with the file (also records other processes appended),
    /// and returns the matching records. Blocking: from async code, prefer `spawn_blocking`.
    pub fn query(&self, q: &AuditQuery) -> StoreResult<Vec<StoredRecord>> {
        self.flush_blocking()?;
        self.file()?.index.query(q)
    }

    /// [`AuditLog::query`] from async code, either backend (the cluster's: every replica's
    /// records).
    pub async fn query_async(&self, q: &AuditQuery) -> StoreResult<Vec<StoredRecord>> {
        match &self.backend {
            Backend::Postgres(c) => c.log.query(q).await,
            Backend::File(_) => {
                let (log, q) = (self.clone(), q.clone());
                tokio::task::spawn_blocking(move || log.query(&q))
                    .await
                    .map_err(|e| {
                        StoreError::Unavailable(format!("the audit query task failed: {e}"))
                    })?
            }
        }
    }

    pub fn durability(&self) -> Durability {
        match &self.backend {
            Backend::File(inner) => inner.durability,
            Backend::Postgres(c) => c.durability,
        }
    }

    /// The JSONL file this log writes; `None` for the cluster's log.
    pub fn path(&self) -> Option<&Path> {
        match &self.backend {
            Backend::File(inner) => Some(&inner.path),
            Backend::Postgres(_) => None,
        }
    }

    /// Redaction and serialisation happen here, on the caller's thread.
    fn enqueue(
        &self,
        record: AuditRecord,
        ack: Option<oneshot::Sender<StoreResult<u64>>>,
    ) -> StoreResult<()> {
        let (body, fields) = prepare(&self.file()?.redactor, record)?;
        queued();
        self.send(WriterCommand::Append(PendingRecord { body, fields, ack }))
    }

    fn send(&self, cmd: WriterCommand) -> StoreResult<()> {
        let tx = self.file()?.tx.as_ref().ok_or_else(|| self.stopped())?;
        tx.send(cmd).map_err(|_| self.stopped())
    }

    fn stopped(&self) -> StoreError {
        StoreError::WriterStopped(format!(
            "the writer of the audit log {} has exited",
            self.path()
                .map_or_else(|| "in PostgreSQL".into(), |p| p.display().to_string())
        ))
    }
}

/// Records handed to a writer (the file's thread, or the PostgreSQL task) and not yet
/// written, across every log of this process: `toolgate.audit.queue.depth`.
static QUEUED: std::sync::atomic::AtomicI64 = std::sync::atomic::AtomicI64::new(0);

/// How many records wait for a writer now.
pub fn queue_depth() -> i64 {
    QUEUED.load(std::sync::atomic::Ordering::Relaxed).max(0)
}

fn queued() {
    QUEUED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
}

pub(crate) fn dequeued(n: usize) {
    QUEUED.fetch_sub(
        i64::try_from(n).unwrap_or(i64::MAX),
        std::sync::atomic::Ordering::Relaxed,
    );
}

/// Masks the record's secrets and serialises it: the line's body and its index fields.
fn prepare(redactor: &Redactor, mut record: AuditRecord) -> StoreResult<(String, IndexFields)> {
    redactor.for_audit_arguments_in_place(&mut record.arguments);
    if let Some(result) = record.result.as_mut() {
        redactor.for_audit_result_in_place(result);
    }
    record.error = record.error.as_deref().map(|e| redactor.for_audit_text(e));
    let body = record_body(&record)
        .map_err(|e| StoreError::Encode(format!("audit record of call {}: {e}", record.call_id)))?;
    let fields = IndexFields::of(&record);
    Ok((body, fields))
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Closing the channel lets the writer drain, sync and exit; it then drops the
        // indexer's channel, so the indexer finishes too.
        drop(self.tx.take());
        if let Some(writer) = self.writer.take() {
            let _ = writer.join();
        }
        if let Some(indexer) = self.indexer.take() {
            let _ = indexer.join();
        }
    }
}
