//! A call as it travels through the pipeline: the request as a front end made it, and the
//! facts each layer establishes for the layers inside it.

use std::hash::{BuildHasher, RandomState};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::Value;
use toolgate_core::{CancellationToken, ProgressSink, ProgressUpdate, ToolContext};
use toolgate_protocol::{CallError, Governance, Principal, Role, SessionId, ToolOutput};
use toolgate_registry::Entry;

use crate::approve::OnGiveUp;
use crate::policy::{Decision, RolePolicy, Roles};

/// Arguments as received: already-parsed JSON, or text a model produced (parsed and
/// size-checked by the validation layer, so malformed JSON is an audited `invalid_arguments`).
#[derive(Debug, Clone, PartialEq)]
pub enum Arguments {
    Json(Value),
    Text(String),
}

impl Arguments {
    /// The arguments as the audit should see them: the JSON value, or the raw text for
    /// arguments that never parsed.
    pub fn for_audit(&self) -> Value {
        match self {
            Arguments::Json(v) => v.clone(),
            Arguments::Text(t) => match serde_json::from_str::<Value>(t) {
                Ok(v) => v,
                Err(_) => serde_json::json!({ "_unparsed": t }),
            },
        }
    }
}

/// Something a call reports while it runs, for front ends that show progress (MCP progress
/// notifications, the chat view).
#[derive(Debug, Clone, PartialEq)]
pub enum CallEvent {
    /// The call is waiting for a human; `approval_id` can be decided from any front end.
    AwaitingApproval {
        approval_id: String,
        tool: String,
        expires_at_ms: u64,
        requires_confirmation: bool,
    },
    /// The tool reported progress (an MCP server's `notifications/progress`, say).
    Progress {
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    },
}

/// The kind of thing a call acts on. Every governed act — calling a tool, getting a
/// prompt, reading (or subscribing to) a resource — runs through the same layers; policy
/// rules read the kind as `target`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TargetKind {
    #[default]
    Tool,
    Prompt,
    Resource,
}

impl TargetKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TargetKind::Tool => "tool",
            TargetKind::Prompt => "prompt",
            TargetKind::Resource => "resource",
        }
    }
}

/// What a call acts on. A tool is found by name in the catalog by the lookup layer; a
/// prompt or a resource is found by the front end that serves them (a federated MCP
/// server's, say) and handed to the pipeline as an entry whose tool performs the read —
/// `None` when no such prompt or resource exists, which lookup refuses like an unknown tool.
#[derive(Clone, Default)]
pub enum Target {
    #[default]
    Tool,
    Prompt(Option<Entry>),
    Resource(Option<Entry>),
}

impl Target {
    pub fn kind(&self) -> TargetKind {
        match self {
            Target::Tool => TargetKind::Tool,
            Target::Prompt(_) => TargetKind::Prompt,
            Target::Resource(_) => TargetKind::Resource,
        }
    }
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::Tool => f.write_str("Tool"),
            Target::Prompt(e) | Target::Resource(e) => f
                .debug_tuple(self.kind().as_str())
                .field(&e.as_ref().map(|e| e.spec().name.as_str()))
                .finish(),
        }
    }
}

/// What a front end asks the gateway to do.
#[derive(Debug, Clone)]
pub struct CallRequest {
    /// Unique call id; generated when empty.
    pub call_id: String,
    pub session_id: SessionId,
    pub principal: Principal,
    pub role: Role,
    /// The tool's name, or the key of the prompt or resource ([`Target`]) the role's
    /// globs, quotas and rules match.
    pub tool: String,
    /// What the call acts on: a catalog tool unless a front end says otherwise.
    pub target: Target,
    pub arguments: Arguments,
    /// Makes a retried write call act once (R-EXE-3). Also read from an
    /// `idempotency_key` argument.
    pub idempotency_key: Option<String>,
    /// Fires when the caller gives up (Ctrl-C, dropped connection).
    pub cancel: CancellationToken,
    /// Wait for a pending approval (`Some(true)`) or return `approval_required` at once
    /// (`Some(false)`); `None` follows the gateway's configuration.
    pub wait_for_approval: Option<bool>,
    /// What becomes of this call's approval request if the call stops waiting for it
    /// (cancelled, disconnected): abandoned by default, kept pending when the caller asked
    /// for a request that outlives its wait.
    pub on_give_up: OnGiveUp,
    /// Receives [`CallEvent`]s while the call runs.
    pub events: Option<tokio::sync::mpsc::UnboundedSender<CallEvent>>,
    /// The client behind the call, passed to the tool ([`ToolContext::caller`]).
    pub caller: toolgate_core::CallerLink,
    /// The caller's trace context, passed to the tool ([`ToolContext::trace`]).
    pub trace: Option<toolgate_core::TraceContext>,
    /// Who vouched for the caller and what it says about them (issuer, subject, claims),
    /// when the front end authenticated one: audited, and read by policy rules.
    pub identity: Option<Arc<Identity>>,
}

/// The caller as its credential describes it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Identity {
    /// The access token's `iss`, or `toolgate` for a token toolgate issued.
    pub issuer: String,
    /// The token's `sub` (the token id for toolgate's own tokens).
    pub subject: String,
    /// Every claim of the token, as JSON (an object; empty for toolgate's own tokens).
    pub claims: Value,
}

impl CallRequest {
    pub fn new(tool: impl Into<String>, arguments: Arguments) -> Self {
        CallRequest {
            call_id: String::new(),
            session_id: "default".into(),
            principal: "local".into(),
            role: "default".into(),
            tool: tool.into(),
            target: Target::Tool,
            arguments,
            idempotency_key: None,
            cancel: CancellationToken::new(),
            wait_for_approval: None,
            on_give_up: OnGiveUp::Abandon,
            events: None,
            caller: toolgate_core::CallerLink::none(),
            trace: None,
            identity: None,
        }
    }

    pub fn with_role(mut self, role: impl Into<Role>) -> Self {
        self.role = role.into();
        self
    }

    pub fn with_principal(mut self, principal: impl Into<Principal>) -> Self {
        self.principal = principal.into();
        self
    }

    pub fn with_session(mut self, session: impl Into<SessionId>) -> Self {
        self.session_id = session.into();
        self
    }

    /// Reports `event` to the front end, if it listens.
    pub fn emit(&self, event: CallEvent) {
        if let Some(tx) = &self.events {
            let _ = tx.send(event);
        }
    }
}

/// Who let a call through that needed a human.
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalInfo {
    pub approval_id: String,
    pub approver: String,
}

/// The call in flight. Each field below `request` is set by exactly one layer.
#[derive(Debug)]
pub struct Call {
    pub request: CallRequest,
    pub started: Instant,
    /// The caller's role, resolved once by the first layer that needs it
    /// ([`Call::role_in`]); every later layer sees the same policy.
    pub role: Option<Arc<RolePolicy>>,
    /// Set by lookup.
    pub entry: Option<Entry>,
    /// Set by validation: the parsed, schema-valid arguments. Once the call is over, the
    /// audit layer moves them into the outcome record.
    pub args: Option<Value>,
    /// Set by validation: optional arguments sent as `null` that the schema does not allow
    /// to be null, dropped as if omitted (models often send `null` for "not given");
    /// recorded in the audit.
    pub dropped_nulls: Vec<String>,
    /// Set by policy.
    pub decision: Option<Decision>,
    /// Set by policy: the id of the `[[policy.rules]]` rule that decided, when one did.
    pub policy_rule: Option<String>,
    /// Set by approval when a human (or a standing grant) let the call through.
    pub approval: Option<ApprovalInfo>,
    /// Set by result governance when the output was cut.
    pub governance: Option<Governance>,
    /// Set by approval: how long the call waited for a human.
    pub approval_wait: Option<Duration>,
    /// Each layer the call entered and when, kept only while a recording span wants them
    /// (set by the telemetry layer; [`crate::Next::run`] appends).
    pub stages: Option<Vec<(&'static str, Instant)>>,
}

impl Call {
    pub fn new(mut request: CallRequest) -> Self {
        if request.call_id.is_empty() {
            request.call_id = new_call_id();
        }
        Call {
            request,
            started: Instant::now(),
            role: None,
            entry: None,
            args: None,
            dropped_nulls: Vec::new(),
            decision: None,
            policy_rule: None,
            approval: None,
            governance: None,
            approval_wait: None,
            stages: None,
        }
    }

    /// The context the tool sees; its progress becomes [`CallEvent::Progress`].
    pub fn tool_context(&self, cancel: CancellationToken) -> ToolContext {
        let progress = match &self.request.events {
            Some(tx) => {
                let tx = tx.clone();
                ProgressSink::new(move |u: ProgressUpdate| {
                    let _ = tx.send(CallEvent::Progress {
                        progress: u.progress,
                        total: u.total,
                        message: u.message,
                    });
                })
            }
            None => ProgressSink::none(),
        };
        ToolContext {
            call_id: self.request.call_id.clone(),
            session_id: self.request.session_id.clone(),
            principal: self.request.principal.clone(),
            role: self.request.role.clone(),
            cancel,
            progress,
            caller: self.request.caller.clone(),
            trace: self.request.trace.clone(),
        }
    }

    /// The caller's role policy among `roles`, resolved on first use and kept: lookup (for
    /// its hint), the allowlist and the risk policy judge the call by one role. `None`: no
    /// such role (the allowlist refuses the call).
    pub fn role_in(&mut self, roles: &Roles) -> Option<Arc<RolePolicy>> {
        if self.role.is_none() {
            self.role = roles.resolve(&self.request.role);
        }
        self.role.clone()
    }

    /// The entry set by lookup; layers inside lookup may rely on it.
    pub fn entry(&self) -> Result<&Entry, CallError> {
        self.entry
            .as_ref()
            .ok_or_else(|| internal("lookup did not run before this layer"))
    }

    /// The arguments set by validation.
    pub fn args(&self) -> Result<&Value, CallError> {
        self.args
            .as_ref()
            .ok_or_else(|| internal("validation did not run before this layer"))
    }
}

/// `call_` and a UUIDv7: milliseconds since the epoch, then 74 bits that only have to be
/// unique, not secret. They are SipHash (keyed once per thread from the OS) of a process-wide
/// counter, which spares every call a `getrandom` system call.
pub fn new_call_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    thread_local!(static KEYS: RandomState = RandomState::new());
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let (high, low) = KEYS.with(|keys| (keys.hash_one(n), keys.hash_one(!n)));
    let mut random = [0u8; 10];
    random[..8].copy_from_slice(&high.to_le_bytes());
    random[8..].copy_from_slice(&low.to_le_bytes()[..2]);
    let millis = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    let id = uuid::Builder::from_unix_timestamp_millis(millis, &random).into_uuid();
    format!("call_{}", id.simple())
}

/// A broken pipeline assembly: reported as a non-retryable execution failure, never a panic.
pub(crate) fn internal(what: &str) -> CallError {
    CallError::new(
        toolgate_protocol::ErrorCode::ExecutionFailed,
        format!("internal error: {what}"),
    )
}

/// What every layer returns.
pub type Outcome = Result<ToolOutput, CallError>;

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn call_ids_are_unique_version_7_uuids() {
        let ids: Vec<String> = (0..10_000).map(|_| new_call_id()).collect();
        assert_eq!(ids.iter().collect::<HashSet<_>>().len(), ids.len());
        let uuid = uuid::Uuid::parse_str(ids[0].strip_prefix("call_").unwrap()).unwrap();
        assert_eq!(
            (uuid.get_version_num(), uuid.get_variant()),
            (7, uuid::Variant::RFC4122)
        );
    }

    #[test]
    fn a_tools_progress_becomes_a_call_event_for_a_listening_front_end() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let mut request = CallRequest::new("t", Arguments::Json(Value::Null));
        request.events = Some(tx);
        let ctx = Call::new(request).tool_context(CancellationToken::new());
        ctx.progress.report(ProgressUpdate {
            progress: 2.0,
            total: Some(5.0),
            message: Some("two of five".into()),
        });
        assert_eq!(
            rx.try_recv().unwrap(),
            CallEvent::Progress {
                progress: 2.0,
                total: Some(5.0),
                message: Some("two of five".into()),
            }
        );
        // Nobody listening: reporting is a no-op.
        let quiet = Call::new(CallRequest::new("t", Arguments::Json(Value::Null)))
            .tool_context(CancellationToken::new());
        quiet.progress.report(ProgressUpdate {
            progress: 1.0,
            total: None,
            message: None,
        });
    }
}
