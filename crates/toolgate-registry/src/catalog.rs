//! The catalog: an immutable [`Snapshot`] behind [`ArcSwap`]. Every change builds a new
//! snapshot and swaps it in with a compare-and-swap, so lookups on the hot path are one
//! atomic load and never wait for a reload (R-REG-3).

use std::collections::BTreeMap;
use std::sync::Arc;

use arc_swap::ArcSwap;
use toolgate_core::DynTool;
use toolgate_protocol::{ExportFormat, SpecError, ToolSpec, export};

use crate::{Availability, Entry, ToolSource};

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CatalogError {
    #[error(transparent)]
    InvalidSpec(#[from] SpecError),
    #[error("a tool named `{0}` is already registered")]
    Duplicate(String),
    #[error("unknown tool(s): {}", .0.join(", "))]
    Unknown(Vec<String>),
}

/// One consistent view of the catalog.
#[derive(Debug, Default, Clone)]
pub struct Snapshot {
    entries: BTreeMap<String, Entry>,
}

impl Snapshot {
    pub fn get(&self, name: &str) -> Option<&Entry> {
        self.entries.get(name)
    }

    /// All entries, sorted by name.
    pub fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.entries.values()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// The shared, lock-free catalog.
#[derive(Debug, Default)]
pub struct Catalog {
    current: ArcSwap<Snapshot>,
}

impl Catalog {
    pub fn new() -> Self {
        Catalog::default()
    }

    /// The current snapshot; hold it for a consistent view across several lookups.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.current.load_full()
    }

    pub fn register(&self, tool: DynTool) -> Result<(), CatalogError> {
        self.register_many(vec![tool])
    }

    /// Registers all tools or none.
    pub fn register_many(&self, tools: Vec<DynTool>) -> Result<(), CatalogError> {
        for tool in &tools {
            tool.spec().validate()?;
        }
        let mut failure = None;
        self.current.rcu(|old| {
            failure = None;
            let mut next = Snapshot::clone(old);
            for tool in &tools {
                let name = tool.spec().name.clone();
                if next.entries.contains_key(&name) {
                    failure = Some(CatalogError::Duplicate(name));
                    return Arc::clone(old);
                }
                next.entries.insert(
                    name,
                    Entry {
                        tool: Arc::clone(tool),
                        availability: Availability::Available,
                    },
                );
            }
            Arc::new(next)
        });
        failure.map_or(Ok(()), Err)
    }

    /// Replaces every tool whose `source` is the source's name with the source's current
    /// tools (reload). Availability of tools that stay is kept. Invalid or colliding tools
    /// are skipped and returned, never aborting the reload (R-REG-4).
    pub fn reload_source(&self, source: &dyn ToolSource) -> Vec<CatalogError> {
        let tools = source.tools();
        let mut skipped = Vec::new();
        self.current.rcu(|old| {
            skipped.clear();
            let mut next = Snapshot::clone(old);
            next.entries.retain(|_, e| e.spec().source != source.name());
            for tool in &tools {
                if let Err(e) = tool.spec().validate() {
                    skipped.push(e.into());
                    continue;
                }
                let name = tool.spec().name.clone();
                if next.entries.contains_key(&name) {
                    skipped.push(CatalogError::Duplicate(name));
                    continue;
                }
                let availability = old
                    .entries
                    .get(&name)
                    .map_or(Availability::Available, |e| e.availability.clone());
                next.entries.insert(
                    name,
                    Entry {
                        tool: Arc::clone(tool),
                        availability,
                    },
                );
            }
            Arc::new(next)
        });
        skipped
    }

    /// Sets a tool's availability; false if there is no such tool.
    pub fn set_availability(&self, name: &str, availability: Availability) -> bool {
        let mut found = false;
        self.current.rcu(|old| {
            found = old.entries.contains_key(name);
            if !found {
                return Arc::clone(old);
            }
            let mut next = Snapshot::clone(old);
            if let Some(e) = next.entries.get_mut(name) {
                e.availability = availability.clone();
            }
            Arc::new(next)
        });
        found
    }

    pub fn get(&self, name: &str) -> Option<Entry> {
        self.current.load().get(name).cloned()
    }

    pub fn has(&self, name: &str) -> bool {
        self.current.load().get(name).is_some()
    }

    /// All entries, sorted by name.
    pub fn all(&self) -> Vec<Entry> {
        self.current.load().entries().cloned().collect()
    }

    /// The entries for `names`, in order; every unknown name is reported at once.
    pub fn resolve<S: AsRef<str>>(&self, names: &[S]) -> Result<Vec<Entry>, CatalogError> {
        let snap = self.current.load();
        let mut found = Vec::with_capacity(names.len());
        let mut unknown = Vec::new();
        for n in names {
            match snap.get(n.as_ref()) {
                Some(e) => found.push(e.clone()),
                None => unknown.push(n.as_ref().to_owned()),
            }
        }
        if unknown.is_empty() {
            Ok(found)
        } else {
            Err(CatalogError::Unknown(unknown))
        }
    }

    /// Model-facing export: only available tools that `visible` admits (the caller's role).
    pub fn export(
        &self,
        format: ExportFormat,
        visible: impl Fn(&Entry) -> bool,
    ) -> serde_json::Value {
        let snap = self.current.load();
        let specs: Vec<&ToolSpec> = snap
            .entries()
            .filter(|e| e.is_available() && visible(e))
            .map(Entry::spec)
            .collect();
        export(&specs, format)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::StaticSource;
    use async_trait::async_trait;
    use serde_json::{Value, json};
    use toolgate_core::{Tool, ToolContext, ToolError};
    use toolgate_protocol::ToolOutput;

    struct Fake(ToolSpec);

    #[async_trait]
    impl Tool for Fake {
        fn spec(&self) -> &ToolSpec {
            &self.0
        }
        async fn call(&self, a: Value, _c: ToolContext) -> Result<ToolOutput, ToolError> {
            Ok(ToolOutput::json(a))
        }
    }

    fn tool(name: &str, source: &str) -> DynTool {
        Arc::new(Fake(
            ToolSpec::new(name, "d", json!({"type": "object"})).with_source(source),
        ))
    }

    #[test]
    fn register_get_has_all_resolve() {
        let c = Catalog::new();
        c.register_many(vec![tool("b", "builtin"), tool("a", "builtin")])
            .unwrap();
        assert!(c.has("a") && !c.has("z"));
        let names: Vec<String> = c.all().iter().map(|e| e.spec().name.clone()).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(
            c.resolve(&["a", "x", "y"]).err(),
            Some(CatalogError::Unknown(vec!["x".into(), "y".into()]))
        );
        assert_eq!(c.resolve(&["b"]).unwrap()[0].spec().name, "b");
    }

    #[test]
    fn duplicate_registration_is_all_or_nothing() {
        let c = Catalog::new();
        c.register(tool("a", "builtin")).unwrap();
        let err = c.register_many(vec![tool("c", "builtin"), tool("a", "builtin")]);
        assert_eq!(err, Err(CatalogError::Duplicate("a".into())));
        assert!(!c.has("c"));
    }

    #[test]
    fn reload_swaps_a_source_and_skips_collisions() {
        let c = Catalog::new();
        c.register(tool("shared", "builtin")).unwrap();
        let v1 = StaticSource::new("mcp:s", vec![tool("x", "mcp:s"), tool("shared", "mcp:s")]);
        let skipped = c.reload_source(&v1);
        assert_eq!(skipped, vec![CatalogError::Duplicate("shared".into())]);
        assert!(c.has("x"));
        c.set_availability("x", Availability::Unavailable("down".into()));
        let v2 = StaticSource::new("mcp:s", vec![tool("x", "mcp:s"), tool("y", "mcp:s")]);
        assert!(c.reload_source(&v2).is_empty());
        assert_eq!(
            c.get("x").map(|e| e.availability),
            Some(Availability::Unavailable("down".into()))
        );
        let v3 = StaticSource::new("mcp:s", vec![]);
        c.reload_source(&v3);
        assert!(!c.has("x") && !c.has("y") && c.has("shared"));
    }

    #[test]
    fn a_held_snapshot_is_unaffected_by_reload() {
        let c = Catalog::new();
        c.register(tool("a", "builtin")).unwrap();
        let before = c.snapshot();
        c.register(tool("b", "builtin")).unwrap();
        assert_eq!(before.len(), 1);
        assert_eq!(c.snapshot().len(), 2);
    }

    #[test]
    fn export_hides_unavailable_and_invisible_tools() {
        let c = Catalog::new();
        c.register_many(vec![
            tool("a", "builtin"),
            tool("b", "builtin"),
            tool("c", "builtin"),
        ])
        .unwrap();
        c.set_availability("b", Availability::Quarantined("changed".into()));
        let out = c.export(ExportFormat::Anthropic, |e| e.spec().name != "c");
        assert_eq!(
            out,
            json!([{"name": "a", "description": "d", "input_schema": {"type": "object"}}])
        );
    }
}
