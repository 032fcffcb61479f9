//! Deciding an approval request: the one method every front end decides through — the HTTP
//! API (and the web console on it), `toolgate approvals approve|deny`, the terminal prompt
//! and every chat channel. It checks that the decider holds the operator right, lets the
//! store check the rest (still pending, the typed name of a dangerous tool, a well-formed
//! pattern) and writes one audit record of the decision — or of the refusal — in one shape
//! whatever the front end: `tool` the request's tool, `source` `approvals:{via}`, the
//! decision and the front end's own facts (a chat user, a forged button) in `arguments`.

use std::sync::Arc;

use serde_json::{Map, Value, json};
use toolgate_audit::{AuditLog, AuditOutcome, AuditRecord, RecordKind};
use toolgate_protocol::{ErrorCode, Principal};
use toolgate_store::StoreError;
use toolgate_store::approvals::{
    ApprovalRequest, ApprovalStatus, ApprovalStore, Decision, DecisionScope,
};

/// Where a decision comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Via {
    /// `POST /v1/approvals/{id}` (the web console included).
    Api,
    /// `toolgate approvals approve|deny`.
    Cli,
    /// The terminal prompt of the process whose call waits.
    Terminal,
    /// A chat channel, named `{kind}:{name}` (`telegram:oncall`): stored as the request's
    /// `decided_via`.
    Chat(String),
    /// The conversation the call was made in, named `conversation:{entry}`: stored as
    /// `decided_via`. `by_its_user`: the decider holds the right as the conversation's own
    /// user (`[conversations] approvals = "user"`), not as an operator — the record says so.
    Conversation { name: String, by_its_user: bool },
}

impl Via {
    pub fn label(&self) -> &str {
        match self {
            Via::Api => "api",
            Via::Cli => "cli",
            Via::Terminal => "terminal",
            Via::Chat(name) | Via::Conversation { name, .. } => name,
        }
    }
}

/// Who decides, as the front end authenticated them.
#[derive(Debug, Clone)]
pub struct Decider {
    /// Recorded as the request's `decided_by` and as the record's principal.
    pub principal: Principal,
    /// Whether they hold the operator right now; anyone else is refused, and the refusal
    /// recorded.
    pub operator: bool,
    pub via: Via,
    /// What the front end knows that the record keeps (a chat user's id and name, the
    /// chat, the approval id a forged button named).
    pub context: Map<String, Value>,
}

impl Decider {
    pub fn new(principal: impl Into<Principal>, operator: bool, via: Via) -> Self {
        Decider {
            principal: principal.into(),
            operator,
            via,
            context: Map::new(),
        }
    }
}

/// What the decider asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct Ask {
    pub approve: bool,
    pub scope: DecisionScope,
    /// An argument pattern for `always` (a JSON object of names to globs or values).
    pub pattern: Option<Value>,
    /// The typed tool name a dangerous tool's approval needs.
    pub confirm: Option<String>,
    pub reason: Option<String>,
}

impl Ask {
    pub fn approve(scope: DecisionScope) -> Self {
        Ask {
            approve: true,
            scope,
            pattern: None,
            confirm: None,
            reason: None,
        }
    }

    pub fn deny() -> Self {
        Ask {
            approve: false,
            ..Ask::approve(DecisionScope::Once)
        }
    }

    /// `approve once`, `approve session`, `approve always`, `deny`: the record's decision.
    pub fn label(&self) -> String {
        if self.approve {
            format!("approve {}", self.scope.as_str())
        } else {
            "deny".to_owned()
        }
    }
}

/// Why a decision was not taken.
#[derive(Debug)]
pub enum Refusal {
    /// No request has that id (nothing to record it against).
    NotFound(String),
    /// The decider does not hold the operator right, or the front end refused the decision
    /// ([`Decisions::refuse`]).
    Forbidden(String),
    /// The store refused it: decided or abandoned already, expired, the wrong typed name, a
    /// malformed pattern. `now` is the request as it now stands, when it could be read.
    Conflict {
        message: String,
        now: Option<Box<ApprovalRequest>>,
    },
    /// The store could not be read or written.
    Store(StoreError),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::NotFound(id) => write!(f, "no approval request {id}"),
            Refusal::Forbidden(why) | Refusal::Conflict { message: why, .. } => f.write_str(why),
            Refusal::Store(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for Refusal {}

/// The decision desk: see the module doc.
pub struct Decisions {
    store: Arc<ApprovalStore>,
    audit: Arc<AuditLog>,
}

impl Decisions {
    pub fn new(store: Arc<ApprovalStore>, audit: Arc<AuditLog>) -> Self {
        Decisions { store, audit }
    }

    pub fn store(&self) -> &Arc<ApprovalStore> {
        &self.store
    }

    pub fn audit(&self) -> &Arc<AuditLog> {
        &self.audit
    }

    /// Decides request `id` as `by` asks, and records the decision or the refusal.
    pub async fn decide(
        &self,
        id: &str,
        ask: Ask,
        by: &Decider,
    ) -> Result<ApprovalRequest, Refusal> {
        let found = self.store.get(id).await;
        if !by.operator {
            // Refused whether or not the id exists: a non-operator learns nothing of it.
            let why = format!(
                "{} does not hold the operator right: only an operator decides approvals",
                by.principal
            );
            if let Ok(Some(request)) = &found {
                self.refuse(request, &ask, by, ErrorCode::Forbidden, &why)
                    .await;
            }
            return Err(Refusal::Forbidden(why));
        }
        let request = match found {
            Ok(Some(r)) => r,
            Ok(None) => return Err(Refusal::NotFound(id.to_owned())),
            Err(e) => return Err(Refusal::Store(e)),
        };
        let label = ask.label();
        let decision = Decision {
            approve: ask.approve,
            scope: ask.scope,
            pattern: ask.pattern,
            decided_by: by.principal.to_string(),
            reason: ask.reason,
            confirm: ask.confirm,
            via: match &by.via {
                Via::Chat(name) | Via::Conversation { name, .. } => Some(name.clone()),
                _ => None,
            },
        };
        match self.store.decide(id, decision).await {
            Ok(decided) => {
                self.record(&decided, &label, by, Ok(())).await;
                Ok(decided)
            }
            Err(StoreError::Conflict(message)) => {
                let now = self.store.get(id).await.ok().flatten().map(Box::new);
                let code = match now.as_ref().map(|r| r.status) {
                    Some(ApprovalStatus::Expired) => ErrorCode::ApprovalExpired,
                    _ => ErrorCode::InvalidArguments,
                };
                let on = now.as_deref().unwrap_or(&request);
                self.record(on, &label, by, Err((code, &message))).await;
                Err(Refusal::Conflict { message, now })
            }
            Err(StoreError::NotFound(_)) => Err(Refusal::NotFound(id.to_owned())),
            Err(e) => Err(Refusal::Store(e)),
        }
    }

    /// Records a decision the front end itself refused (a forged button, a reply that does
    /// not name the tool) in the same shape as [`Decisions::decide`]'s records.
    pub async fn refuse(
        &self,
        request: &ApprovalRequest,
        ask: &Ask,
        by: &Decider,
        code: ErrorCode,
        why: &str,
    ) {
        self.record(request, &ask.label(), by, Err((code, why)))
            .await;
    }

    async fn record(
        &self,
        request: &ApprovalRequest,
        decision: &str,
        by: &Decider,
        result: Result<(), (ErrorCode, &str)>,
    ) {
        let mut arguments = Map::new();
        arguments.insert("approval_id".to_owned(), json!(request.id));
        arguments.insert("decision".to_owned(), json!(decision));
        arguments.insert("via".to_owned(), json!(by.via.label()));
        for (k, v) in &by.context {
            arguments.entry(k.clone()).or_insert_with(|| v.clone());
        }
        let (outcome, error) = match result {
            Ok(()) => (AuditOutcome::Ok, None),
            Err((code, why)) => (AuditOutcome::Failed(code), Some(why.to_owned())),
        };
        let record = AuditRecord {
            kind: RecordKind::Outcome,
            ts: AuditRecord::now_ts(),
            call_id: format!("{}.decision.{}", request.id, crate::new_call_id()),
            session: request.session.clone(),
            principal: by.principal.clone(),
            role: match &by.via {
                // The right a decider held: a conversation's user is not an operator.
                Via::Conversation {
                    by_its_user: true, ..
                } if by.operator => "conversation user",
                _ if by.operator => "operator",
                _ => "none",
            }
            .into(),
            tool: request.tool.clone(),
            source: Some(format!("approvals:{}", by.via.label())),
            risk: Some(request.risk),
            arguments: Value::Object(arguments),
            outcome,
            error,
            result: None,
            duration_us: None,
            approver: result.is_ok().then(|| by.principal.to_string()),
            approval_id: Some(request.id.clone()),
            issuer: None,
            subject: None,
            policy_rule: None,
        };
        if let Err(e) = self.audit.append(record).await {
            tracing::error!(approval = %request.id, "the audit record of a decision was not written: {e}");
        }
    }
}
