//! `client_requests` of a server entry: where the server's own requests to its client go
//! — `sampling/createMessage`, `elicitation/create`, `roots/list` (`docs/mcp.md`).
//!
//! The default is `approval`: toolgate offers the server only elicitation, answered by an
//! operator. `forward` is the operator's opt-in to let the server reach the end user's
//! client (and its model, through sampling).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClientRequests {
    /// To the client whose call is running on the server, when it declared the capability;
    /// otherwise an elicitation goes to the approval channel and sampling or roots are
    /// refused. toolgate then offers the server sampling, elicitation and roots.
    Forward,
    /// Elicitation always to the approval channel (an operator answers); sampling and roots
    /// are not offered.
    #[default]
    Approval,
    /// All refused (an elicitation is declined).
    Refuse,
}

impl ClientRequests {
    pub fn is_default(&self) -> bool {
        *self == ClientRequests::Approval
    }
}
