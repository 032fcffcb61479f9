//! Compiled validators, cached per tool instance. Compiling a schema costs ~17 µs, checking
//! an instance ~0.1 µs, so compile once. The key is the tool's allocation; the cache holds a
//! `Weak` to it, which keeps the address from being reused while the entry exists, so a
//! reloaded tool never meets a stale validator.

use std::collections::HashMap;
use std::sync::{Arc, RwLock, Weak};

use jsonschema::Validator;
use toolgate_core::{DynTool, Tool};

type Slot = (Weak<dyn Tool>, Arc<Validator>);

#[derive(Default)]
pub struct ValidatorCache {
    slots: RwLock<HashMap<usize, Slot>>,
}

/// The schema of a tool did not compile.
#[derive(Debug)]
pub struct SchemaError(pub String);

fn key(tool: &DynTool) -> usize {
    Arc::as_ptr(tool).cast::<()>() as usize
}

impl ValidatorCache {
    pub fn get(&self, tool: &DynTool) -> Result<Arc<Validator>, SchemaError> {
        let k = key(tool);
        if let Ok(slots) = self.slots.read()
            && let Some((weak, v)) = slots.get(&k)
            && weak.strong_count() > 0
        {
            return Ok(Arc::clone(v));
        }
        let compiled = jsonschema::validator_for(&tool.spec().input_schema)
            .map_err(|e| SchemaError(e.to_string()))?;
        let compiled = Arc::new(compiled);
        if let Ok(mut slots) = self.slots.write() {
            slots.retain(|_, (w, _)| w.strong_count() > 0);
            slots.insert(k, (Arc::downgrade(tool), Arc::clone(&compiled)));
        }
        Ok(compiled)
    }

    pub fn len(&self) -> usize {
        self.slots.read().map(|s| s.len()).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
