//! Workspace and risk policy: the role's decision for this tool and risk (allow | ask |
//! deny), and the tool's own policy check (workspace confinement), both before any human is
//! asked. Sets [`Call::decision`] for the approval layer.

mod role;

use std::sync::Arc;

use async_trait::async_trait;
use toolgate_protocol::{CallError, ErrorCode};

pub use role::{
    Decision, DecisionName, RoleConfig, RoleError, RolePolicy, Roles, RuleConfig, default_roles,
};

use crate::call::{Call, Outcome};
use crate::layer::{Layer, Next};

pub struct PolicyLayer {
    roles: Arc<Roles>,
}

impl PolicyLayer {
    pub fn new(roles: Arc<Roles>) -> Self {
        PolicyLayer { roles }
    }
}

#[async_trait]
impl Layer for PolicyLayer {
    fn name(&self) -> &'static str {
        "policy"
    }

    async fn handle(&self, call: &mut Call, next: Next<'_>) -> Outcome {
        let entry = call.entry()?.clone();
        let spec = entry.spec();
        let role = call.role_in(&self.roles).ok_or_else(|| {
            CallError::new(
                ErrorCode::Forbidden,
                format!("unknown role `{}`", call.request.role),
            )
        })?;
        let decision = role.decide(&spec.name, spec.risk);
        if decision == Decision::Deny {
            return Err(CallError::new(
                ErrorCode::PolicyDenied,
                format!(
                    "policy denies `{}` ({} risk) for role `{}`",
                    spec.name,
                    spec.risk,
                    role.name()
                ),
            )
            .with_hint("ask an operator to change the role's policy in toolgate.toml"));
        }
        let ctx = call.tool_context(call.request.cancel.clone());
        entry
            .tool
            .check(call.args()?, &ctx)
            .map_err(toolgate_core::ToolError::into_call_error)?;
        call.decision = Some(decision);
        next.run(call).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{call_for, echo_tool, run_layer_on};
    use serde_json::json;
    use std::collections::BTreeMap;
    use toolgate_protocol::Risk;

    fn layer() -> PolicyLayer {
        PolicyLayer::new(Arc::new(Roles::compile(&BTreeMap::new()).unwrap()))
    }

    #[tokio::test]
    async fn deny_stops_and_allow_passes() {
        let mut call = call_for(echo_tool("w", Risk::Write), json!({}));
        call.request.role = "readonly".into();
        let err = run_layer_on(&layer(), &mut call).await.unwrap_err();
        assert_eq!(err.code, ErrorCode::PolicyDenied);
        assert_eq!(
            err.message,
            "policy denies `w` (write risk) for role `readonly`"
        );

        let mut call = call_for(echo_tool("r", Risk::Read), json!({}));
        assert!(run_layer_on(&layer(), &mut call).await.is_ok());
        assert_eq!(call.decision, Some(Decision::Allow));
    }

    #[tokio::test]
    async fn ask_is_recorded_for_the_approval_layer() {
        let mut call = call_for(echo_tool("sh", Risk::Dangerous), json!({}));
        run_layer_on(&layer(), &mut call).await.unwrap();
        assert_eq!(call.decision, Some(Decision::Ask { confirm: true }));
    }

    #[tokio::test]
    async fn the_tools_own_check_runs_before_approval() {
        let mut call = call_for(
            echo_tool("w", Risk::Write),
            json!({"deny": "outside the workspace"}),
        );
        let err = run_layer_on(&layer(), &mut call).await.unwrap_err();
        assert_eq!(
            (err.code, err.message.as_str()),
            (ErrorCode::PolicyDenied, "outside the workspace")
        );
        assert_eq!(call.decision, None);
    }
}
