//! Concurrent fsyncs of the audit file, so one slow `fdatasync` never makes the next batch
//! wait for it.
//!
//! The writer numbers its batches 1, 2, 3, … and hands each one that must become durable
//! to a small pool of sync threads *after* writing it. A sync thread calls `fdatasync`;
//! when that returns, every byte written before the call began is durable — its own batch
//! and all earlier ones. So the state keeps a watermark, `durable` = the highest batch whose
//! sync finished, and releases the completions of every batch up to it in batch order:
//! callers are answered and the rows handed to the indexer in seq order, whichever sync
//! finished first.
//!
//! Why a pool: on the disks we measured, concurrent `fdatasync`s of one file share device
//! cache flushes, so a batch written while an earlier sync is in flight no longer waits for
//! that sync *and* its own (p99 of a lone sync loop 8 ms, four concurrent ones 3 ms; see
//! docs/benchmarks.md).
//!
//! A failed sync fails the batches not yet known durable up to its own; buffered records
//! that nobody waits for report the failure to the next flush.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

use tokio::sync::oneshot;

use super::index::IndexRow;
use super::writer::{FlushAck, copy_error};
use toolgate_store::{StoreError, StoreResult};

/// fsyncs in flight at once at most.
const SYNC_THREADS: usize = 4;

/// What becomes true when a batch is durable.
#[derive(Default)]
pub(crate) struct Completion {
    /// Durable appends, with their seq.
    pub acks: Vec<(u64, oneshot::Sender<StoreResult<u64>>)>,
    pub flushes: Vec<FlushAck>,
    /// Rows for the indexer (it only learns fsynced records).
    pub rows: Vec<IndexRow>,
}

#[derive(Default)]
struct State {
    /// Highest batch whose sync finished.
    durable: u64,
    pending: BTreeMap<u64, Completion>,
    /// A sync failed for records nobody waited for; the next flush reports it.
    buffered_failure: Option<String>,
}

struct Shared {
    file: Arc<File>,
    path: PathBuf,
    state: Mutex<State>,
    indexer: Sender<Vec<IndexRow>>,
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        // Answering callers cannot panic midway; a poisoned lock still holds a usable state.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// One sync for everything written before batch `batch` was submitted.
    fn sync(&self, batch: u64) {
        let began = std::time::Instant::now();
        let outcome = self.file.sync_data();
        toolgate_telemetry::metrics()
            .audit_sync
            .record(began.elapsed().as_secs_f64(), &[]);
        let outcome = outcome.map_err(|e| {
            StoreError::io(
                format!("cannot sync the audit log {}", self.path.display()),
                e,
            )
        });
        let mut state = self.state();
        match outcome {
            Ok(()) => {
                state.durable = state.durable.max(batch);
                let durable = state.durable;
                while let Some(entry) = state.pending.first_entry() {
                    if *entry.key() > durable {
                        break;
                    }
                    let done = entry.remove();
                    for (seq, ack) in done.acks {
                        drop(ack.send(Ok(seq)));
                    }
                    let failure = if done.flushes.is_empty() {
                        None
                    } else {
                        state.buffered_failure.take()
                    };
                    for flush in done.flushes {
                        flush.send(match &failure {
                            Some(msg) => Err(StoreError::WriterStopped(msg.clone())),
                            None => Ok(()),
                        });
                    }
                    if !done.rows.is_empty() {
                        // The indexer only stops when the log is dropped; rows lost then
                        // are caught up from the file on the next open.
                        let _ = self.indexer.send(done.rows);
                    }
                }
            }
            Err(err) => {
                let failed: Vec<u64> = state.pending.range(..=batch).map(|(b, _)| *b).collect();
                for b in failed {
                    let Some(done) = state.pending.remove(&b) else {
                        continue;
                    };
                    if done.acks.is_empty() && done.flushes.is_empty() {
                        state.buffered_failure = Some(err.to_string());
                    }
                    for (_, ack) in done.acks {
                        drop(ack.send(Err(copy_error(&err))));
                    }
                    for flush in done.flushes {
                        flush.send(Err(copy_error(&err)));
                    }
                }
            }
        }
    }
}

/// The pool of sync threads and the completions waiting for them.
pub(crate) struct Syncer {
    shared: Arc<Shared>,
    jobs: Option<Sender<u64>>,
    threads: Vec<JoinHandle<()>>,
    next_batch: u64,
}

impl Syncer {
    pub(crate) fn start(
        file: Arc<File>,
        path: PathBuf,
        indexer: Sender<Vec<IndexRow>>,
    ) -> StoreResult<Self> {
        let shared = Arc::new(Shared {
            file,
            path,
            state: Mutex::new(State::default()),
            indexer,
        });
        let (jobs, rx) = mpsc::channel::<u64>();
        let rx = Arc::new(Mutex::new(rx));
        let mut threads = Vec::with_capacity(SYNC_THREADS);
        for i in 0..SYNC_THREADS {
            let (worker, rx) = (Arc::clone(&shared), Arc::clone(&rx));
            let thread = std::thread::Builder::new()
                .name(format!("toolgate-audit-sync-{i}"))
                .spawn(move || run(&worker, &rx))
                .map_err(|e| {
                    StoreError::io(
                        format!("cannot start a sync thread for {}", shared.path.display()),
                        e,
                    )
                })?;
            threads.push(thread);
        }
        Ok(Syncer {
            shared,
            jobs: Some(jobs),
            threads,
            next_batch: 0,
        })
    }

    /// Registers what becomes true once everything written so far is durable; with `sync`,
    /// starts a sync for it, otherwise it waits for a later sync.
    pub(crate) fn submit(&mut self, completion: Completion, sync: bool) {
        self.next_batch += 1;
        let batch = self.next_batch;
        self.shared.state().pending.insert(batch, completion);
        if sync && let Some(jobs) = &self.jobs {
            // The threads only stop when this sender is dropped.
            let _ = jobs.send(batch);
        }
    }

    /// The failure of a sync nobody waited for, once.
    pub(crate) fn take_buffered_failure(&self) -> Option<String> {
        self.shared.state().buffered_failure.take()
    }
}

impl Drop for Syncer {
    /// Syncs whatever is still pending, then lets the threads finish their queue and exit.
    fn drop(&mut self) {
        if !self.shared.state().pending.is_empty() {
            self.submit(Completion::default(), true);
        }
        drop(self.jobs.take());
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

fn run(shared: &Shared, jobs: &Mutex<Receiver<u64>>) {
    loop {
        let job = jobs.lock().unwrap_or_else(PoisonError::into_inner).recv();
        match job {
            Ok(batch) => shared.sync(batch),
            Err(_) => return,
        }
    }
}
