//! The single writer thread: group commit of the hash chain.
//!
//! Sequence for each batch (everything queued when the thread wakes up):
//! 1. take the file's exclusive advisory lock (other processes append to the same log);
//! 2. if the file's length is not what this writer last left, re-read the tail (repairing a
//!    torn one) to chain after the real last record;
//! 3. assign `seq`/`prev`/`hash` in queue order and write the whole batch with one write;
//! 4. release the lock and hand the batch to the [`Syncer`]: if any record in it is durable
//!    or a flush is waiting, a sync starts at once (buffered records alone are synced at
//!    most every [`BUFFERED_SYNC_INTERVAL`]); the callers are answered, and the records
//!    indexed, once a sync that began after the write has finished — while this thread
//!    already writes the next batch.
//!
//! Redaction and serialisation happen on the callers' threads; this thread only hashes and
//! writes.

use std::fs::File;
use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use super::chain::encode_line;
use super::index::{IndexFields, IndexRow};
use super::key::AuditKey;
use super::recover::{ChainTip, FileLock, repair_tail};
use super::syncer::{Completion, Syncer};
use toolgate_store::{StoreError, StoreResult};

/// How long buffered records may sit in the page cache before the writer fsyncs them.
pub(crate) const BUFFERED_SYNC_INTERVAL: Duration = Duration::from_millis(20);

/// How long the writer rests after a batch nobody waits for (buffered records only). A
/// durable append or flush arriving meanwhile waits at most this long.
const BUFFERED_BATCH_PAUSE: Duration = Duration::from_millis(2);

/// Most commands taken into one batch; bounds the latency of the first caller in it.
const MAX_BATCH: usize = 4096;

/// A redacted, serialised record on its way to the file.
pub(crate) struct PendingRecord {
    /// The record's JSON text without its opening brace.
    pub body: String,
    pub fields: IndexFields,
    /// `Some` for durable appends: resolved with the seq once the record is fsynced.
    pub ack: Option<oneshot::Sender<StoreResult<u64>>>,
}

/// Where to report that a flush finished.
pub(crate) enum FlushAck {
    Async(oneshot::Sender<StoreResult<()>>),
    Blocking(std::sync::mpsc::SyncSender<StoreResult<()>>),
}

impl FlushAck {
    pub(crate) fn send(self, result: StoreResult<()>) {
        // A caller that stopped waiting no longer needs the answer.
        match self {
            FlushAck::Async(tx) => drop(tx.send(result)),
            FlushAck::Blocking(tx) => drop(tx.send(result)),
        }
    }
}

// Appends are nearly every message; boxing them would add an allocation per record.
#[allow(clippy::large_enum_variant)]
pub(crate) enum WriterCommand {
    Append(PendingRecord),
    Flush(FlushAck),
}

/// State owned by the writer thread.
pub(crate) struct ChainWriter {
    /// Shared with the lock guard held while a batch is written, and with the syncer.
    file: Arc<File>,
    path: PathBuf,
    tip: ChainTip,
    /// MACs each record when set.
    key: Option<AuditKey>,
    syncer: Syncer,
    /// Bytes written since the last sync was started.
    dirty: bool,
    last_sync: Instant,
    /// A buffered append failed and no flush has reported it yet.
    buffered_failure: Option<String>,
}

impl ChainWriter {
    pub(crate) fn new(
        file: File,
        path: PathBuf,
        tip: ChainTip,
        key: Option<AuditKey>,
        indexer: Sender<Vec<IndexRow>>,
    ) -> StoreResult<Self> {
        let file = Arc::new(file);
        let syncer = Syncer::start(Arc::clone(&file), path.clone(), indexer)?;
        Ok(ChainWriter {
            file,
            path,
            tip,
            key,
            syncer,
            dirty: false,
            last_sync: Instant::now(),
            buffered_failure: None,
        })
    }

    /// Runs until every sender is gone, then syncs what is left.
    pub(crate) fn run(mut self, rx: Receiver<WriterCommand>) {
        loop {
            let first = if self.dirty {
                let wait = BUFFERED_SYNC_INTERVAL.saturating_sub(self.last_sync.elapsed());
                match rx.recv_timeout(wait) {
                    Ok(cmd) => cmd,
                    Err(RecvTimeoutError::Timeout) => {
                        self.start_sync(Completion::default());
                        continue;
                    }
                    Err(RecvTimeoutError::Disconnected) => break,
                }
            } else {
                match rx.recv() {
                    Ok(cmd) => cmd,
                    Err(_) => break,
                }
            };
            let mut batch = vec![first];
            while batch.len() < MAX_BATCH {
                match rx.try_recv() {
                    Ok(cmd) => batch.push(cmd),
                    Err(_) => break,
                }
            }
            if !self.process(batch) {
                // Nobody is waiting: let buffered records pile up for a moment so appenders
                // enqueue without waking this thread for every record.
                std::thread::sleep(BUFFERED_BATCH_PAUSE);
            }
        }
        if self.dirty {
            self.start_sync(Completion::default());
        }
        // Dropping the syncer waits for the last syncs and answers their callers.
    }

    /// Writes one batch and hands its callers to the syncer; returns whether any caller
    /// was waiting.
    fn process(&mut self, batch: Vec<WriterCommand>) -> bool {
        let mut records = Vec::with_capacity(batch.len());
        let mut acks = Vec::with_capacity(batch.len());
        let mut flushes = Vec::new();
        for cmd in batch {
            match cmd {
                WriterCommand::Append(rec) => {
                    super::dequeued(1);
                    acks.push(rec.ack);
                    records.push((rec.body, rec.fields));
                }
                WriterCommand::Flush(ack) => flushes.push(ack),
            }
        }
        let waiting = !flushes.is_empty() || acks.iter().any(Option::is_some);
        if !flushes.is_empty()
            && let Some(msg) = self.buffered_failure.take()
        {
            for ack in flushes.drain(..) {
                ack.send(Err(StoreError::WriterStopped(msg.clone())));
            }
        }
        let must_sync =
            waiting || (self.dirty && self.last_sync.elapsed() >= BUFFERED_SYNC_INTERVAL);
        if records.is_empty() {
            if must_sync {
                self.start_sync(Completion {
                    flushes,
                    ..Completion::default()
                });
            }
            return waiting;
        }
        match self.write_batch(records) {
            Ok((first_seq, rows)) => {
                let completion = Completion {
                    acks: (first_seq..)
                        .zip(acks)
                        .filter_map(|(seq, ack)| ack.map(|ack| (seq, ack)))
                        .collect(),
                    flushes,
                    rows,
                };
                self.dirty = true;
                if must_sync {
                    self.start_sync(completion);
                } else {
                    self.syncer.submit(completion, false);
                }
            }
            Err(err) => {
                for ack in acks {
                    match ack {
                        Some(ack) => drop(ack.send(Err(copy_error(&err)))),
                        None => self.buffered_failure = Some(err.to_string()),
                    }
                }
                for ack in flushes {
                    ack.send(Err(copy_error(&err)));
                }
            }
        }
        waiting
    }

    /// Starts a sync covering everything written so far; `completion` holds once it ends.
    fn start_sync(&mut self, completion: Completion) {
        if let Some(msg) = self.syncer.take_buffered_failure() {
            self.buffered_failure = Some(msg);
        }
        self.syncer.submit(completion, true);
        self.dirty = false;
        self.last_sync = Instant::now();
    }

    /// Chains and writes `records` (body, index fields) under the file lock; returns the seq
    /// of the first and the rows to index once they are durable.
    fn write_batch(
        &mut self,
        records: Vec<(String, IndexFields)>,
    ) -> StoreResult<(u64, Vec<IndexRow>)> {
        let file = Arc::clone(&self.file);
        let _lock = FileLock::exclusive(&file, &self.path)?;
        let len = file
            .metadata()
            .map_err(|e| self.io_err("cannot stat", e))?
            .len();
        if len != self.tip.len {
            // Another process wrote (or crashed mid-write): a torn tail it left is anchored too.
            let anchor = self
                .key
                .as_ref()
                .map(|k| super::anchor::AnchorFile::for_log(k, &self.path));
            self.tip = repair_tail(&file, &self.path, 0, anchor.as_ref())?;
        }
        let mut buf = Vec::with_capacity(records.iter().map(|(body, _)| body.len() + 180).sum());
        let first_seq = self.tip.seq + 1;
        let mut tip = self.tip.clone();
        let mut rows = Vec::with_capacity(records.len());
        for (body, fields) in records {
            let start = tip.len + buf.len() as u64;
            tip.seq += 1;
            tip.hash = encode_line(&mut buf, tip.seq, &tip.hash, &body, self.key.as_ref());
            rows.push(IndexRow {
                seq: tip.seq,
                hash: tip.hash.clone(),
                fields,
                start,
                end: tip.len + buf.len() as u64,
            });
        }
        tip.len += buf.len() as u64;
        if let Err(e) = (&*file).write_all(&buf) {
            // Take back a partial write so the next batch chains from a clean end.
            let _ = file.set_len(self.tip.len);
            return Err(self.io_err("cannot write to", e));
        }
        self.tip = tip;
        Ok((first_seq, rows))
    }

    fn io_err(&self, what: &str, e: io::Error) -> StoreError {
        StoreError::io(format!("{what} the audit log {}", self.path.display()), e)
    }
}

/// One error reported to each caller of a failed batch.
pub(crate) fn copy_error(err: &StoreError) -> StoreError {
    match err {
        StoreError::Io { context, source } => StoreError::io(
            context.clone(),
            io::Error::new(source.kind(), source.to_string()),
        ),
        StoreError::Corrupt(msg) => StoreError::Corrupt(msg.clone()),
        other => StoreError::WriterStopped(other.to_string()),
    }
}
