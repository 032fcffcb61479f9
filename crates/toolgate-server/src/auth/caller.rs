//! The authenticated caller, put in each request's extensions by `authenticate`.

/// Who a request acts as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub principal: String,
    pub role: String,
    /// May decide approvals and read the audit.
    pub operator: bool,
}
