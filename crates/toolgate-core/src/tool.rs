//! The tool trait: metadata, an optional pre-approval policy check, and the call itself.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use toolgate_protocol::{ToolOutput, ToolSpec};

use crate::{ToolContext, ToolError};

/// A tool: a [`ToolSpec`] plus an implementation. Tools never see a call that failed
/// lookup, role, schema, policy or approval: the gateway runs them last.
#[async_trait]
pub trait Tool: Send + Sync + 'static {
    /// The catalog entry; must stay identical for the tool's lifetime.
    fn spec(&self) -> &ToolSpec;

    /// A cheap, side-effect-free policy check run before approval (workspace confinement,
    /// for example), so that a human is never asked to approve what would be refused.
    /// `args` already satisfy the input schema. Must be repeated inside `call` when the
    /// world may change in between (paths are re-resolved at execution).
    fn check(&self, _args: &Value, _ctx: &ToolContext) -> Result<(), ToolError> {
        Ok(())
    }

    /// The workspace-relative paths this call names, as the tool resolves them now (a
    /// symlink inside the workspace followed), for `[[policy.rules]]`' `facts.paths`.
    /// `None` when the tool names no path or cannot resolve one (its `check` then refuses
    /// the call); the gateway normalises the arguments lexically instead. A decision
    /// aid, not a handle: the tree may change before the call runs.
    fn policy_paths(&self, _args: &Value) -> Option<Vec<String>> {
        None
    }

    /// Runs the tool. `args` satisfy the input schema.
    async fn call(&self, args: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError>;
}

/// The shared handle the catalog and the gateway pass around.
pub type DynTool = Arc<dyn Tool>;
