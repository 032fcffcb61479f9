//! MCP elicitation routed to the approval channel: a server asking for input mid-call
//! becomes a pending approval request (`mcp__{server}__elicitation`, the message and the
//! form in its arguments) that an operator decides like any other — `toolgate approvals
//! approve|deny ID`, the web console, the API. Approve sends the form with its defaults,
//! deny declines, expiry cancels.

use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use toolgate_mcp::elicit::defaults_of;
use toolgate_mcp::{ElicitationAnswer, ElicitationRequest, Elicitor};
use toolgate_store::approvals::{ApprovalStatus, ApprovalStore, NewApproval};

pub struct ApprovalElicitor {
    store: Arc<ApprovalStore>,
    ttl: Duration,
    poll: Duration,
}

impl ApprovalElicitor {
    pub fn new(store: Arc<ApprovalStore>, ttl: Duration, poll: Duration) -> Self {
        ApprovalElicitor { store, ttl, poll }
    }
}

impl std::fmt::Debug for ApprovalElicitor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApprovalElicitor")
            .field("ttl", &self.ttl)
            .field("poll", &self.poll)
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl Elicitor for ApprovalElicitor {
    async fn elicit(&self, request: ElicitationRequest) -> ElicitationAnswer {
        let form = defaults_of(&request.schema);
        let arguments = json!({
            "message": request.message,
            "form": Value::Object(form.clone()),
            "requested_schema": request.schema,
        });
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        toolgate_protocol::canonical_json(&arguments).hash(&mut hasher);
        let new = NewApproval {
            principal: format!("mcp:{}", request.server),
            session: "elicitation".to_owned(),
            role: "mcp".to_owned(),
            tool: format!("mcp__{}__elicitation", request.server),
            risk: "write".to_owned(),
            args_hash: format!("{:016x}", hasher.finish()),
            arguments,
            requires_confirmation: false,
            ttl: self.ttl,
        };
        let created = match self.store.create(new) {
            Ok(created) => created,
            Err(e) => {
                tracing::warn!(server = %request.server, error = %e, "cannot record an elicitation request; declining it");
                return ElicitationAnswer::Decline;
            }
        };
        tracing::warn!(
            server = %request.server,
            approval_id = %created.id,
            "MCP server `{}` asks for input: {:?} — approve (send the form's defaults) with `toolgate approvals approve {}` or decline with `toolgate approvals deny {}`",
            request.server, request.message, created.id, created.id
        );
        loop {
            tokio::time::sleep(self.poll).await;
            match self.store.get(&created.id) {
                Ok(Some(r)) => match r.status {
                    ApprovalStatus::Pending if now_ms() >= r.expires_at_ms => {
                        return ElicitationAnswer::Cancel;
                    }
                    ApprovalStatus::Pending => {}
                    ApprovalStatus::Approved => return ElicitationAnswer::Accept(form),
                    ApprovalStatus::Denied => return ElicitationAnswer::Decline,
                    ApprovalStatus::Expired => return ElicitationAnswer::Cancel,
                },
                Ok(None) => return ElicitationAnswer::Cancel,
                Err(e) => {
                    tracing::warn!(error = %e, "cannot read an elicitation request; cancelling it");
                    return ElicitationAnswer::Cancel;
                }
            }
        }
    }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}
