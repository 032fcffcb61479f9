//! Who may decide from a chat: a chat user mapped (in the channel's `operators`) to a
//! toolgate principal that holds the operator right *now* — asked at every tap, so revoking
//! a principal's operator token takes its chat right away with it.

/// Answers whether a principal is an operator; the server implements it over its
/// configured and issued tokens and `[approvals] operators`.
pub trait OperatorCheck: Send + Sync + 'static {
    fn is_operator(&self, principal: &str) -> bool;
}
