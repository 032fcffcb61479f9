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
//! records off a chain shows; chains are registered in order (`roster`), so deleting
//! a whole chain shows too. See docs/audit.md.
//!
//! # Acknowledgement
//! Durable: a record is acknowledged once the transaction holding it committed (PostgreSQL's
//! commit is durable with its default `synchronous_commit`). Buffered: once queued; a failed
//! batch is reported by the next flush. A batch the database refused for its data (a value it
//! cannot hold, a constraint) is written again record by record, each in its own
//! transaction: only the records refused fail, and the rest of the batch lands — one caller's
//! bad record never costs the others theirs. A batch that failed otherwise (the connection)
//! is not retried: its callers are told (`unavailable`) and the chain goes on from the last
//! committed head.

use tokio::sync::{mpsc, oneshot};

use super::chain::{GENESIS_HASH, decode_keyed_line, encode_line};
use super::index::IndexFields;
use super::key::AuditKey;
use super::query::AuditQuery;
use super::record::StoredRecord;
use toolgate_store::pg::{PgPool, from_ms, ms, pg_error};
use toolgate_store::{StoreError, StoreResult};

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

/// One record as stored: where, its line, and (from the database) its query columns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainRow {
    pub chain: String,
    pub seq: u64,
    pub line: String,
    /// The columns queries filter on; `None` in an export, which has only the line.
    pub columns: Option<RowColumns>,
}

/// The query columns of a row, which must say what its line says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowColumns {
    pub kind: String,
    pub ts_us: Option<i64>,
    pub call_id: String,
    pub session: String,
    pub principal: String,
    pub tool: String,
    pub outcome: String,
}

impl RowColumns {
    /// The names of the columns that differ from what `fields` (taken from the line) say.
    pub(crate) fn differing(&self, fields: &IndexFields) -> Vec<&'static str> {
        let pairs = [
            ("kind", self.kind == fields.kind),
            ("ts_us", self.ts_us == fields.ts_us),
            ("call_id", self.call_id == fields.call_id),
            ("session", self.session == fields.session),
            ("principal", self.principal == fields.principal),
            ("tool", self.tool == fields.tool),
            ("outcome", self.outcome == fields.outcome),
        ];
        pairs
            .into_iter()
            .filter(|(_, same)| !same)
            .map(|(name, _)| name)
            .collect()
    }
}

/// Records as stored, chain by chain, in seq order.
pub type ChainRows = Vec<ChainRow>;

/// A chain's position: the last committed record.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Tip {
    seq: u64,
    hash: String,
}

/// The text a chain head's MAC covers; with `known` (schema 12), the highest chain ordinal
/// its writer saw.
pub(crate) fn head_message(chain: &str, seq: u64, hash: &str, known: Option<u64>) -> String {
    match known {
        Some(known) => format!("toolgate-audit-head\n{chain}\n{seq}\n{hash}\nknown {known}"),
        None => format!("toolgate-audit-head\n{chain}\n{seq}\n{hash}"),
    }
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
    /// Starts a new chain in the database — registered as the next of the cluster's chains
    /// (`roster`) — and its writer task.
    pub async fn open(pool: PgPool, key: Option<AuditKey>) -> StoreResult<PgAudit> {
        let chain = uuid::Uuid::new_v4().simple().to_string();
        let now = (toolgate_store::clock::system_clock())();
        let mut client = pool.get().await?;
        let tx = client.transaction().await.map_err(pg_error)?;
        tx.execute(
            "SELECT pg_advisory_xact_lock($1)",
            &[&super::roster::LOCK_KEY],
        )
        .await
        .map_err(pg_error)?;
        let last = tx
            .query_opt(
                "SELECT chain, ordinal FROM audit_chains WHERE ordinal IS NOT NULL \
                 ORDER BY ordinal DESC LIMIT 1",
                &[],
            )
            .await
            .map_err(pg_error)?;
        let (previous, ordinal) = match &last {
            Some(row) => (Some(row.get::<_, String>(0)), from_ms(row.get(1)) + 1),
            None => (None, 1),
        };
        let mac = |message: String| key.as_ref().map(|k| k.mac(message.as_bytes()));
        let link_mac = mac(super::roster::link_message(
            ordinal,
            &chain,
            previous.as_deref(),
        ));
        let head_mac = mac(head_message(&chain, 0, GENESIS_HASH, Some(ordinal)));
        let ordinal_col = ms(ordinal);
        tx.execute(
            "INSERT INTO audit_chains (chain, started_at_ms, head_seq, head_hash, head_mac, \
             ordinal, link_mac, known) VALUES ($1, $2, 0, $3, $4, $5, $6, $5)",
            &[
                &chain,
                &ms(now),
                &GENESIS_HASH,
                &head_mac,
                &ordinal_col,
                &link_mac,
            ],
        )
        .await
        .map_err(pg_error)?;
        tx.commit().await.map_err(pg_error)?;
        drop(client);
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
        let began = std::time::Instant::now();
        let (records, acks): (Vec<_>, Vec<_>) = batch
            .into_iter()
            .map(|(body, fields, ack)| ((body, fields), ack))
            .unzip();
        let (rows, tip) = self.encode(&records);
        let inserted = self.insert(&rows, &tip).await;
        toolgate_telemetry::metrics()
            .audit_sync
            .record(began.elapsed().as_secs_f64(), &[]);
        match inserted {
            Ok(()) => {
                self.tip = tip;
                for (row, ack) in rows.iter().zip(acks) {
                    if let Some(ack) = ack {
                        let _ = ack.send(Ok(row.seq as u64));
                    }
                }
            }
            // Nothing of it committed, and something in it is to blame: write it record by
            // record, so only the culprits fail.
            Err(Refused::Data(e)) if records.len() > 1 => {
                tracing::warn!(chain = %self.chain, error = %e, "an audit batch was refused; writing its records one by one");
                for (record, ack) in records.into_iter().zip(acks) {
                    self.commit_one(record, ack).await;
                }
            }
            Err(Refused::Data(e)) => {
                tracing::warn!(chain = %self.chain, error = %e, "an audit record was refused");
                let why = format!("the audit log refused this record: {e}");
                self.fail(acks, &why);
            }
            Err(Refused::Other(e)) => {
                tracing::warn!(chain = %self.chain, error = %e, "audit records could not be committed");
                self.stale = true;
                let why = format!("the audit log could not be written to PostgreSQL: {e}");
                self.fail(acks, &why);
            }
        }
    }

    /// Chains `records` after the tip: the rows to insert and the tip after them.
    fn encode(&self, records: &[(String, IndexFields)]) -> (Vec<Row>, Tip) {
        let mut tip = self.tip.clone();
        let mut rows = Vec::with_capacity(records.len());
        for (body, fields) in records {
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
                fields: fields.clone(),
            });
        }
        (rows, tip)
    }

    /// Writes one record of a refused batch in a transaction of its own.
    async fn commit_one(
        &mut self,
        record: (String, IndexFields),
        ack: Option<oneshot::Sender<StoreResult<u64>>>,
    ) {
        if self.stale {
            self.fail(
                vec![ack],
                "an earlier record of its batch could not be written",
            );
            return;
        }
        let (rows, tip) = self.encode(std::slice::from_ref(&record));
        match self.insert(&rows, &tip).await {
            Ok(()) => {
                self.tip = tip;
                if let Some(ack) = ack {
                    let _ = ack.send(Ok(self.tip.seq));
                }
            }
            Err(Refused::Data(e)) => {
                tracing::warn!(chain = %self.chain, error = %e, "an audit record was refused");
                self.fail(
                    vec![ack],
                    &format!("the audit log refused this record: {e}"),
                );
            }
            Err(Refused::Other(e)) => {
                self.stale = true;
                let why = format!("the audit log could not be written to PostgreSQL: {e}");
                self.fail(vec![ack], &why);
            }
        }
    }

    /// Tells the callers behind `acks` their records failed (`why`); a buffered one is told by
    /// the next flush.
    fn fail(&mut self, acks: Vec<Option<oneshot::Sender<StoreResult<u64>>>>, why: &str) {
        let mut unacknowledged = false;
        for ack in acks {
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
    /// The head names the newest chain ordinal seen in the same transaction.
    async fn insert(&self, rows: &[Row], tip: &Tip) -> Result<(), Refused> {
        let mut client = self.pool.get().await.map_err(Refused::Other)?;
        let tx = client.transaction().await.map_err(Refused::other)?;
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
        .map_err(Refused::classify)?;
        let known: Option<i64> = tx
            .query_one("SELECT max(ordinal) FROM audit_chains", &[])
            .await
            .map_err(Refused::other)?
            .get(0);
        let known = known.map(from_ms);
        let head_mac = self
            .key
            .as_ref()
            .map(|k| k.mac(head_message(&self.chain, tip.seq, &tip.hash, known).as_bytes()));
        let moved = tx
            .execute(
                "UPDATE audit_chains SET head_seq = $2, head_hash = $3, head_mac = $4, known = $6 \
                 WHERE chain = $1 AND head_seq = $5",
                &[
                    &self.chain,
                    &i64::try_from(tip.seq).unwrap_or(i64::MAX),
                    &tip.hash,
                    &head_mac,
                    &i64::try_from(self.tip.seq).unwrap_or(i64::MAX),
                    &known.map(ms),
                ],
            )
            .await
            .map_err(Refused::other)?;
        if moved != 1 {
            return Err(Refused::Other(StoreError::Corrupt(format!(
                "the head of audit chain {} is not where its writer left it (seq {})",
                self.chain, self.tip.seq
            ))));
        }
        tx.commit().await.map_err(Refused::other)
    }
}

/// Why a batch was not committed.
enum Refused {
    /// The database refused the rows' data (SQLSTATE classes 22 and 23, but a duplicate
    /// key): the transaction certainly did not commit, and some record is to blame.
    Data(StoreError),
    /// Anything else (the connection, the head moved): whether it committed may be unknown.
    Other(StoreError),
}

impl Refused {
    fn other(e: tokio_postgres::Error) -> Refused {
        Refused::Other(pg_error(e))
    }

    fn classify(e: tokio_postgres::Error) -> Refused {
        let data = e.code().is_some_and(|c| {
            let code = c.code();
            (code.starts_with("22") || code.starts_with("23"))
                && *c != tokio_postgres::error::SqlState::UNIQUE_VIOLATION
        });
        if data {
            Refused::Data(pg_error(e))
        } else {
            Refused::Other(pg_error(e))
        }
    }
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::Data(e) | Refused::Other(e) => e.fmt(f),
        }
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
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ChainHead {
    pub chain: String,
    pub seq: u64,
    pub hash: String,
    pub mac: Option<String>,
    /// Its place among the cluster's chains (1, 2, …); `None` for chains opened before
    /// schema 12.
    pub ordinal: Option<u64>,
    /// MAC linking it to the chain registered before it (`roster`).
    pub link_mac: Option<String>,
    /// The highest ordinal its writer saw when it last moved the head (under `mac`).
    pub known: Option<u64>,
}

/// Every chain's head and every record, chain by chain in seq order, as stored.
pub async fn dump(pool: &PgPool) -> StoreResult<(Vec<ChainHead>, ChainRows)> {
    let client = pool.get().await?;
    let heads = client
        .query(
            "SELECT chain, head_seq, head_hash, head_mac, ordinal, link_mac, known \
             FROM audit_chains ORDER BY started_at_ms, chain",
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
            ordinal: r.get::<_, Option<i64>>(4).map(from_ms),
            link_mac: r.get(5),
            known: r.get::<_, Option<i64>>(6).map(from_ms),
        })
        .collect();
    let records = client
        .query(
            "SELECT chain, seq, line, kind, ts_us, call_id, session, principal, tool, outcome \
             FROM audit_records ORDER BY chain, seq",
            &[],
        )
        .await
        .map_err(pg_error)?
        .iter()
        .map(|r| ChainRow {
            chain: r.get(0),
            seq: from_ms(r.get(1)),
            line: r.get(2),
            columns: Some(RowColumns {
                kind: r.get(3),
                ts_us: r.get(4),
                call_id: r.get(5),
                session: r.get(6),
                principal: r.get(7),
                tool: r.get(8),
                outcome: r.get(9),
            }),
        })
        .collect();
    Ok((heads, records))
}
