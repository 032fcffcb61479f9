//! Prompts are pinned like tools (R-REG-5): the first definition seen of a federated prompt
//! is pinned in the catalog's pin book under `prompt:{name}`; a later definition with
//! another hash (description, arguments) is hidden and refused until an operator approves
//! it with `toolgate tools approve-change prompt:{name}`. Without a pin book (an embedding
//! that pins nothing) every prompt passes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use toolgate_gateway::Gateway;
use toolgate_mcp_client::federation::ListedPrompt;
use toolgate_protocol::ToolSpec;
use toolgate_registry::PinVerdict;
use toolgate_registry::pins::definition_hash;

use super::read_tool::prompt_arguments_schema;

/// The pin-book name of a prompt.
pub(super) fn pin_name(prompt: &str) -> String {
    format!("prompt:{prompt}")
}

pub(super) struct PromptPins {
    gateway: Arc<Gateway>,
    /// Prompt → the hash of the definition last found to be the pinned one: listing and
    /// getting an unchanged prompt reads no pin. A quarantined prompt is not remembered, so
    /// an approval of its change is seen on the next request.
    pinned: Mutex<HashMap<String, String>>,
}

impl PromptPins {
    pub(super) fn new(gateway: Arc<Gateway>) -> Self {
        PromptPins {
            gateway,
            pinned: Mutex::new(HashMap::new()),
        }
    }

    /// Ok when the prompt's definition is the pinned one (or pinned now, on first sight);
    /// the quarantine reason otherwise.
    pub(super) async fn check(&self, prompt: &ListedPrompt) -> Result<(), String> {
        let Some(book) = self.gateway.catalog().pins() else {
            return Ok(());
        };
        let spec = pinned_form(prompt);
        let hash = definition_hash(&spec);
        let pinned = || self.pinned.lock().unwrap_or_else(PoisonError::into_inner);
        if pinned().get(&spec.name) == Some(&hash) {
            return Ok(());
        }
        match book.observe(&spec).await {
            Ok(PinVerdict::New | PinVerdict::Unchanged) => {
                pinned().insert(spec.name.clone(), hash);
                Ok(())
            }
            Ok(PinVerdict::Changed(change)) => Err(change.quarantine_reason(&spec.name)),
            Err(e) => Err(format!(
                "prompt `{}` could not be checked against its pin ({e}); it stays refused until the check succeeds",
                prompt.prompt.name
            )),
        }
    }
}

/// The prompt as a definition the pin book hashes: its description and its arguments as
/// an object schema (names, descriptions, which are required).
fn pinned_form(prompt: &ListedPrompt) -> ToolSpec {
    let p = &prompt.prompt;
    let description = p
        .description
        .clone()
        .or_else(|| p.title.clone())
        .unwrap_or_default();
    ToolSpec::new(
        pin_name(&p.name),
        description,
        prompt_arguments_schema(prompt),
    )
    .with_source(format!("mcp:{}", prompt.target.server))
}
