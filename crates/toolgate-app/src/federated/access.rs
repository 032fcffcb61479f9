//! Who may see and read which federated prompt or resource, and the audit record of every
//! read (see the module doc of [`super`]).

use std::sync::Arc;
use std::time::Instant;

use rmcp::ErrorData;
use rmcp::model::{JsonObject, ResourceContents};
use serde_json::{Value, json};
use toolgate_gateway::Gateway;
use toolgate_gateway::policy::Decision;
use toolgate_mcp::McpHub;
use toolgate_mcp::federation::{ListedPrompt, RouteError, Target};
use toolgate_protocol::{ErrorCode, Risk};
use toolgate_server::mcp::Requester;
use toolgate_store::audit::{AuditOutcome, AuditRecord, RecordKind};

use super::pins::PromptPins;

/// The role and pin checks, and the audit, of federated reads.
pub(super) struct Access {
    gateway: Arc<Gateway>,
    pins: PromptPins,
}

/// One read as the audit records it.
pub(super) struct Read {
    call_id: String,
    /// The name or URI the client used.
    name: String,
    server: String,
    arguments: Value,
    started: Instant,
}

impl Read {
    pub(super) fn prompt(target: &Target, arguments: Option<&JsonObject>) -> Self {
        Read::new(
            target,
            &target.key,
            json!({"method": "prompts/get", "arguments": arguments}),
        )
    }

    pub(super) fn resource(target: &Target, uri: &str) -> Self {
        Read::new(target, uri, json!({"method": "resources/read", "uri": uri}))
    }

    fn new(target: &Target, name: &str, arguments: Value) -> Self {
        Read {
            call_id: format!("read_{}", uuid::Uuid::now_v7().simple()),
            name: name.to_owned(),
            server: target.server.clone(),
            arguments,
            started: Instant::now(),
        }
    }
}

/// The answer for a prompt that does not exist or the role may not see.
pub(super) fn no_prompt(name: &str) -> ErrorData {
    ErrorData::invalid_params(format!("no prompt named `{name}`"), None)
}

/// The answer for a resource that does not exist or the role may not see.
fn no_resource(uri: &str) -> ErrorData {
    ErrorData::resource_not_found(format!("no resource `{uri}`"), Some(json!({"uri": uri})))
}

/// The size of one content item, for the audit.
pub(super) fn content_bytes(contents: &ResourceContents) -> usize {
    match contents {
        ResourceContents::TextResourceContents { text, .. } => text.len(),
        ResourceContents::BlobResourceContents { blob, .. } => blob.len(),
        _ => 0,
    }
}

impl Access {
    pub(super) fn new(gateway: Arc<Gateway>) -> Self {
        Access {
            pins: PromptPins::new(Arc::clone(&gateway)),
            gateway,
        }
    }

    /// Whether the caller's role may see `key`: allowed by its globs and not denied.
    pub(super) fn sees(&self, who: &Requester, key: &str) -> bool {
        self.gateway
            .roles()
            .get(&who.caller.role)
            .is_some_and(|role| role.allows(key) && role.decide(key, Risk::Read) != Decision::Deny)
    }

    /// The outcome of an upstream answer, as [`Access::audit`] takes it.
    pub(super) fn upstream(
        result: &Result<Value, ErrorData>,
    ) -> Result<&Value, (ErrorCode, &ErrorData)> {
        result.as_ref().map_err(|e| (ErrorCode::ExecutionFailed, e))
    }

    /// [`Access::sees`], and the prompt's definition is the pinned one.
    pub(super) async fn sees_prompt(&self, who: &Requester, prompt: &ListedPrompt) -> bool {
        self.sees(who, &prompt.target.key) && self.pins.check(prompt).await.is_ok()
    }

    /// The resource behind `uri` if the caller's role may see it.
    pub(super) fn resource(
        &self,
        who: &Requester,
        hub: &McpHub,
        uri: &str,
    ) -> Result<Target, ErrorData> {
        match hub.resource_target(uri) {
            Ok(target) if self.sees(who, &target.key) => Ok(target),
            Ok(_) | Err(RouteError::Unknown(_)) => Err(no_resource(uri)),
            Err(ambiguous @ RouteError::Ambiguous { .. }) => {
                Err(ErrorData::invalid_params(ambiguous.to_string(), None))
            }
        }
    }

    /// The role's decision for a read it may see: `ask` cannot wait here and is refused
    /// (audited, like every refusal).
    pub(super) async fn check(
        &self,
        who: &Requester,
        target: &Target,
        read: &Read,
    ) -> Result<(), ErrorData> {
        let decision = self
            .gateway
            .roles()
            .get(&who.caller.role)
            .map(|role| role.decide(&target.key, Risk::Read));
        match decision {
            Some(Decision::Allow) => Ok(()),
            _ => {
                let refusal = ErrorData::invalid_request(
                    format!(
                        "role `{}` asks for approval to read `{}`; prompts and resources cannot wait for one — allow or deny them with a rule for `{}`",
                        who.caller.role, read.name, target.key
                    ),
                    None,
                );
                self.audit(who, read, Err((ErrorCode::PolicyDenied, &refusal)))
                    .await;
                Err(refusal)
            }
        }
    }

    /// [`Access::check`], and the prompt's definition is the pinned one.
    pub(super) async fn check_prompt(
        &self,
        who: &Requester,
        prompt: &ListedPrompt,
        read: &Read,
    ) -> Result<(), ErrorData> {
        self.check(who, &prompt.target, read).await?;
        if let Err(why) = self.pins.check(prompt).await {
            let refusal = ErrorData::invalid_request(why, None);
            self.audit(who, read, Err((ErrorCode::Unavailable, &refusal)))
                .await;
            return Err(refusal);
        }
        Ok(())
    }

    /// Writes the outcome record of `read`: sizes on success, the error otherwise.
    pub(super) async fn audit(
        &self,
        who: &Requester,
        read: &Read,
        outcome: Result<&Value, (ErrorCode, &ErrorData)>,
    ) {
        let (outcome, error, result) = match outcome {
            Ok(size) => (AuditOutcome::Ok, None, Some(size.clone())),
            Err((code, e)) => (
                AuditOutcome::Failed(code),
                Some(e.message.to_string()),
                None,
            ),
        };
        let record = AuditRecord {
            kind: RecordKind::Outcome,
            ts: AuditRecord::now_ts(),
            call_id: read.call_id.clone(),
            session: who.session.clone(),
            principal: who.caller.principal.clone(),
            role: who.caller.role.clone(),
            tool: read.name.clone(),
            source: Some(format!("mcp:{}", read.server)),
            risk: Some(Risk::Read),
            arguments: read.arguments.clone(),
            outcome,
            error,
            result,
            duration_us: Some(
                u64::try_from(read.started.elapsed().as_micros()).unwrap_or(u64::MAX),
            ),
            approver: None,
            approval_id: None,
            issuer: None,
            subject: None,
            policy_rule: None,
        };
        if let Err(e) = self.gateway.audit().append(record).await {
            tracing::error!(call_id = %read.call_id, error = %e, "audit record of a federated read not written");
        }
    }
}
