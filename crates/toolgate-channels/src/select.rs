//! Which requests a channel announces: its `roles`, `tools` (globs) and `risks`, each
//! ignored when empty.

use globset::{Glob, GlobSet, GlobSetBuilder};
use toolgate_protocol::Risk;
use toolgate_store::approvals::ApprovalRequest;

use crate::config::ChannelConfig;

#[derive(Debug, Clone)]
pub struct Selector {
    roles: Vec<String>,
    tools: Option<GlobSet>,
    risks: Vec<Risk>,
}

impl Selector {
    /// From a checked channel (its globs compile).
    pub fn new(config: &ChannelConfig) -> Selector {
        let tools = (!config.tools.is_empty()).then(|| {
            let mut set = GlobSetBuilder::new();
            for glob in config.tools.iter().filter_map(|g| Glob::new(g).ok()) {
                set.add(glob);
            }
            set.build().unwrap_or_else(|_| GlobSet::empty())
        });
        Selector {
            roles: config.roles.clone(),
            tools,
            risks: config.risks.clone(),
        }
    }

    pub fn selects(&self, r: &ApprovalRequest) -> bool {
        (self.roles.is_empty() || self.roles.iter().any(|role| *role == r.role))
            && self.tools.as_ref().is_none_or(|set| set.is_match(&r.tool))
            && (self.risks.is_empty() || self.risks.contains(&r.risk))
    }
}
