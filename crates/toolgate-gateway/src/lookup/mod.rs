//! Lookup: the named tool must exist in the current catalog snapshot and be callable.
//! Unknown → `unknown_tool` (with the closest names as a hint); server down →
//! `unavailable`; definition changed since pinned → `policy_denied` (R-REG-5).

use std::sync::Arc;

use async_trait::async_trait;
use toolgate_protocol::{CallError, ErrorCode};
use toolgate_registry::{Availability, Catalog};

use crate::call::{Call, Outcome};
use crate::layer::{Layer, Next};

pub struct LookupLayer {
    catalog: Arc<Catalog>,
}

impl LookupLayer {
    pub fn new(catalog: Arc<Catalog>) -> Self {
        LookupLayer { catalog }
    }
}

#[async_trait]
impl Layer for LookupLayer {
    fn name(&self) -> &'static str {
        "lookup"
    }

    async fn handle(&self, call: &mut Call, next: Next<'_>) -> Outcome {
        let name = &call.request.tool;
        let Some(entry) = self.catalog.get(name) else {
            return Err(unknown(&self.catalog, name));
        };
        let refusal = match &entry.availability {
            Availability::Available => None,
            Availability::Unavailable(reason) => Some(CallError::new(
                ErrorCode::Unavailable,
                format!("tool `{name}` is unavailable: {reason}"),
            )),
            Availability::Quarantined(reason) => Some(
                CallError::new(
                    ErrorCode::PolicyDenied,
                    format!("tool `{name}` is quarantined: {reason}"),
                )
                .with_hint(format!(
                    "an operator must review and run `toolgate tools approve-change {name}`"
                )),
            ),
        };
        // Known even when refused, so the audit record names the tool's source and risk.
        call.entry = Some(entry);
        match refusal {
            Some(e) => Err(e),
            None => next.run(call).await,
        }
    }
}

fn unknown(catalog: &Catalog, name: &str) -> CallError {
    let snap = catalog.snapshot();
    let mut close: Vec<(usize, &str)> = snap
        .entries()
        .filter(|e| e.is_available())
        .map(|e| (edit_distance(name, &e.spec().name), e.spec().name.as_str()))
        .filter(|(d, n)| *d <= 3 || n.contains(name) || name.contains(n))
        .collect();
    close.sort();
    let err = CallError::new(ErrorCode::UnknownTool, format!("no tool named `{name}`"));
    match close.first() {
        Some((_, n)) => err.with_hint(format!(
            "did you mean `{n}`? `toolgate tools list` shows all tools"
        )),
        None => err.with_hint("`toolgate tools list` shows the available tools"),
    }
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
    use crate::testing::{echo_tool, run_layer};
    use serde_json::json;

    #[tokio::test]
    async fn unknown_tool_suggests_the_closest_name() {
        let catalog = Arc::new(Catalog::new());
        catalog
            .register(echo_tool("read_file", toolgate_protocol::Risk::Read))
            .unwrap();
        let err = run_layer(&LookupLayer::new(catalog), "read_fil", json!({}))
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
        let layer = LookupLayer::new(catalog);
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

    #[tokio::test]
    async fn found_tool_reaches_the_inner_layers() {
        let catalog = Arc::new(Catalog::new());
        catalog
            .register(echo_tool("a", toolgate_protocol::Risk::Read))
            .unwrap();
        let out = run_layer(&LookupLayer::new(catalog), "a", json!({"x": 1}))
            .await
            .unwrap();
        assert_eq!(out.data, json!({"reached": "a"}));
    }
}
