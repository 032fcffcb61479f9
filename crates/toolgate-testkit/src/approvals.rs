//! Approval requests as a front end would file them, for the store's and the server's
//! suites.

use std::time::Duration;

use serde_json::Value;
use toolgate_protocol::Risk;
use toolgate_store::approvals::{NewApproval, canonical_hash};
use toolgate_store::redact::Redactor;

/// A pending request of `principal` in `session` (role `coder`) to call the write tool
/// `tool` with `args`, expiring after `ttl`.
pub fn new_approval(
    principal: &str,
    session: &str,
    tool: &str,
    args: &Value,
    ttl: Duration,
) -> NewApproval {
    NewApproval {
        issuer: None,
        subject: None,
        principal: principal.into(),
        session: session.into(),
        role: "coder".into(),
        tool: tool.into(),
        risk: Risk::Write,
        args_hash: canonical_hash(args),
        arguments: Redactor::shared().seal(args),
        requires_confirmation: false,
        ttl,
    }
}
