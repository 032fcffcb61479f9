//! Standing grants: looking one up for a call, listing, revoking. A grant covers a call when
//! it is a `session` grant for the same principal, session and tool, or an `always` grant for
//! the same principal and tool whose `args_hash` equals the call's or whose pattern matches
//! the call's arguments. Grants never widen across principals or tools.

use rusqlite::params;
use serde_json::Value;

use super::pattern::pattern_matches;
use super::schema::{GRANT_COLUMNS, RawGrant};
use super::store::ApprovalStore;
use super::{DecisionScope, Grant};
use crate::StoreResult;

impl ApprovalStore {
    /// The oldest standing grant that covers this call, if any; session grants are looked at
    /// first.
    pub fn find_grant(
        &self,
        principal: &str,
        session: &str,
        tool: &str,
        args: &Value,
        args_hash: &str,
    ) -> StoreResult<Option<Grant>> {
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!(
            "SELECT {GRANT_COLUMNS} FROM approval_grants \
             WHERE principal = ?1 AND tool = ?2 \
               AND ((scope = 'session' AND session = ?3) OR scope = 'always') \
             ORDER BY scope = 'session' DESC, id"
        ))?;
        let rows = stmt.query_map(params![principal, tool, session], RawGrant::from_row)?;
        for raw in rows {
            let grant = raw?.into_grant()?;
            // The query already matched session grants on principal, session and tool.
            let covers = match grant.scope {
                DecisionScope::Session => true,
                DecisionScope::Always => {
                    grant.args_hash.as_deref() == Some(args_hash)
                        || grant
                            .pattern
                            .as_ref()
                            .is_some_and(|p| pattern_matches(p, args))
                }
                DecisionScope::Once => false,
            };
            if covers {
                return Ok(Some(grant));
            }
        }
        Ok(None)
    }

    /// All standing grants, oldest first.
    pub fn list_grants(&self) -> StoreResult<Vec<Grant>> {
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!(
            "SELECT {GRANT_COLUMNS} FROM approval_grants ORDER BY id"
        ))?;
        let rows = stmt.query_map([], RawGrant::from_row)?;
        rows.map(|raw| raw?.into_grant()).collect()
    }

    /// Deletes a grant; returns whether it existed.
    pub fn revoke_grant(&self, id: i64) -> StoreResult<bool> {
        let changed = self
            .conn()
            .execute("DELETE FROM approval_grants WHERE id = ?1", params![id])?;
        Ok(changed == 1)
    }
}
