//! The audit log of a cluster, in PostgreSQL (`audit_records`, `audit_chains`; schema 4).
//!
//! # Chains for concurrent writers
//! Every process that writes (each replica, each `toolgate call`) appends to a chain of its
//! own, named by a random id taken when it opens the log. A chain has one writer, so its
//! records link without any lock shared between replicas: replicas never serialise on one
//! global tip, and a batch is one `INSERT` and one head `UPDATE` in a transaction. The records
//! are those of the embedded log — the same line, hash, `prev` link and keyed MAC — with the
//! chain's id inside the hashed text (`"chain":"…"`), so a record cannot be moved to another
//! chain. Each chain's head (last seq and hash) is kept MACed beside it, so cutting the newest
//! records off a chain shows. See docs/audit.md.
//!
//! # Acknowledgement
//! Durable: a record is acknowledged once the transaction holding it committed (PostgreSQL's
//! commit is durable with its default `synchronous_commit`). Buffered: once queued; a failed
//! batch is reported by the next flush. A batch that fails is not retried: its callers are
//! told (`unavailable`) and the chain goes on from the last committed head.

use tokio::sync::{mpsc, oneshot};

use super::chain::{GENESIS_HASH, decode_keyed_line, encode_line};
use super::index::IndexFields;
use super::key::AuditKey;
use super::query::AuditQuery;
use super::record::StoredRecord;
use crate::pg::{PgPool, from_ms, ms, pg_error};
use crate::{StoreError, StoreResult};

/// Records committed in one transaction at most.
const MAX_BATCH: usize = 512;

/// What the writer task is asked.
enum Command {
    Append {
        body: String,
        fields: IndexFields,
        ack: Option<oneshot::Sender<StoreResult<u64>>>,
    },
    Flush(oneshot::Sender<StoreResult<()>>),
}

/// One record waiting for its batch: its body, index fields and who waits for its seq.
type Pending = (
    String,
    IndexFields,
    Option<oneshot::Sender<StoreResult<u64>>>,
);

/// Records as stored: chain, seq, line (chain by chain, in seq order).
pub type ChainRows = Vec<(String, u64, String)>;

/// A chain's position: the last committed record.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Tip {
    seq: u64,
    hash: String,
}

/// The text a chain head's MAC covers.
pub(crate) fn head_message(chain: &str, seq: u64, hash: &str) -> String {
    format!("toolgate-audit-head\n{chain}\n{seq}\n{hash}")
}

/// This process's chain of the cluster's audit log.
pub struct PgAudit {
    tx: mpsc::UnboundedSender<Command>,
    chain: String,
    pool: PgPool,
}

impl std::fmt::Debug for PgAudit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgAudit")
            .field("chain", &self.chain)
            .finish_non_exhaustive()
    }
}

impl PgAudit {
    /// Starts a new chain in the database and its writer task.
    pub async fn open(pool: PgPool, key: Option<AuditKey>) -> StoreResult<PgAudit> {
        let chain = uuid::Uuid::new_v4().simple().to_string();
        let head_mac = key
            .as_ref()
            .map(|k| k.mac(head_message(&chain, 0, GENESIS_HASH).as_bytes()));
        let now = (crate::approvals::system_clock())();
        pool.get()
            .await?
            .execute(
                "INSERT INTO audit_chains (chain, started_at_ms, head_seq, head_hash, head_mac) \
                 VALUES ($1, $2, 0, $3, $4)",
                &[&chain, &ms(now), &GENESIS_HASH, &head_mac],
            )
            .await
            .map_err(pg_error)?;
        let (tx, rx) = mpsc::unbounded_channel();
        let writer = Writer {
            pool: pool.clone(),
            chain: chain.clone(),
            key,
            tip: Tip {
                seq: 0,
                hash: GENESIS_HASH.to_owned(),
            },
            failed: None,
            stale: false,
        };
        tokio::spawn(writer.run(rx));
        Ok(PgAudit { tx, chain, pool })
    }

    /// This process's chain id.
    pub fn chain(&self) -> &str {
        &self.chain
    }

    /// Queues a prepared record; with `durable`, returns its seq once committed.
    pub(crate) async fn append(
        &self,
        body: String,
        fields: IndexFields,
        durable: bool,
    ) -> StoreResult<u64> {
        let stopped = || StoreError::WriterStopped("the audit writer task has exited".into());
        super::queued();
        if !durable {
            self.tx
                .send(Command::Append {
                    body,
                    fields,
                    ack: None,
                })
                .map_err(|_| stopped())?;
            return Ok(0);
        }
        let (ack, done) = oneshot::channel();
        self.tx
            .send(Command::Append {
                body,
                fields,
                ack: Some(ack),
            })
            .map_err(|_| stopped())?;
        done.await.map_err(|_| stopped())?
    }

    /// Returns once everything queued before is committed; fails if a queued record could
    /// not be.
    pub async fn flush(&self) -> StoreResult<()> {
        let (ack, done) = oneshot::channel();
        self.tx
            .send(Command::Flush(ack))
            .map_err(|_| StoreError::WriterStopped("the audit writer task has exited".into()))?;
        done.await
            .map_err(|_| StoreError::WriterStopped("the audit writer task has exited".into()))?
    }

    /// The cluster's records matching `q` (all chains).
    pub async fn query(&self, q: &AuditQuery) -> StoreResult<Vec<StoredRecord>> {
        self.flush().await?;
        query(&self.pool, q).await
    }
}

struct Writer {
    pool: PgPool,
    chain: String,
    key: Option<AuditKey>,
    tip: Tip,
    /// The failure of a buffered batch, for the next flush.
    failed: Option<String>,
    /// A batch failed: whether it committed is unknown (the connection may have dropped after
    /// the commit was sent), so the head is read back before the next batch.
    stale: bool,
}

struct Row {
    seq: i64,
    line: String,
    fields: IndexFields,
}

impl Writer {
    async fn run(mut self, mut rx: mpsc::UnboundedReceiver<Command>) {
        while let Some(first) = rx.recv().await {
            let mut batch = Vec::new();
            let mut flush = None;
            let mut next = Some(first);
            while let Some(cmd) = next.take() {
                match cmd {
                    Command::Append { body, fields, ack } => batch.push((body, fields, ack)),
                    Command::Flush(ack) => {
                        flush = Some(ack);
                        break;
                    }
                }
                if batch.len() >= MAX_BATCH {
                    break;
                }
                next = rx.try_recv().ok();
            }
            if !batch.is_empty() {
                self.commit(batch).await;
            }
            if let Some(ack) = flush {
                let result = match self.failed.take() {
                    Some(why) => Err(StoreError::Unavailable(why)),
                    None => Ok(()),
                };
                let _ = ack.send(result);
            }
        }
    }

    async fn commit(&mut self, batch: Vec<Pending>) {
        super::dequeued(batch.len());
        if self.stale {
            match self.reload_tip().await {
                // Only forward: a head ahead of ours is our own batch that committed after
                // all; a head behind it (or another hash at our seq) was moved by someone
                // else, and writing on from there would bury what was removed.
                Ok(tip)
                    if tip.seq > self.tip.seq
                        || (tip.seq == self.tip.seq && tip.hash == self.tip.hash) =>
                {
                    self.tip = tip;
                    self.stale = false;
                }
                Ok(tip) => {
                    let why = format!(
                        "the head of audit chain {} was moved back (to seq {}, from {}): records \
                         may have been removed; nothing more is written to it — run \
                         `toolgate audit verify` and restart this replica",
                        self.chain, tip.seq, self.tip.seq
                    );
                    tracing::error!(chain = %self.chain, "{why}");
                    self.refuse(batch, &why);
                    return;
                }
                Err(e) => {
                    let why = format!("the audit log could not be written to PostgreSQL: {e}");
                    self.refuse(batch, &why);
                    return;
                }
            }
        }
        let mut tip = self.tip.clone();
        let mut rows = Vec::with_capacity(batch.len());
        let mut acks = Vec::with_capacity(batch.len());
        for (body, fields, ack) in batch {
            tip.seq += 1;
            // The chain's id is part of the hashed text: a record cannot change chains.
            let body = format!("\"chain\":\"{}\",{body}", self.chain);
            let mut line = Vec::with_capacity(body.len() + 200);
            tip.hash = encode_line(&mut line, tip.seq, &tip.hash, &body, self.key.as_ref());
            // A row holds the line without the file's newline.
            if line.last() == Some(&b'\n') {
                line.pop();
            }
            rows.push(Row {
                seq: i64::try_from(tip.seq).unwrap_or(i64::MAX),
                line: String::from_utf8_lossy(&line).into_owned(),
                fields,
            });
            acks.push((tip.seq, ack));
        }
        let began = std::time::Instant::now();
        let inserted = self.insert(&rows, &tip).await;
        toolgate_telemetry::metrics()
            .audit_sync
            .record(began.elapsed().as_secs_f64(), &[]);
        match inserted {
            Ok(()) => {
                self.tip = tip;
                for (seq, ack) in acks {
                    if let Some(ack) = ack {
                        let _ = ack.send(Ok(seq));
                    }
                }
            }
            Err(e) => {
                tracing::warn!(chain = %self.chain, error = %e, "audit records could not be committed");
                self.stale = true;
                let why = format!("the audit log could not be written to PostgreSQL: {e}");
                let mut unacknowledged = false;
                for (_, ack) in acks {
                    match ack {
                        Some(ack) => {
                            let _ = ack.send(Err(StoreError::Unavailable(why.clone())));
                        }
                        None => unacknowledged = true,
                    }
                }
                if unacknowledged {
                    self.failed = Some(why);
                }
            }
        }
    }

    /// Tells every caller of `batch` it failed (`why`), without trying to write it.
    fn refuse(&mut self, batch: Vec<Pending>, why: &str) {
        let mut unacknowledged = false;
        for (_, _, ack) in batch {
            match ack {
                Some(ack) => {
                    let _ = ack.send(Err(StoreError::Unavailable(why.to_owned())));
                }
                None => unacknowledged = true,
            }
        }
        if unacknowledged {
            self.failed = Some(why.to_owned());
        }
    }

    /// The chain's head as committed: where to go on after a batch of unknown fate.
    async fn reload_tip(&self) -> StoreResult<Tip> {
        let row = self
            .pool
            .get()
            .await?
            .query_one(
                "SELECT head_seq, head_hash FROM audit_chains WHERE chain = $1",
                &[&self.chain],
            )
            .await
            .map_err(pg_error)?;
        Ok(Tip {
            seq: from_ms(row.get(0)),
            hash: row.get(1),
        })
    }

    /// One transaction: the rows, and the chain's head moved to `tip` — only from where this
    /// writer left it, so a head moved by anything else is refused rather than overwritten.
    async fn insert(&self, rows: &[Row], tip: &Tip) -> StoreResult<()> {
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await.map_err(pg_error)?;
        let seqs: Vec<i64> = rows.iter().map(|r| r.seq).collect();
        let lines: Vec<&str> = rows.iter().map(|r| r.line.as_str()).collect();
        let kinds: Vec<&str> = rows.iter().map(|r| r.fields.kind).collect();
        let ts: Vec<Option<i64>> = rows.iter().map(|r| r.fields.ts_us).collect();
        let call_ids: Vec<&str> = rows.iter().map(|r| r.fields.call_id.as_str()).collect();
        let sessions: Vec<&str> = rows.iter().map(|r| r.fields.session.as_str()).collect();
        let principals: Vec<&str> = rows.iter().map(|r| r.fields.principal.as_str()).collect();
        let tools: Vec<&str> = rows.iter().map(|r| r.fields.tool.as_str()).collect();
        let outcomes: Vec<&str> = rows.iter().map(|r| r.fields.outcome).collect();
        tx.execute(
            "INSERT INTO audit_records \
             (chain, seq, line, kind, ts_us, call_id, session, principal, tool, outcome) \
             SELECT $1, * FROM UNNEST($2::BIGINT[], $3::TEXT[], $4::TEXT[], $5::BIGINT[], \
               $6::TEXT[], $7::TEXT[], $8::TEXT[], $9::TEXT[], $10::TEXT[])",
            &[
                &self.chain,
                &seqs,
                &lines,
                &kinds,
                &ts,
                &call_ids,
                &sessions,
                &principals,
                &tools,
                &outcomes,
            ],
        )
        .await
        .map_err(pg_error)?;
        let head_mac = self
            .key
            .as_ref()
            .map(|k| k.mac(head_message(&self.chain, tip.seq, &tip.hash).as_bytes()));
        let moved = tx
            .execute(
                "UPDATE audit_chains SET head_seq = $2, head_hash = $3, head_mac = $4 \
                 WHERE chain = $1 AND head_seq = $5",
                &[
                    &self.chain,
                    &i64::try_from(tip.seq).unwrap_or(i64::MAX),
                    &tip.hash,
                    &head_mac,
                    &i64::try_from(self.tip.seq).unwrap_or(i64::MAX),
                ],
            )
            .await
            .map_err(pg_error)?;
        if moved != 1 {
            return Err(StoreError::Corrupt(format!(
                "the head of audit chain {} is not where its writer left it (seq {})",
                self.chain, self.tip.seq
            )));
        }
        tx.commit().await.map_err(pg_error)
    }
}

/// The cluster's records matching `q`, in time order (newest first if asked).
pub async fn query(pool: &PgPool, q: &AuditQuery) -> StoreResult<Vec<StoredRecord>> {
    let mut clauses: Vec<String> = Vec::new();
    let mut params: Vec<Box<dyn tokio_postgres::types::ToSql + Sync + Send>> = Vec::new();
    let mut push = |clause: &str, value: Box<dyn tokio_postgres::types::ToSql + Sync + Send>| {
        params.push(value);
        clauses.push(clause.replace('?', &format!("${}", params.len())));
    };
    let micros = |t: std::time::SystemTime| {
        t.duration_since(std::time::UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
            .unwrap_or(0)
    };
    if let Some(t) = q.since {
        push("ts_us >= ?", Box::new(micros(t)));
    }
    if let Some(t) = q.until {
        push("ts_us <= ?", Box::new(micros(t)));
    }
    if let Some(v) = &q.tool {
        push("tool = ?", Box::new(v.clone()));
    }
    if let Some(v) = &q.principal {
        push("principal = ?", Box::new(v.clone()));
    }
    if let Some(v) = &q.session {
        push("session = ?", Box::new(v.clone()));
    }
    if let Some(v) = &q.outcome {
        push("outcome = ?", Box::new(v.as_str().to_owned()));
    }
    if let Some(v) = &q.call_id {
        push("call_id = ?", Box::new(v.clone()));
    }
    if let Some(v) = &q.kind {
        push("kind = ?", Box::new(v.as_str().to_owned()));
    }
    let filter = if clauses.is_empty() {
        "TRUE".to_owned()
    } else {
        clauses.join(" AND ")
    };
    let order = if q.newest_first { "DESC" } else { "ASC" };
    let limit = q
        .limit
        .map(|l| format!(" LIMIT {}", l.min(i64::MAX as usize)))
        .unwrap_or_default();
    let sql = format!(
        "SELECT line FROM audit_records WHERE {filter} \
         ORDER BY ts_us {order}, chain {order}, seq {order}{limit}"
    );
    let refs: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = params
        .iter()
        .map(|p| p.as_ref() as &(dyn tokio_postgres::types::ToSql + Sync))
        .collect();
    let client = pool.get().await?;
    let rows = client.query(&sql, &refs).await.map_err(pg_error)?;
    rows.iter()
        .map(|r| {
            let line: &str = r.get(0);
            decode_keyed_line(line.as_bytes())
                .map(|(stored, _)| stored)
                .map_err(|f| {
                    StoreError::Corrupt(format!("an audit row is unreadable: {}", f.reason()))
                })
        })
        .collect()
}

/// One chain's head as the database keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainHead {
    pub chain: String,
    pub seq: u64,
    pub hash: String,
    pub mac: Option<String>,
}

/// Every chain's head and every record, chain by chain in seq order, as stored.
pub async fn dump(pool: &PgPool) -> StoreResult<(Vec<ChainHead>, ChainRows)> {
    let client = pool.get().await?;
    let heads = client
        .query(
            "SELECT chain, head_seq, head_hash, head_mac FROM audit_chains ORDER BY started_at_ms, chain",
            &[],
        )
        .await
        .map_err(pg_error)?
        .iter()
        .map(|r| ChainHead {
            chain: r.get(0),
            seq: from_ms(r.get(1)),
            hash: r.get(2),
            mac: r.get(3),
        })
        .collect();
    let records = client
        .query(
            "SELECT chain, seq, line FROM audit_records ORDER BY chain, seq",
            &[],
        )
        .await
        .map_err(pg_error)?
        .iter()
        .map(|r| {
            (
                r.get::<_, String>(0),
                from_ms(r.get(1)),
                r.get::<_, String>(2),
            )
        })
        .collect();
    Ok((heads, records))
}
