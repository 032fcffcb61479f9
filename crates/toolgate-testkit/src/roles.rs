//! The roles the gateway and server suites test against, beside the built-in `default` and
//! `readonly`: `narrow` sees only `echo`; `auto` is allowed everything without asking.

use std::collections::BTreeMap;

use toolgate_gateway::policy::{DecisionName, RoleConfig, RuleConfig};

pub fn test_roles() -> BTreeMap<String, RoleConfig> {
    BTreeMap::from([
        (
            "narrow".to_owned(),
            RoleConfig {
                tools: vec!["echo".into()],
                ..RoleConfig::default()
            },
        ),
        (
            "auto".to_owned(),
            RoleConfig {
                rules: vec![RuleConfig {
                    tool: "*".into(),
                    decision: DecisionName::Allow,
                    confirm: None,
                }],
                ..RoleConfig::default()
            },
        ),
    ])
}
