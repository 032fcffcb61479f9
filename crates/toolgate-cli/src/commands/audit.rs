//! `toolgate audit tail | query | verify`, and where the audit key lives. Reads go through
//! the SQLite index, caught up from the JSONL file first, so they see records written by
//! other processes.

use std::time::SystemTime;

use anyhow::{Context, bail};
use serde_json::{Value, json};
use std::io::Write;

use toolgate_app::config::StoreLocation;
use toolgate_audit::cluster::{self, ClusterReport};
use toolgate_audit::{
    AuditIndex, AuditKey, AuditQuery, StoredRecord, pg, verify_export, verify_with,
};
use toolgate_store::pg::PgPool;

use crate::cli::{AuditCommand, QueryArgs};
use crate::output;
use toolgate_app::Config;
use toolgate_app::stores::ensure_data_dir;

/// Widest principal, tool or outcome cell of the table.
const MAX_NAME_CELL: usize = 40;

fn to_json(r: &StoredRecord) -> Value {
    let mut v = serde_json::to_value(&r.record).unwrap_or(Value::Null);
    if let Value::Object(m) = &mut v {
        m.insert("seq".into(), json!(r.seq));
        m.insert("hash".into(), json!(r.hash));
    }
    v
}

fn print(records: &[StoredRecord], as_json: bool) -> anyhow::Result<()> {
    if as_json {
        let list: Vec<Value> = records.iter().map(to_json).collect();
        return output::json(&list);
    }
    // Every field of a record may be as long as a caller made it (an unknown tool is audited
    // under the name it was called by): each cell is cut, so no column grows past what a
    // terminal shows, nor past what the formatter can pad.
    let rows: Vec<Vec<String>> = records
        .iter()
        .map(|r| {
            let rec = &r.record;
            let detail = rec
                .error
                .clone()
                .unwrap_or_else(|| output::short(&rec.arguments.to_string(), 60));
            vec![
                r.seq.to_string(),
                output::short(&rec.ts, 32),
                rec.kind.as_str().to_owned(),
                output::short(&rec.principal, MAX_NAME_CELL),
                output::short(&rec.tool, MAX_NAME_CELL),
                output::short(rec.outcome.as_str(), MAX_NAME_CELL),
                rec.duration_us
                    .map(|d| format!("{:.1}ms", d as f64 / 1000.0))
                    .unwrap_or_default(),
                output::short(&detail, 80),
            ]
        })
        .collect();
    output::table(
        &[
            "SEQ",
            "TIME",
            "KIND",
            "PRINCIPAL",
            "TOOL",
            "OUTCOME",
            "TOOK",
            "DETAIL",
        ],
        &rows,
    );
    Ok(())
}

/// `10m`, `2h`, `1d` ago, or an RFC 3339 time.
fn parse_time(s: &str) -> anyhow::Result<SystemTime> {
    if let Ok(d) = humantime::parse_duration(s) {
        return Ok(SystemTime::now()
            .checked_sub(d)
            .unwrap_or(SystemTime::UNIX_EPOCH));
    }
    humantime::parse_rfc3339_weak(s).with_context(|| {
        format!("`{s}` is neither a duration like 10m nor a time like 2026-12-02T10:00:00Z")
    })
}

fn open_index(settings: &Config) -> anyhow::Result<AuditIndex> {
    ensure_data_dir(settings)?;
    AuditIndex::open(&settings.audit_path(), &settings.db_path()).with_context(|| {
        format!(
            "cannot open the audit index {}",
            settings.db_path().display()
        )
    })
}

/// The cluster store's pool when `[store] url` is set.
fn cluster(settings: &Config) -> anyhow::Result<Option<PgPool>> {
    match settings.store() {
        StoreLocation::Embedded { .. } => Ok(None),
        StoreLocation::Postgres(url) => Ok(Some(PgPool::new(url)?)),
    }
}

/// Records matching `q`, from the cluster's log or the embedded index.
async fn find(settings: &Config, q: &AuditQuery) -> anyhow::Result<Vec<StoredRecord>> {
    Ok(match cluster(settings)? {
        Some(pool) => pg::query(&pool, q).await?,
        None => open_index(settings)?.query(q)?,
    })
}

/// The audit key, if this host has one.
fn existing_key(settings: &Config) -> anyhow::Result<(std::path::PathBuf, Option<AuditKey>)> {
    let dir = toolgate_app::stores::key_dir(settings)?;
    let key = AuditKey::open_existing(&dir)
        .with_context(|| format!("cannot read the audit key in {}", dir.display()))?;
    Ok((dir, key))
}

/// Prints a cluster verification; 0 when sound, 4 otherwise.
fn report_cluster(
    what: &str,
    report: &ClusterReport,
    key: Option<&AuditKey>,
    json: bool,
) -> anyhow::Result<i32> {
    if json {
        output::json(&json!({
            "ok": report.ok(),
            "chains": report.chains,
            "records": report.records,
            "problems": report.problems,
            "keyed": key.is_some(),
        }))?;
    } else if report.ok() {
        output::line(&format!(
            "ok: {what}: {} records in {} chains, every chain intact{}",
            report.records,
            report.chains,
            if key.is_some() {
                ", MACs and heads checked"
            } else {
                " (no audit key here: MACs not checked)"
            }
        ));
    } else {
        output::line(&format!(
            "FAILED: {what}: {} problems",
            report.problems.len()
        ));
        for p in &report.problems {
            output::line(&format!("  chain {} seq {}: {}", p.chain, p.seq, p.reason));
        }
    }
    Ok(if report.ok() { 0 } else { 4 })
}

async fn export(settings: &Config, out: Option<std::path::PathBuf>) -> anyhow::Result<i32> {
    let mut sink: Box<dyn std::io::Write> = match &out {
        Some(path) => Box::new(std::io::BufWriter::new(
            std::fs::File::create(path)
                .with_context(|| format!("cannot create {}", path.display()))?,
        )),
        None => Box::new(std::io::BufWriter::new(crate::output::StdoutSink)),
    };
    match cluster(settings)? {
        Some(pool) => {
            let (heads, records) = pg::dump(&pool).await?;
            cluster::export(&heads, &records, &mut sink)?;
        }
        None => {
            let path = settings.audit_path();
            let (dir, key) = existing_key(settings)?;
            let key = key.with_context(|| {
                format!(
                    "no audit key in {}: an export of {} could not be vouched for",
                    dir.display(),
                    path.display()
                )
            })?;
            toolgate_audit::export(&path, &key, &mut sink)
                .with_context(|| format!("cannot export the audit log {}", path.display()))?;
        }
    }
    sink.flush()?;
    Ok(0)
}

async fn query(settings: &Config, a: QueryArgs) -> anyhow::Result<i32> {
    let q = AuditQuery {
        since: a.since.as_deref().map(parse_time).transpose()?,
        until: a.until.as_deref().map(parse_time).transpose()?,
        tool: a.tool,
        principal: a.principal,
        session: a.session,
        outcome: a.outcome,
        call_id: a.call_id,
        kind: None,
        limit: Some(a.limit),
        newest_first: false,
    };
    let records = find(settings, &q).await?;
    print(&records, a.json)?;
    Ok(0)
}

pub async fn run(settings: &Config, cmd: AuditCommand) -> anyhow::Result<i32> {
    match cmd {
        AuditCommand::Export { out } => export(settings, out).await,
        AuditCommand::Verify {
            json,
            file: Some(file),
            ..
        } => {
            // A device or a pipe (`/dev/zero`) has no end to read to: refused before reading.
            let meta = std::fs::metadata(&file)
                .with_context(|| format!("cannot read {}", file.display()))?;
            anyhow::ensure!(
                meta.is_file(),
                "{} is not a regular file: verify --file reads an export or a copy of a log",
                file.display()
            );
            let (_, key) = existing_key(settings)?;
            match cluster::read_export(&file)? {
                Some((heads, records)) => {
                    let report = cluster::check(&heads, &records, key.as_ref());
                    report_cluster(&file.display().to_string(), &report, key.as_ref(), json)
                }
                None => {
                    let report = verify_export(&file, key.as_ref())?;
                    let ok = report.ok();
                    if json {
                        output::json(&json!({"ok": ok, "records": report.records,
                            "first_bad": report.first_bad.as_ref().map(|b| json!({
                                "line": b.line, "seq": b.seq, "reason": b.reason}))}))?;
                    } else if let Some(bad) = &report.first_bad {
                        output::line(&format!(
                            "FAILED: {}: line {}: {}",
                            file.display(),
                            bad.line,
                            bad.reason
                        ));
                    } else {
                        output::line(&format!("ok: {} records, chain intact", report.records));
                        if key.is_none() {
                            output::line(
                                "note: no audit key here: MACs and the export head not \
                                 checked, so a forged file would pass",
                            );
                        }
                    }
                    Ok(if ok { 0 } else { 4 })
                }
            }
        }
        AuditCommand::Verify {
            json, file: None, ..
        } if settings.store().is_postgres() => {
            let (_, key) = existing_key(settings)?;
            let pool = cluster(settings)?.context("the store is PostgreSQL")?;
            let (heads, records) = pg::dump(&pool).await?;
            let report = cluster::check(&heads, &records, key.as_ref());
            report_cluster("the cluster's audit log", &report, key.as_ref(), json)
        }
        AuditCommand::Tail { lines, json } => {
            let q = AuditQuery {
                limit: Some(lines),
                newest_first: true,
                ..AuditQuery::default()
            };
            let mut records = find(settings, &q).await?;
            records.reverse();
            print(&records, json)?;
            Ok(0)
        }
        AuditCommand::Query(a) => query(settings, a).await,
        AuditCommand::Verify {
            json,
            file: None,
            accept_evidence,
        } => {
            let path = settings.audit_path();
            let dir = toolgate_app::stores::key_dir(settings)?;
            let key = AuditKey::open_existing(&dir)
                .with_context(|| format!("cannot read the audit key in {}", dir.display()))?;
            if accept_evidence {
                let key = key.as_ref().with_context(|| {
                    format!(
                        "no audit key in {}: evidence is anchored only with one",
                        dir.display()
                    )
                })?;
                for name in toolgate_audit::accept_evidence(&path, key)? {
                    if !json {
                        output::line(&format!("accepted evidence {name} (keep the file)"));
                    }
                }
            }
            let db = settings.db_path();
            let report = if path.exists() {
                verify_with(&path, db.exists().then_some(db.as_path()), key.as_ref())?
            } else {
                // A missing log is only news when the anchor says it held records.
                match key.as_ref().map(|k| verify_with(&path, None, Some(k))) {
                    Some(Ok(report)) if !report.ok() => report,
                    _ => bail!("no audit log at {} yet", path.display()),
                }
            };
            let mut first_bad = report.first_bad.clone();
            if first_bad.is_none() && key.is_none() && report.records > report.unkeyed {
                first_bad = Some(toolgate_audit::BadRecord {
                    line: 1,
                    seq: None,
                    reason: format!(
                        "the records carry MACs but there is no audit key in {} to check them",
                        dir.display()
                    ),
                });
            }
            if json {
                output::json(&json!({
                    "ok": first_bad.is_none(),
                    "records": report.records,
                    "head": report.head,
                    "first_bad": first_bad.as_ref().map(|b| json!({
                        "line": b.line, "seq": b.seq, "reason": b.reason})),
                    "keyed": report.keyed,
                    "unkeyed": report.unkeyed,
                    "anchored": report.anchored,
                    "evidence": report.evidence,
                }))?;
            } else if let Some(bad) = &first_bad {
                let seq = bad.seq.map(|s| format!(" (seq {s})")).unwrap_or_default();
                output::line(&format!(
                    "FAILED: {}: line {}{seq}: {} — {} records before it verified",
                    path.display(),
                    bad.line,
                    bad.reason,
                    report.records
                ));
            } else {
                output::line(&format!(
                    "ok: {} records, chain intact, head {}",
                    report.records,
                    report.head.as_deref().unwrap_or("(empty)")
                ));
                if report.unkeyed > 0 {
                    output::line(&format!(
                        "note: {} records predate the audit key; only the hash chain and the \
                         anchor cover them",
                        report.unkeyed
                    ));
                }
                if key.is_some() && report.anchored.is_none() {
                    output::line(
                        "note: no head anchor for this log (a copy, or never opened keyed): \
                         records cut from its end cannot be detected",
                    );
                }
            }
            Ok(if first_bad.is_none() { 0 } else { 4 })
        }
    }
}
