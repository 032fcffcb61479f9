//! The context one call runs in.

use crate::caller::CallerLink;
use tokio_util::sync::CancellationToken;
use toolgate_protocol::{Principal, Role, SessionId};

use crate::progress::ProgressSink;
use crate::trace::TraceContext;

/// Who is calling and how to notice that the caller gave up.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// Unique id of this call (also the audit record's `call_id`).
    pub call_id: String,
    /// Conversation or CLI session the call belongs to.
    pub session_id: SessionId,
    /// Authenticated caller.
    pub principal: Principal,
    /// Role the caller acts in.
    pub role: Role,
    /// Fires on cancellation or timeout; long-running tools must watch it.
    pub cancel: CancellationToken,
    /// Where the tool reports progress (passed on to the caller where the front end can).
    pub progress: ProgressSink,
    /// The client behind the call, where the front end can reach it (MCP sessions).
    pub caller: CallerLink,
    /// The caller's trace context, for the requests the tool sends on (MCP `_meta`).
    pub trace: Option<TraceContext>,
}

impl ToolContext {
    /// A context for tests and examples.
    pub fn for_test() -> Self {
        ToolContext {
            call_id: "call_test".to_owned(),
            session_id: "test".into(),
            principal: "tester".into(),
            role: "default".into(),
            cancel: CancellationToken::new(),
            progress: ProgressSink::none(),
            caller: CallerLink::none(),
            trace: None,
        }
    }
}
