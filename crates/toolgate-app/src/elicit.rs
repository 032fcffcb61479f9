//! MCP elicitation routed to the approval desk: a server asking for input mid-call becomes a
//! pending approval request (`mcp__{server}__elicitation`, the message and the form in its
//! arguments) that an operator decides like any other — `toolgate approvals approve|deny
//! ID`, the web console, the API. Approve sends the form with its defaults, deny declines,
//! expiry cancels.
//!
//! The request goes through the same [`ApprovalDesk`] as a tool call's approval — one
//! canonical hash, one redactor (a token in the server's message is masked before any
//! operator sees it), one wait loop — and both its asking and its answer are audited.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolgate_audit::{AuditLog, AuditOutcome, RecordKind};
use toolgate_gateway::approve::{ApprovalDesk, OnGiveUp, Question, Waited};
use toolgate_mcp_client::elicit::defaults_of;
use toolgate_mcp_client::{ElicitationAnswer, ElicitationRequest, Elicitor};
use toolgate_protocol::{ErrorCode, Risk};
use toolgate_store::approvals::{ApprovalRequest, ApprovalStatus};

/// The session every elicitation request is filed under.
pub const ELICITATION_SESSION: &str = "elicitation";
/// The role every elicitation request is filed under.
pub const ELICITATION_ROLE: &str = "mcp";

pub struct ApprovalElicitor {
    desk: Arc<ApprovalDesk>,
    audit: Arc<AuditLog>,
    poll: Duration,
}

impl ApprovalElicitor {
    pub fn new(desk: Arc<ApprovalDesk>, audit: Arc<AuditLog>, poll: Duration) -> Self {
        ApprovalElicitor { desk, audit, poll }
    }

    /// Writes one audit record of the elicitation `request` (the log redacts it).
    async fn record(&self, kind: RecordKind, request: &ApprovalRequest, outcome: AuditOutcome) {
        let record = toolgate_gateway::audit::records::elicitation(kind, request, outcome);
        if let Err(e) = self.audit.append(record).await {
            tracing::error!(approval_id = %request.id, error = %e, "audit record of an elicitation not written");
        }
    }
}

impl std::fmt::Debug for ApprovalElicitor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApprovalElicitor")
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
        let principal = format!("mcp:{}", request.server);
        let tool = format!("mcp__{}__elicitation", request.server);
        let question = Question {
            principal: &principal,
            session: ELICITATION_SESSION,
            role: ELICITATION_ROLE,
            tool: &tool,
            risk: Risk::Write,
            arguments: &arguments,
            requires_confirmation: false,
            identity: None,
        };
        let created = match self.desk.open(&question).await {
            Ok(created) => created,
            Err(e) => {
                tracing::warn!(server = %request.server, error = %e, "cannot record an elicitation request; declining it");
                return ElicitationAnswer::Decline;
            }
        };
        self.record(RecordKind::Attempt, &created, AuditOutcome::Started)
            .await;
        tracing::warn!(
            server = %request.server,
            approval_id = %created.id,
            "MCP server `{}` asks for input — approve (send the form's defaults) with `toolgate approvals approve {}` or decline with `toolgate approvals deny {}`",
            request.server, created.id, created.id
        );
        // The hub drops this future when the call that caused the elicitation ends, which
        // ends the wait and abandons the request: nobody would receive the answer.
        let waited = self
            .desk
            .wait(
                created.clone(),
                self.poll,
                &CancellationToken::new(),
                OnGiveUp::Abandon,
            )
            .await;
        let (answer, decided) = match waited {
            Ok(Waited::Decided(r) | Waited::Cancelled(r)) => {
                let answer = match r.status {
                    ApprovalStatus::Approved => {
                        // Used up, like a tool call's approval: nothing else may ride on it.
                        if let Err(e) = self.desk.store().consume(&r.id).await {
                            tracing::warn!(approval_id = %r.id, error = %e, "cannot mark an elicitation answered");
                        }
                        ElicitationAnswer::Accept(form)
                    }
                    ApprovalStatus::Denied => ElicitationAnswer::Decline,
                    ApprovalStatus::Pending
                    | ApprovalStatus::Expired
                    | ApprovalStatus::Abandoned => ElicitationAnswer::Cancel,
                };
                (answer, r)
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot read an elicitation request; cancelling it");
                (ElicitationAnswer::Cancel, created)
            }
        };
        let outcome = match &answer {
            ElicitationAnswer::Accept(_) => AuditOutcome::Ok,
            ElicitationAnswer::Decline => AuditOutcome::Failed(ErrorCode::ApprovalDenied),
            ElicitationAnswer::Cancel => AuditOutcome::Failed(ErrorCode::ApprovalExpired),
        };
        self.record(RecordKind::Outcome, &decided, outcome).await;
        answer
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use toolgate_audit::Durability;
    use toolgate_gateway::{Gateway, GatewayConfig, GatewayDeps};
    use toolgate_registry::Catalog;
    use toolgate_store::approvals::{Decision, DecisionScope};

    use super::*;

    /// A GitHub token shape the redactor knows.
    const SECRET: &str = "ghp_Zq7Zq7Zq7Zq7Zq7Zq7Zq7Zq7Zq7Zq7Zq7Zq7";

    fn gateway(dir: &std::path::Path) -> Gateway {
        let deps =
            GatewayDeps::open_dir(dir, Arc::new(Catalog::new()), Durability::Durable).unwrap();
        Gateway::new(deps, &GatewayConfig::default()).unwrap()
    }

    /// Issue 13, item 2: the old elicitor stored the server's message as it came; the
    /// approval preview (and so the console and the API, which read the store) showed the
    /// token. Now it passes the desk's redactor, and both audit records are redacted too.
    #[tokio::test]
    async fn a_secret_in_an_elicitation_is_masked_in_the_request_and_the_audit() {
        let dir = tempfile::tempdir().unwrap();
        let gateway = gateway(dir.path());
        let elicitor = Arc::new(ApprovalElicitor::new(
            Arc::clone(gateway.desk()),
            Arc::clone(gateway.audit()),
            Duration::from_millis(10),
        ));
        let asking = Arc::clone(&elicitor);
        let answer = tokio::spawn(async move {
            asking
                .elicit(ElicitationRequest {
                    server: "deploy".into(),
                    message: format!("Log in with {SECRET}?"),
                    schema: json!({"type": "object", "properties": {
                        "proceed": {"type": "boolean", "default": true}
                    }}),
                })
                .await
        });
        let store = gateway.desk().store();
        let deadline = Instant::now() + Duration::from_secs(10);
        let pending = loop {
            let listed = store.list(Some(ApprovalStatus::Pending), 10).await.unwrap();
            if let Some(r) = listed.into_iter().next() {
                break r;
            }
            assert!(Instant::now() < deadline, "no elicitation request appeared");
            tokio::time::sleep(Duration::from_millis(10)).await;
        };
        assert_eq!(pending.tool, "mcp__deploy__elicitation");
        assert_eq!(pending.principal, "mcp:deploy");
        let shown = pending.arguments.to_string();
        assert!(!shown.contains(SECRET), "{shown}");
        assert_eq!(
            pending.arguments["message"],
            json!("Log in with [REDACTED]?")
        );
        // The identity is the canonical SHA-256 of what the server asked, not a
        // process-seeded hash: the same question always names the same request.
        assert_eq!(
            pending.args_hash,
            ApprovalDesk::hash(&json!({
                "message": format!("Log in with {SECRET}?"),
                "form": {"proceed": true},
                "requested_schema": {"type": "object", "properties": {
                    "proceed": {"type": "boolean", "default": true}
                }},
            }))
        );
        store
            .decide(
                &pending.id,
                Decision {
                    approve: false,
                    scope: DecisionScope::Once,
                    pattern: None,
                    decided_by: "op".into(),
                    reason: None,
                    confirm: None,
                    via: None,
                },
            )
            .await
            .unwrap();
        assert_eq!(answer.await.unwrap(), ElicitationAnswer::Decline);

        gateway.audit().flush().await.unwrap();
        let log = std::fs::read_to_string(dir.path().join("logs/tool-audit.jsonl")).unwrap();
        assert!(!log.contains(SECRET), "{log}");
        let records: Vec<Value> = log
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let seen: Vec<(&str, &str)> = records
            .iter()
            .map(|r| (r["kind"].as_str().unwrap(), r["outcome"].as_str().unwrap()))
            .collect();
        assert_eq!(
            seen,
            [("attempt", "started"), ("outcome", "approval_denied")]
        );
        assert_eq!(records[1]["approver"], json!("op"));
        assert_eq!(records[1]["approval_id"], json!(pending.id));
        assert_eq!(
            records[0]["arguments"]["message"],
            json!("Log in with [REDACTED]?")
        );
    }

    #[tokio::test]
    async fn an_approved_elicitation_accepts_the_defaults_and_is_used_up() {
        let dir = tempfile::tempdir().unwrap();
        let gateway = gateway(dir.path());
        let elicitor = Arc::new(ApprovalElicitor::new(
            Arc::clone(gateway.desk()),
            Arc::clone(gateway.audit()),
            Duration::from_millis(10),
        ));
        let asking = Arc::clone(&elicitor);
        let answer = tokio::spawn(async move {
            asking
                .elicit(ElicitationRequest {
                    server: "s".into(),
                    message: "go?".into(),
                    schema: json!({"type": "object", "properties": {
                        "n": {"type": "integer", "default": 42}
                    }}),
                })
                .await
        });
        let store = gateway.desk().store();
        let deadline = Instant::now() + Duration::from_secs(10);
        let id = loop {
            if let Some(r) = store
                .list(Some(ApprovalStatus::Pending), 1)
                .await
                .unwrap()
                .pop()
            {
                break r.id;
            }
            assert!(Instant::now() < deadline, "no elicitation request appeared");
            tokio::time::sleep(Duration::from_millis(10)).await;
        };
        let approve = Decision {
            approve: true,
            scope: DecisionScope::Once,
            pattern: None,
            decided_by: "op".into(),
            reason: None,
            confirm: None,
            via: None,
        };
        store.decide(&id, approve).await.unwrap();
        let mut form = serde_json::Map::new();
        form.insert("n".into(), json!(42));
        assert_eq!(answer.await.unwrap(), ElicitationAnswer::Accept(form));
        assert!(store.get(&id).await.unwrap().unwrap().consumed);
    }
}
