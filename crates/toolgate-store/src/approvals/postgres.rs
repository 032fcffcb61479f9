//! The cluster backend: the approval tables in PostgreSQL (schema 1, `pg/migrations`), shared
//! by every replica. Each state change is one statement whose `WHERE` checks the state it
//! changes, or one transaction that locks the row (`SELECT … FOR UPDATE`), so two replicas
//! racing cannot both win. Every committed change fires the `toolgate_approvals`
//! notification (a trigger), which the replicas' change feeds hear.

use async_trait::async_trait;
use tokio_postgres::Row;

use super::backend::ApprovalBackend;
use super::decide::{
    check_approval, check_open, consumed_or_why, grant_row, not_found, pattern_text,
};
use super::schema::{APPROVAL_COLUMNS, GRANT_COLUMNS, RawApproval, RawGrant};
use super::{ApprovalRequest, ApprovalStatus, Decision, Grant, NewApproval};
use crate::pg::{PgPool, from_ms, ms, pg_error};
use crate::{StoreError, StoreResult};

/// The approval tables of one PostgreSQL database.
#[derive(Debug, Clone)]
pub struct PgApprovals {
    pool: PgPool,
}

impl PgApprovals {
    /// Over `pool`, whose schema is migrated ([`crate::pg::migrate`]).
    pub fn new(pool: PgPool) -> Self {
        PgApprovals { pool }
    }
}

fn raw_approval(row: &Row) -> RawApproval {
    RawApproval {
        id: row.get(0),
        created_at_ms: from_ms(row.get(1)),
        expires_at_ms: from_ms(row.get(2)),
        status: row.get(3),
        principal: row.get(4),
        session: row.get(5),
        role: row.get(6),
        tool: row.get(7),
        risk: row.get(8),
        args_hash: row.get(9),
        arguments: row.get(10),
        requires_confirmation: row.get(11),
        decided_by: row.get(12),
        decided_at_ms: row.get::<_, Option<i64>>(13).map(from_ms),
        scope: row.get(14),
        pattern: row.get(15),
        reason: row.get(16),
        consumed: row.get(17),
        issuer: row.get(18),
        subject: row.get(19),
        decided_via: row.get(20),
    }
}

fn raw_grant(row: &Row) -> RawGrant {
    RawGrant {
        id: row.get(0),
        scope: row.get(1),
        principal: row.get(2),
        session: row.get(3),
        tool: row.get(4),
        args_hash: row.get(5),
        pattern: row.get(6),
        created_by: row.get(7),
        created_at_ms: from_ms(row.get(8)),
        approval_id: row.get(9),
    }
}

/// The `WHERE` clause of a listing by reported status (`$1` is now).
fn status_filter(status: Option<ApprovalStatus>) -> &'static str {
    match status {
        None => "$1::BIGINT IS NOT NULL",
        Some(ApprovalStatus::Pending) => "status = 'pending' AND expires_at_ms > $1",
        Some(ApprovalStatus::Expired) => {
            "(status = 'expired' OR (status = 'pending' AND expires_at_ms <= $1))"
        }
        Some(ApprovalStatus::Approved) => "status = 'approved' AND $1::BIGINT IS NOT NULL",
        Some(ApprovalStatus::Denied) => "status = 'denied' AND $1::BIGINT IS NOT NULL",
        Some(ApprovalStatus::Abandoned) => "status = 'abandoned' AND $1::BIGINT IS NOT NULL",
    }
}

async fn load(
    client: &impl deadpool_postgres::GenericClient,
    id: &str,
    now_ms: u64,
    lock: bool,
) -> StoreResult<Option<ApprovalRequest>> {
    let suffix = if lock { " FOR UPDATE" } else { "" };
    let row = client
        .query_opt(
            &format!("SELECT {APPROVAL_COLUMNS} FROM approvals WHERE id = $1{suffix}"),
            &[&id],
        )
        .await
        .map_err(pg_error)?;
    row.map(|r| raw_approval(&r).into_request(now_ms))
        .transpose()
}

#[async_trait]
impl ApprovalBackend for PgApprovals {
    async fn insert(&self, id: &str, new: &NewApproval, now_ms: u64) -> StoreResult<bool> {
        let ttl_ms = u64::try_from(new.ttl.as_millis()).unwrap_or(u64::MAX);
        let expires = ms(now_ms.saturating_add(ttl_ms));
        let arguments = serde_json::to_string(new.arguments.as_value())
            .map_err(|e| StoreError::Corrupt(format!("approval arguments are not JSON: {e}")))?;
        let client = self.pool.get().await?;
        let inserted = client
            .execute(
                "INSERT INTO approvals (id, created_at_ms, expires_at_ms, status, principal, \
                 session, role, tool, risk, args_hash, arguments, requires_confirmation, \
                 issuer, subject) \
                 VALUES ($1, $2, $3, 'pending', $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) \
                 ON CONFLICT (id) DO NOTHING",
                &[
                    &id,
                    &ms(now_ms),
                    &expires,
                    &new.principal.as_str(),
                    &new.session.as_str(),
                    &new.role.as_str(),
                    &new.tool,
                    &new.risk.as_str(),
                    &new.args_hash,
                    &arguments,
                    &new.requires_confirmation,
                    &new.issuer,
                    &new.subject,
                ],
            )
            .await
            .map_err(pg_error)?;
        Ok(inserted == 1)
    }

    async fn get(&self, id: &str, now_ms: u64) -> StoreResult<Option<ApprovalRequest>> {
        let client = self.pool.get().await?;
        load(&client, id, now_ms, false).await
    }

    async fn find_latest(
        &self,
        principal: &str,
        tool: &str,
        args_hash: &str,
        now_ms: u64,
    ) -> StoreResult<Option<ApprovalRequest>> {
        let client = self.pool.get().await?;
        let row = client
            .query_opt(
                &format!(
                    "SELECT {APPROVAL_COLUMNS} FROM approvals \
                     WHERE principal = $1 AND tool = $2 AND args_hash = $3 AND NOT consumed \
                     ORDER BY created_at_ms DESC, seq DESC LIMIT 1"
                ),
                &[&principal, &tool, &args_hash],
            )
            .await
            .map_err(pg_error)?;
        row.map(|r| raw_approval(&r).into_request(now_ms))
            .transpose()
    }

    async fn list(
        &self,
        status: Option<ApprovalStatus>,
        limit: usize,
        now_ms: u64,
    ) -> StoreResult<Vec<ApprovalRequest>> {
        let filter = status_filter(status);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let client = self.pool.get().await?;
        let rows = client
            .query(
                &format!(
                    "SELECT {APPROVAL_COLUMNS} FROM approvals WHERE {filter} \
                     ORDER BY created_at_ms DESC, seq DESC LIMIT $2"
                ),
                &[&ms(now_ms), &limit],
            )
            .await
            .map_err(pg_error)?;
        rows.iter()
            .map(|r| raw_approval(r).into_request(now_ms))
            .collect()
    }

    async fn consume(&self, id: &str, now_ms: u64) -> StoreResult<bool> {
        let client = self.pool.get().await?;
        let changed = client
            .execute(
                "UPDATE approvals SET consumed = TRUE \
                 WHERE id = $1 AND status = 'approved' AND NOT consumed",
                &[&id],
            )
            .await
            .map_err(pg_error)?;
        if changed == 1 {
            return Ok(true);
        }
        consumed_or_why(id, load(&client, id, now_ms, false).await?)
    }

    async fn retire(&self, id: &str, now_ms: u64) -> StoreResult<bool> {
        let client = self.pool.get().await?;
        let changed = client
            .execute(
                "UPDATE approvals SET consumed = TRUE, \
                   status = CASE WHEN status = 'pending' THEN 'expired' ELSE status END \
                 WHERE id = $1 AND NOT consumed AND (status IN ('denied', 'expired') \
                   OR (status = 'pending' AND expires_at_ms <= $2))",
                &[&id, &ms(now_ms)],
            )
            .await
            .map_err(pg_error)?;
        Ok(changed == 1)
    }

    async fn abandon(&self, id: &str, why: &str, now_ms: u64) -> StoreResult<bool> {
        let client = self.pool.get().await?;
        let changed = client
            .execute(
                "UPDATE approvals SET status = 'abandoned', consumed = TRUE, decided_at_ms = $2, \
                   reason = $3 \
                 WHERE id = $1 AND status = 'pending' AND NOT consumed AND expires_at_ms > $2",
                &[&id, &ms(now_ms), &why],
            )
            .await
            .map_err(pg_error)?;
        Ok(changed == 1)
    }

    async fn expire_due(&self, now_ms: u64) -> StoreResult<usize> {
        let client = self.pool.get().await?;
        let changed = client
            .execute(
                "UPDATE approvals SET status = 'expired' \
                 WHERE status = 'pending' AND expires_at_ms <= $1",
                &[&ms(now_ms)],
            )
            .await
            .map_err(pg_error)?;
        Ok(usize::try_from(changed).unwrap_or(usize::MAX))
    }

    async fn decide(
        &self,
        id: &str,
        decision: &Decision,
        now_ms: u64,
    ) -> StoreResult<ApprovalRequest> {
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await.map_err(pg_error)?;
        // The row lock makes the check and the update one step across replicas.
        let request = load(&tx, id, now_ms, true)
            .await?
            .ok_or_else(|| not_found(id))?;
        check_open(&request)?;
        if decision.approve {
            check_approval(&request, decision)?;
        }
        let pattern = pattern_text(id, decision)?;
        let status = if decision.approve {
            ApprovalStatus::Approved
        } else {
            ApprovalStatus::Denied
        };
        tx.execute(
            "UPDATE approvals SET status = $2, decided_by = $3, decided_at_ms = $4, scope = $5, \
             pattern = $6, reason = $7, decided_via = $8 WHERE id = $1",
            &[
                &id,
                &status.as_str(),
                &decision.decided_by,
                &ms(now_ms),
                &decision.scope.as_str(),
                &pattern,
                &decision.reason,
                &decision.via,
            ],
        )
        .await
        .map_err(pg_error)?;
        if let Some(g) = grant_row(&request, decision, pattern.as_deref()) {
            tx.execute(
                "INSERT INTO approval_grants (scope, principal, session, tool, args_hash, \
                 pattern, created_by, created_at_ms, approval_id) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                &[
                    &g.scope.as_str(),
                    &request.principal.as_str(),
                    &g.session,
                    &request.tool,
                    &g.args_hash,
                    &g.pattern,
                    &decision.decided_by,
                    &ms(now_ms),
                    &id,
                ],
            )
            .await
            .map_err(pg_error)?;
        }
        let decided = load(&tx, id, now_ms, false)
            .await?
            .ok_or_else(|| not_found(id))?;
        tx.commit().await.map_err(pg_error)?;
        Ok(decided)
    }

    async fn candidate_grants(
        &self,
        principal: &str,
        session: &str,
        tool: &str,
    ) -> StoreResult<Vec<Grant>> {
        let client = self.pool.get().await?;
        let rows = client
            .query(
                &format!(
                    "SELECT {GRANT_COLUMNS} FROM approval_grants \
                     WHERE principal = $1 AND tool = $2 \
                       AND ((scope = 'session' AND session = $3) OR scope = 'always') \
                     ORDER BY scope = 'session' DESC, id"
                ),
                &[&principal, &tool, &session],
            )
            .await
            .map_err(pg_error)?;
        rows.iter().map(|r| raw_grant(r).into_grant()).collect()
    }

    async fn list_grants(&self) -> StoreResult<Vec<Grant>> {
        let client = self.pool.get().await?;
        let rows = client
            .query(
                &format!("SELECT {GRANT_COLUMNS} FROM approval_grants ORDER BY id"),
                &[],
            )
            .await
            .map_err(pg_error)?;
        rows.iter().map(|r| raw_grant(r).into_grant()).collect()
    }

    async fn revoke_grant(&self, id: i64) -> StoreResult<bool> {
        let client = self.pool.get().await?;
        let changed = client
            .execute("DELETE FROM approval_grants WHERE id = $1", &[&id])
            .await
            .map_err(pg_error)?;
        Ok(changed == 1)
    }
}
