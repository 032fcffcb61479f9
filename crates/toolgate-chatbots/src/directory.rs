//! [`Directory`]: what a chat user's principal may do now — the role they talk with and
//! whether they hold the operator right. Asked at every message and tap, so revoking a
//! principal's token takes its chat with it.

use toolgate_protocol::Role;

/// A principal's standing now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Standing {
    /// The role of the principal's active token (configured or issued).
    pub role: Role,
    /// May decide any approval.
    pub operator: bool,
}

/// Answers for principals; the server implements it over its configured and issued tokens.
pub trait Directory: Send + Sync + 'static {
    /// `None` when no active token stands for `principal`.
    fn standing(&self, principal: &str) -> Option<Standing>;
    /// Whether `principal` holds the operator right (also without a token of its own, e.g.
    /// `[approvals] operators`).
    fn is_operator(&self, principal: &str) -> bool;
}
