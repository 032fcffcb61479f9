//! Roles: which tools a role may see and call (names and globs), and what happens per risk
//! (allow | ask | deny), with per-tool rules on top (R-APR-1). Operator configuration always
//! wins over tool annotations, which are untrusted hints.

use std::collections::BTreeMap;
use std::sync::Arc;

use globset::{Glob, GlobMatcher, GlobSet, GlobSetBuilder};
use serde::{Deserialize, Serialize};
use toolgate_protocol::Risk;

/// What the policy says about one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Allow,
    /// A human must approve; with `confirm` the approver types the tool name.
    Ask {
        confirm: bool,
    },
    Deny,
}

/// A decision as written in configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DecisionName {
    Allow,
    Ask,
    Deny,
}

/// A per-tool rule: the first rule whose glob matches the tool name decides.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleConfig {
    pub tool: String,
    pub decision: DecisionName,
    /// Require the typed confirmation (default: only for dangerous tools).
    #[serde(default)]
    pub confirm: Option<bool>,
}

/// `[roles.NAME]` in toolgate.toml.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoleConfig {
    /// Allowlist of tool names or globs (`read_*`, `mcp__github__*`).
    #[serde(default = "all_tools")]
    pub tools: Vec<String>,
    #[serde(default = "allow")]
    pub read: DecisionName,
    #[serde(default = "ask")]
    pub write: DecisionName,
    #[serde(default = "ask")]
    pub dangerous: DecisionName,
    #[serde(default)]
    pub rules: Vec<RuleConfig>,
}

fn all_tools() -> Vec<String> {
    vec!["*".to_owned()]
}
fn allow() -> DecisionName {
    DecisionName::Allow
}
fn ask() -> DecisionName {
    DecisionName::Ask
}

impl Default for RoleConfig {
    fn default() -> Self {
        RoleConfig {
            tools: all_tools(),
            read: DecisionName::Allow,
            write: DecisionName::Ask,
            dangerous: DecisionName::Ask,
            rules: Vec::new(),
        }
    }
}

impl RoleConfig {
    /// Sees every tool, may only read.
    pub fn read_only() -> Self {
        RoleConfig {
            write: DecisionName::Deny,
            dangerous: DecisionName::Deny,
            ..RoleConfig::default()
        }
    }
}

/// The built-in roles, overridable by configuration: `default` (read allow, write ask,
/// dangerous ask + typed confirmation) and `readonly`.
pub fn default_roles() -> BTreeMap<String, RoleConfig> {
    BTreeMap::from([
        ("default".to_owned(), RoleConfig::default()),
        ("readonly".to_owned(), RoleConfig::read_only()),
    ])
}

#[derive(Debug, thiserror::Error)]
#[error("role `{role}`: invalid tool pattern `{pattern}`: {source}")]
pub struct RoleError {
    pub role: String,
    pub pattern: String,
    #[source]
    pub source: globset::Error,
}

/// A compiled role.
#[derive(Debug, Clone)]
pub struct RolePolicy {
    name: String,
    allowed: GlobSet,
    read: DecisionName,
    write: DecisionName,
    dangerous: DecisionName,
    rules: Vec<(GlobMatcher, DecisionName, Option<bool>)>,
}

fn glob(role: &str, pattern: &str) -> Result<Glob, RoleError> {
    Glob::new(pattern).map_err(|source| RoleError {
        role: role.to_owned(),
        pattern: pattern.to_owned(),
        source,
    })
}

impl RolePolicy {
    pub fn compile(name: &str, config: &RoleConfig) -> Result<Self, RoleError> {
        let mut builder = GlobSetBuilder::new();
        for p in &config.tools {
            builder.add(glob(name, p)?);
        }
        let allowed = builder.build().map_err(|source| RoleError {
            role: name.to_owned(),
            pattern: config.tools.join(", "),
            source,
        })?;
        let rules = config
            .rules
            .iter()
            .map(|r| {
                Ok((
                    glob(name, &r.tool)?.compile_matcher(),
                    r.decision,
                    r.confirm,
                ))
            })
            .collect::<Result<_, RoleError>>()?;
        Ok(RolePolicy {
            name: name.to_owned(),
            allowed,
            read: config.read,
            write: config.write,
            dangerous: config.dangerous,
            rules,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether the role may see and call `tool` at all.
    pub fn allows(&self, tool: &str) -> bool {
        self.allowed.is_match(tool)
    }

    /// The decision for a call of `tool` with `risk`.
    pub fn decide(&self, tool: &str, risk: Risk) -> Decision {
        let (name, confirm) = self
            .rules
            .iter()
            .find(|(m, _, _)| m.is_match(tool))
            .map(|(_, d, c)| (*d, *c))
            .unwrap_or_else(|| {
                let d = match risk {
                    Risk::Read => self.read,
                    Risk::Write => self.write,
                    Risk::Dangerous => self.dangerous,
                };
                (d, None)
            });
        match name {
            DecisionName::Allow => Decision::Allow,
            DecisionName::Deny => Decision::Deny,
            DecisionName::Ask => Decision::Ask {
                confirm: confirm.unwrap_or(risk == Risk::Dangerous),
            },
        }
    }
}

/// All compiled roles.
#[derive(Debug, Clone, Default)]
pub struct Roles {
    roles: BTreeMap<String, Arc<RolePolicy>>,
}

impl Roles {
    /// Built-in roles overlaid with `configured` ones (same name replaces).
    pub fn compile(configured: &BTreeMap<String, RoleConfig>) -> Result<Self, RoleError> {
        let mut all = default_roles();
        all.extend(configured.iter().map(|(k, v)| (k.clone(), v.clone())));
        let roles = all
            .iter()
            .map(|(name, cfg)| Ok((name.clone(), Arc::new(RolePolicy::compile(name, cfg)?))))
            .collect::<Result<_, RoleError>>()?;
        Ok(Roles { roles })
    }

    pub fn get(&self, role: &str) -> Option<&RolePolicy> {
        self.roles.get(role).map(Arc::as_ref)
    }

    /// The role named `role`, shared: what a call holds once it is resolved
    /// ([`crate::Call::role_in`]).
    pub fn resolve(&self, role: &str) -> Option<Arc<RolePolicy>> {
        self.roles.get(role).cloned()
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.roles.keys().map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_risk() {
        let roles = Roles::compile(&BTreeMap::new()).unwrap();
        let d = roles.get("default").unwrap();
        assert_eq!(d.decide("x", Risk::Read), Decision::Allow);
        assert_eq!(d.decide("x", Risk::Write), Decision::Ask { confirm: false });
        assert_eq!(
            d.decide("x", Risk::Dangerous),
            Decision::Ask { confirm: true }
        );
        let r = roles.get("readonly").unwrap();
        assert_eq!(r.decide("x", Risk::Write), Decision::Deny);
    }

    #[test]
    fn globs_and_rules() {
        let cfg: RoleConfig = toml::from_str(
            r#"
            tools = ["read_*", "mcp__github__*"]
            write = "allow"
            rules = [{ tool = "mcp__github__delete_*", decision = "ask", confirm = true },
                     { tool = "mcp__github__*", decision = "deny" }]
            "#,
        )
        .unwrap();
        let p = RolePolicy::compile("dev", &cfg).unwrap();
        assert!(p.allows("read_file") && p.allows("mcp__github__x") && !p.allows("shell"));
        assert_eq!(
            p.decide("mcp__github__delete_repo", Risk::Read),
            Decision::Ask { confirm: true }
        );
        assert_eq!(p.decide("mcp__github__list", Risk::Read), Decision::Deny);
        assert_eq!(p.decide("write_file", Risk::Write), Decision::Allow);
    }

    #[test]
    fn bad_glob_names_role_and_pattern() {
        let cfg = RoleConfig {
            tools: vec!["[".into()],
            ..RoleConfig::default()
        };
        let err = RolePolicy::compile("ops", &cfg).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("role `ops`: invalid tool pattern `[`")
        );
    }
}
