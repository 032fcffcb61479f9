//! [`Caller`]: who a request acts as, as every front end (the HTTP API, the MCP endpoint over
//! HTTP or stdio, the chat channels) resolved it before building a [`CallRequest`](crate::CallRequest).

use std::sync::Arc;

use toolgate_protocol::{Principal, Role};

use crate::call::Identity;

/// Who a request acts as.
#[derive(Debug, Clone, PartialEq)]
pub struct Caller {
    pub principal: Principal,
    pub role: Role,
    /// May decide approvals and read the audit.
    pub operator: bool,
    /// Who vouched for the caller (issuer, subject, claims); `None` for the anonymous grant
    /// and local development.
    pub identity: Option<Arc<Identity>>,
}

impl Caller {
    /// A caller known by name only (no credential behind it).
    pub fn named(principal: impl Into<Principal>, role: impl Into<Role>, operator: bool) -> Self {
        Caller {
            principal: principal.into(),
            role: role.into(),
            operator,
            identity: None,
        }
    }
}
