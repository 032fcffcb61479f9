//! [`PgTokens`]: the tokens in PostgreSQL (`api_tokens`, schema 8), shared by every replica:
//! a token made or revoked through any of them admits or refuses its bearer on all of them
//! at their next read (each server re-reads twice a second).

use async_trait::async_trait;
use tokio_postgres::Row;

use super::{TokenBackend, TokenRecord};
use crate::StoreResult;
use crate::pg::{PgPool, from_ms, ms, pg_error};

const COLUMNS: &str = "id, sha256, principal, role, operator, note, created_at_ms, created_by, \
     expires_at_ms, revoked_at_ms, last_used_at_ms, replaces";

/// Issued tokens in one PostgreSQL database.
#[derive(Clone)]
pub struct PgTokens {
    pool: PgPool,
}

impl std::fmt::Debug for PgTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgTokens").finish_non_exhaustive()
    }
}

impl PgTokens {
    pub fn new(pool: PgPool) -> Self {
        PgTokens { pool }
    }
}

async fn insert(
    client: &impl deadpool_postgres::GenericClient,
    r: &TokenRecord,
) -> StoreResult<()> {
    client
        .execute(
            &format!(
                "INSERT INTO api_tokens ({COLUMNS}) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"
            ),
            &[
                &r.id,
                &r.sha256,
                &r.principal.as_str(),
                &r.role.as_str(),
                &r.operator,
                &r.note,
                &ms(r.created_at_ms),
                &r.created_by,
                &r.expires_at_ms.map(ms),
                &r.revoked_at_ms.map(ms),
                &r.last_used_at_ms.map(ms),
                &r.replaces,
            ],
        )
        .await
        .map_err(pg_error)?;
    Ok(())
}

fn record(row: &Row) -> TokenRecord {
    TokenRecord {
        id: row.get(0),
        sha256: row.get(1),
        principal: row.get::<_, String>(2).into(),
        role: row.get::<_, String>(3).into(),
        operator: row.get(4),
        note: row.get(5),
        created_at_ms: from_ms(row.get(6)),
        created_by: row.get(7),
        expires_at_ms: row.get::<_, Option<i64>>(8).map(from_ms),
        revoked_at_ms: row.get::<_, Option<i64>>(9).map(from_ms),
        last_used_at_ms: row.get::<_, Option<i64>>(10).map(from_ms),
        replaces: row.get(11),
    }
}

#[async_trait]
impl TokenBackend for PgTokens {
    async fn insert(&self, record: TokenRecord) -> StoreResult<()> {
        let client = self.pool.get().await?;
        insert(&client, &record).await
    }

    async fn list(&self) -> StoreResult<Vec<TokenRecord>> {
        let client = self.pool.get().await?;
        let rows = client
            .query(
                &format!("SELECT {COLUMNS} FROM api_tokens ORDER BY created_at_ms DESC, id"),
                &[],
            )
            .await
            .map_err(pg_error)?;
        Ok(rows.iter().map(record).collect())
    }

    async fn revoke(&self, id: &str, at_ms: u64) -> StoreResult<bool> {
        let client = self.pool.get().await?;
        let n = client
            .execute(
                "UPDATE api_tokens SET revoked_at_ms = $2 WHERE id = $1 AND revoked_at_ms IS NULL",
                &[&id, &ms(at_ms)],
            )
            .await
            .map_err(pg_error)?;
        Ok(n == 1)
    }

    async fn rotate(
        &self,
        old_id: &str,
        new: TokenRecord,
        old_ends_at_ms: u64,
    ) -> StoreResult<bool> {
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await.map_err(pg_error)?;
        let n = tx
            .execute(
                "UPDATE api_tokens SET expires_at_ms = $2 WHERE id = $1 AND revoked_at_ms IS NULL",
                &[&old_id, &ms(old_ends_at_ms)],
            )
            .await
            .map_err(pg_error)?;
        if n != 1 {
            return Ok(false);
        }
        insert(&tx, &new).await?;
        tx.commit().await.map_err(pg_error)?;
        Ok(true)
    }

    async fn touch(&self, used: Vec<(String, u64)>) -> StoreResult<()> {
        let client = self.pool.get().await?;
        let (ids, ats): (Vec<String>, Vec<i64>) =
            used.into_iter().map(|(id, at)| (id, ms(at))).unzip();
        client
            .execute(
                "UPDATE api_tokens t SET last_used_at_ms = u.at \
                 FROM UNNEST($1::text[], $2::bigint[]) AS u(id, at) \
                 WHERE t.id = u.id AND (t.last_used_at_ms IS NULL OR t.last_used_at_ms < u.at)",
                &[&ids, &ats],
            )
            .await
            .map_err(pg_error)?;
        Ok(())
    }
}
