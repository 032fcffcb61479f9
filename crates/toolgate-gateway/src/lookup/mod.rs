//! Lookup: the named tool must exist in the current catalog snapshot and be callable.
//! Unknown → `unknown_tool` (with the closest name the caller's role may see as a hint: a
//! hint never names a tool hidden from it); server down → `unavailable`; definition changed
//! since pinned → `policy_denied` (R-REG-5). A prompt or resource ([`Target`]) comes with
//! the entry its front end found and passes the same availability checks; none found →
//! `unknown_tool` naming what was asked for.

use std::sync::Arc;

use async_trait::async_trait;
use toolgate_protocol::{CallError, ErrorCode};
use toolgate_registry::{Availability, Catalog};

use crate::call::{Call, Outcome, Target, TargetKind};
use crate::layer::{Layer, Next};
use crate::policy::Roles;

pub struct LookupLayer {
    catalog: Arc<Catalog>,
    roles: Arc<Roles>,
}

impl LookupLayer {
    pub fn new(catalog: Arc<Catalog>, roles: Arc<Roles>) -> Self {
        LookupLayer { catalog, roles }
    }
}

#[async_trait]
impl Layer for LookupLayer {
    fn name(&self) -> &'static str {
        "lookup"
    }

    async fn handle(&self, call: &mut Call, next: Next<'_>) -> Outcome {
        let role = call.role_in(&self.roles);
        let name = &call.request.tool;
        let found = match &call.request.target {
            Target::Tool => self.catalog.get(name),
            Target::Prompt(entry) | Target::Resource(entry) => entry.clone(),
        };
        let Some(entry) = found else {
            let kind = call.request.target.kind();
            if kind != TargetKind::Tool {
                return Err(CallError::new(
                    ErrorCode::UnknownTool,
                    format!("no {} named `{name}`", kind.as_str()),
                ));
            }
            let visible = |tool: &str| role.as_ref().is_some_and(|r| r.allows(tool));
            return Err(unknown(&self.catalog, name, visible));
        };
        let refusal = match &entry.availability {
            Availability::Available => None,
            Availability::Unavailable(reason) => Some(CallError::new(
                ErrorCode::Unavailable,
                format!("tool `{name}` is unavailable: {reason}"),
            )),
            Availability::Quarantined(reason) => {
                let kind = call.request.target.kind();
                let e = CallError::new(
                    ErrorCode::PolicyDenied,
                    format!("{} `{name}` is quarantined: {reason}", kind.as_str()),
                );
                // A prompt's reason names its own pin (`prompt:{name}`).
                Some(if kind == TargetKind::Tool {
                    e.with_hint(format!(
                        "an operator must review and run `toolgate tools approve-change {name}`"
                    ))
                } else {
                    e
                })
            }
        };
        // Known even when refused, so the audit record names the tool's source and risk.
        call.entry = Some(entry);
        match refusal {
            Some(e) => Err(e),
            None => next.run(call).await,
        }
    }
}

fn unknown(catalog: &Catalog, name: &str, visible: impl Fn(&str) -> bool) -> CallError {
    let snap = catalog.snapshot();
    let names = snap
        .entries()
        .filter(|e| e.is_available() && visible(&e.spec().name))
        .map(|e| e.spec().name.as_str());
    let err = CallError::new(ErrorCode::UnknownTool, format!("no tool named `{name}`"));
    match closest_name(name, names) {
        Some(n) => err.with_hint(format!(
            "did you mean `{n}`? `toolgate tools list` shows all tools"
        )),
        None => err.with_hint("`toolgate tools list` shows the available tools"),
    }
}

/// The name among `names` closest to `name` for a "did you mean" hint: within three edits,
/// or one containing the other; the fewest edits first, then by name. Every front end's
/// hint comes from here, given only the names its caller may see.
pub fn closest_name<'a>(name: &str, names: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    names
        .into_iter()
        .map(|n| (edit_distance(name, n), n))
        .filter(|(d, n)| *d <= 3 || n.contains(name) || name.contains(n))
        .min()
        .map(|(_, n)| n)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::call::{Arguments, CallRequest};
    use crate::policy::RoleConfig;
    use crate::testing::{echo_tool, run_layer, run_layer_on};
    use serde_json::json;
    use std::collections::BTreeMap;
    use toolgate_registry::Entry;

    fn all_roles() -> Arc<Roles> {
        Arc::new(Roles::compile(&BTreeMap::new()).unwrap())
    }

    #[tokio::test]
    async fn unknown_tool_suggests_the_closest_name() {
        let catalog = Arc::new(Catalog::new());
        catalog
            .register(echo_tool("read_file", toolgate_protocol::Risk::Read))
            .unwrap();
        let err = run_layer(
            &LookupLayer::new(catalog, all_roles()),
            "read_fil",
            json!({}),
        )
        .await
        .unwrap_err();
        assert_eq!(err.code, ErrorCode::UnknownTool);
        assert_eq!(
            err.hint.as_deref(),
            Some("did you mean `read_file`? `toolgate tools list` shows all tools")
        );
    }

    #[tokio::test]
    async fn unavailable_and_quarantined_are_refused() {
        let catalog = Arc::new(Catalog::new());
        catalog
            .register(echo_tool("a", toolgate_protocol::Risk::Read))
            .unwrap();
        catalog
            .register(echo_tool("b", toolgate_protocol::Risk::Read))
            .unwrap();
        catalog.set_availability("a", Availability::Unavailable("server down".into()));
        catalog.set_availability("b", Availability::Quarantined("description changed".into()));
        let layer = LookupLayer::new(catalog, all_roles());
        let a = run_layer(&layer, "a", json!({})).await.unwrap_err();
        assert_eq!((a.code, a.retryable), (ErrorCode::Unavailable, true));
        let b = run_layer(&layer, "b", json!({})).await.unwrap_err();
        assert_eq!(
            b,
            CallError::new(
                ErrorCode::PolicyDenied,
                "tool `b` is quarantined: description changed"
            )
            .with_hint("an operator must review and run `toolgate tools approve-change b`")
        );
    }

    /// A prompt or resource comes with the entry its front end found: lookup never asks the
    /// catalog for it (a tool of the same name is not it), refuses a missing one by kind and
    /// a quarantined one like a tool.
    #[tokio::test]
    async fn a_prompt_or_resource_is_the_entry_it_came_with() {
        let catalog = Arc::new(Catalog::new());
        catalog
            .register(echo_tool("mcp__s__greet", toolgate_protocol::Risk::Read))
            .unwrap();
        let layer = LookupLayer::new(catalog, all_roles());
        let ask = |target: Target| {
            let mut request = CallRequest::new("mcp__s__greet", Arguments::Json(json!({})));
            request.target = target;
            Call::new(request)
        };
        let missing = run_layer_on(&layer, &mut ask(Target::Prompt(None)))
            .await
            .unwrap_err();
        assert_eq!(
            (missing.code, missing.message.as_str()),
            (ErrorCode::UnknownTool, "no prompt named `mcp__s__greet`")
        );
        let quarantined = Entry {
            tool: echo_tool("mcp__s__greet", toolgate_protocol::Risk::Read),
            availability: Availability::Quarantined("definition changed".into()),
        };
        let refused = run_layer_on(&layer, &mut ask(Target::Prompt(Some(quarantined))))
            .await
            .unwrap_err();
        assert_eq!(
            (refused.code, refused.message.as_str(), refused.hint),
            (
                ErrorCode::PolicyDenied,
                "prompt `mcp__s__greet` is quarantined: definition changed",
                None
            )
        );
        let found = Entry {
            tool: echo_tool("mcp__s__greet", toolgate_protocol::Risk::Read),
            availability: Availability::Available,
        };
        let mut call = ask(Target::Resource(Some(found)));
        run_layer_on(&layer, &mut call).await.unwrap();
        assert!(call.entry.is_some());
    }

    #[tokio::test]
    async fn found_tool_reaches_the_inner_layers() {
        let catalog = Arc::new(Catalog::new());
        catalog
            .register(echo_tool("a", toolgate_protocol::Risk::Read))
            .unwrap();
        let out = run_layer(
            &LookupLayer::new(catalog, all_roles()),
            "a",
            json!({"x": 1}),
        )
        .await
        .unwrap();
        assert_eq!(out.data, json!({"reached": "a"}));
    }

    /// A hint never names a tool the caller's role may not see (issue 13: hidden tools
    /// stay hidden on every front end, not only MCP).
    #[tokio::test]
    async fn the_hint_names_only_tools_the_role_may_see() {
        let catalog = Arc::new(Catalog::new());
        for name in ["read_file", "secret_admin_reset"] {
            catalog
                .register(echo_tool(name, toolgate_protocol::Risk::Read))
                .unwrap();
        }
        let roles = BTreeMap::from([(
            "narrow".to_owned(),
            RoleConfig {
                tools: vec!["read_file".to_owned()],
                ..RoleConfig::default()
            },
        )]);
        let layer = LookupLayer::new(catalog, Arc::new(Roles::compile(&roles).unwrap()));
        let ask = |role: &str| {
            Call::new(
                CallRequest::new("secret_admin_rese", Arguments::Json(json!({}))).with_role(role),
            )
        };
        let hidden = run_layer_on(&layer, &mut ask("narrow")).await.unwrap_err();
        assert_eq!(hidden.code, ErrorCode::UnknownTool);
        assert!(
            !hidden
                .hint
                .as_deref()
                .unwrap_or("")
                .contains("secret_admin_reset"),
            "{hidden:?}"
        );
        let seen = run_layer_on(&layer, &mut ask("default")).await.unwrap_err();
        assert_eq!(
            seen.hint.as_deref(),
            Some("did you mean `secret_admin_reset`? `toolgate tools list` shows all tools")
        );
    }

    #[test]
    fn edit_distance_counts_edits_and_the_closest_name_wins() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "ab"), 2);
        assert_eq!(edit_distance("same", "same"), 0);
        let names = ["list_dir", "read_file", "read_files"];
        assert_eq!(closest_name("read_fil", names), Some("read_file"));
        assert_eq!(closest_name("shell", names), None);
    }
}
