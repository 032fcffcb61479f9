//! The audit records of acts that are not calls but that the audit must show — a sandbox's
//! network connection, an MCP server's elicitation — built here, beside the pipeline's own,
//! so every record toolgate writes takes its shape from the gateway.

use std::time::Duration;

use serde_json::json;
use toolgate_audit::{AuditOutcome, AuditRecord, RecordKind};
use toolgate_protocol::{ErrorCode, Principal, Role, SessionId};
use toolgate_store::approvals::ApprovalRequest;

/// A connection a sandbox's egress proxy relayed or refused.
#[derive(Debug, Clone, Copy)]
pub struct EgressConnection<'a> {
    /// The grant the proxy serves (a role's shell, a stdio MCP server).
    pub grant: &'a str,
    /// `CONNECT`, `HTTP`, or `-` when the request could not be read.
    pub method: &'a str,
    pub host: &'a str,
    pub port: u16,
    /// `None`: relayed; `Some(why)`: refused.
    pub refused: Option<&'a str>,
    pub bytes_up: u64,
    pub bytes_down: u64,
    pub duration: Duration,
}

/// The record of `c`: `tool` = `egress`, `principal` = `sandbox:<grant>`, refusals
/// `policy_denied`.
pub fn egress(c: &EgressConnection<'_>) -> AuditRecord {
    AuditRecord {
        kind: RecordKind::Outcome,
        ts: AuditRecord::now_ts(),
        call_id: crate::new_call_id(),
        session: SessionId::default(),
        principal: format!("sandbox:{}", c.grant).into(),
        role: Role::default(),
        tool: "egress".to_owned(),
        source: Some("sandbox".to_owned()),
        risk: None,
        arguments: json!({ "method": c.method, "host": c.host, "port": c.port }),
        outcome: match c.refused {
            None => AuditOutcome::Ok,
            Some(_) => AuditOutcome::Failed(ErrorCode::PolicyDenied),
        },
        error: c.refused.map(str::to_owned),
        result: Some(json!({ "bytes_up": c.bytes_up, "bytes_down": c.bytes_down })),
        duration_us: Some(u64::try_from(c.duration.as_micros()).unwrap_or(u64::MAX)),
        approver: None,
        approval_id: None,
        issuer: None,
        subject: None,
        policy_rule: None,
    }
}

/// A message into or out of an agent conversation (`toolgate serve`'s conversations): `tool`
/// `conversation.message`, `session` the conversation, the text in `arguments` (redacted by
/// the log like everything it writes). A message from someone no principal maps to is
/// recorded `forbidden` with `refused` saying why.
#[derive(Debug, Clone, Copy)]
pub struct ConversationMessage<'a> {
    pub conversation: &'a str,
    /// `web`, `openai`, `telegram:<channel>`, ….
    pub entry: &'a str,
    /// The sender as the entry point names them (a chat user id), for messages in.
    pub from: Option<&'a str>,
    pub principal: &'a Principal,
    pub role: &'a Role,
    /// `in` (from the user) or `out` (the answer, a notice).
    pub direction: &'a str,
    pub text: &'a str,
    pub refused: Option<&'a str>,
}

/// The record of `m`.
pub fn conversation_message(m: &ConversationMessage<'_>) -> AuditRecord {
    let mut arguments = json!({
        "conversation": m.conversation,
        "entry": m.entry,
        "direction": m.direction,
        "text": m.text,
    });
    if let Some(from) = m.from {
        arguments["from"] = json!(from);
    }
    AuditRecord {
        kind: RecordKind::Outcome,
        ts: AuditRecord::now_ts(),
        call_id: crate::new_call_id(),
        session: m.conversation.into(),
        principal: m.principal.clone(),
        role: m.role.clone(),
        tool: "conversation.message".to_owned(),
        source: Some(format!("conversation:{}", m.entry)),
        risk: None,
        arguments,
        outcome: match m.refused {
            None => AuditOutcome::Ok,
            Some(_) => AuditOutcome::Failed(ErrorCode::Forbidden),
        },
        error: m.refused.map(str::to_owned),
        result: None,
        duration_us: None,
        approver: None,
        approval_id: None,
        issuer: None,
        subject: None,
        policy_rule: None,
    }
}

/// The record of an MCP elicitation filed as approval `request`: its asking
/// ([`RecordKind::Attempt`], `started`) or its answer.
pub fn elicitation(
    kind: RecordKind,
    request: &ApprovalRequest,
    outcome: AuditOutcome,
) -> AuditRecord {
    AuditRecord {
        kind,
        ts: AuditRecord::now_ts(),
        call_id: request.id.clone(),
        session: request.session.clone(),
        principal: request.principal.clone(),
        role: request.role.clone(),
        tool: request.tool.clone(),
        source: request.principal.strip_prefix("mcp:").map(str::to_owned),
        risk: Some(request.risk),
        arguments: request.arguments.clone(),
        outcome,
        error: None,
        result: None,
        duration_us: None,
        approver: request.decided_by.clone(),
        approval_id: Some(request.id.clone()),
        issuer: None,
        subject: None,
        policy_rule: None,
    }
}
