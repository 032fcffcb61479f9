//! Workspace and risk policy, before any human is asked: the first `[[policy.rules]]` rule
//! whose CEL condition holds decides (allow | ask | deny); when none does, the role's
//! decision for this tool and risk. Then the tool's own policy check (workspace
//! confinement). Sets [`Call::decision`] for the approval layer, and [`Call::policy_rule`]
//! when a rule decided.
//!
//! # Layout
//! - [`role`](RolePolicy): roles — allowlist, per-risk decisions, per-tool glob rules.
//! - [`rules`](PolicyRules): `[[policy.rules]]`, compiled CEL conditions, fail closed.
//! - `vars`: the variables a condition reads ([`PolicyInput`]), built once per call.
//! - `facts`: the `facts` variable ([`Facts`]): a built-in call's paths normalised, the
//!   shell command as argv words and programs (`shell_parse`), so rules match the act.
//! - `guard`: what Rust can tell of a condition (`tool == "…"`, `has(args.k)`, `&&`, …)
//!   before evaluating it; most rules are settled for most calls without CEL.
//! - `patterns`: `matches` with the rules' literal regexes compiled once.

mod facts;
mod guard;
mod patterns;
mod role;
mod rules;
mod shell_parse;
mod vars;

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::json;
use toolgate_protocol::{CallError, ErrorCode};

pub use facts::{Facts, normalise};
pub use role::{
    Decision, DecisionName, RoleConfig, RoleError, RolePolicy, Roles, RuleConfig, default_roles,
};
pub use rules::{
    PolicyConfig, PolicyRule, PolicyRuleConfig, PolicyRuleError, PolicyRules, RuleMatch, Verdict,
};
pub use vars::{PolicyInput, VARIABLES};

use crate::call::{Call, Outcome};
use crate::layer::{Layer, Next};

/// Configuration the policy layer could not compile: a role or a rule.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error(transparent)]
    Role(#[from] RoleError),
    #[error(transparent)]
    Rule(#[from] PolicyRuleError),
    #[error(transparent)]
    Quota(#[from] crate::quota::QuotaError),
}

pub struct PolicyLayer {
    roles: Arc<Roles>,
    rules: Arc<PolicyRules>,
}

impl PolicyLayer {
    pub fn new(roles: Arc<Roles>, rules: Arc<PolicyRules>) -> Self {
        PolicyLayer { roles, rules }
    }
}

/// The error of a call a rule denies: names the rule (and why it matched, when it failed
/// closed); `details.rule` carries its id.
pub fn rule_denial(tool: &str, m: &RuleMatch<'_>) -> CallError {
    let id = m.rule.id();
    let mut message = format!("policy rule {id:?} denies `{tool}`");
    if let Some(reason) = m.rule.reason() {
        message.push_str(": ");
        message.push_str(reason);
    }
    let mut details = json!({"rule": id});
    if let Some(error) = &m.error {
        message.push_str(&format!(
            " (its condition failed: {error}; a failing deny rule denies)"
        ));
        details["error"] = json!(error);
    }
    CallError::new(ErrorCode::PolicyDenied, message)
        .with_details(details)
        .with_hint("ask an operator to change [[policy.rules]] in toolgate.toml")
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
        let identity = call.request.identity.as_deref();
        let resolved = if self.rules.reads_facts() {
            entry.tool.policy_paths(call.args()?)
        } else {
            None
        };
        let input = PolicyInput {
            tool: &spec.name,
            target: call.request.target.kind(),
            args: call.args()?,
            claims: identity.map(|i| &i.claims),
            principal: &call.request.principal,
            role: role.name(),
            risk: spec.risk,
            source: &spec.source,
            issuer: identity.map_or("", |i| i.issuer.as_str()),
            subject: identity.map_or("", |i| i.subject.as_str()),
            paths: resolved.as_deref(),
        };
        let decision = match self.rules.first_match(input) {
            Some(m) => {
                if let Some(error) = &m.error {
                    tracing::warn!(rule = m.rule.id(), %error, "policy rule failed closed");
                }
                call.policy_rule = Some(m.rule.id().to_owned());
                let decision = m.rule.decision(spec.risk);
                if decision == Decision::Deny {
                    return Err(rule_denial(&spec.name, &m));
                }
                decision
            }
            None => role.decide(&spec.name, spec.risk),
        };
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
            .with_hint(format!(
                "call with a role whose policy allows it (an operator issues a token of that role: `toolgate token create --principal NAME --role ROLE`), or ask an operator to change role `{}`'s policy in toolgate.toml",
                role.name()
            )));
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
mod facts_tests;
#[cfg(test)]
mod guard_tests;
#[cfg(test)]
mod tests;
