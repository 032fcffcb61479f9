//! Which tool definitions the model sees at each step: the loop asks a [`ToolSelector`]
//! before every model call.
//!
//! A selector only shapes what the model is *shown*. Whatever the model calls still goes
//! through the gateway, which authorises it; a selector can neither grant nor hide access.
//! [`AllVisible`] (the default) offers every available tool the role may see; Tool RAG's
//! retrieval selector (`toolgate_app::rag::RetrievalSelector`, where the loop and Tool RAG are
//! assembled; this crate does not depend on toolgate-rag) offers a few retrieved ones plus
//! `search_tools` when the role sees more than a threshold.
//!
//! The loop adds or removes `read_result` itself (offered once a result was offloaded), so a
//! selector need not know about it.

use async_trait::async_trait;
use toolgate_gateway::Gateway;
use toolgate_protocol::ToolSpec;

use crate::types::Message;

/// What a selector knows of the step about to run.
#[derive(Clone, Copy)]
pub struct StepView<'a> {
    pub gateway: &'a Gateway,
    /// The role every call of the conversation runs as.
    pub role: &'a str,
    /// The conversation so far: the latest user message, earlier turns and their results.
    pub history: &'a [Message],
    /// 1 for the first model call of a run.
    pub step: u32,
}

impl StepView<'_> {
    /// The text of the latest user message ("" when there is none).
    pub fn latest_user_text(&self) -> &str {
        self.history
            .iter()
            .rev()
            .find_map(|m| match m {
                Message::User { text } => Some(text.as_str()),
                _ => None,
            })
            .unwrap_or("")
    }
}

/// Chooses the tools offered at one step. Called before every model call, so the list may
/// change between turns (every provider accepts that; see the provider tests).
#[async_trait]
pub trait ToolSelector: Send + Sync {
    async fn select(&self, step: &StepView<'_>) -> Vec<ToolSpec>;
}

/// Every available tool the role may see (the loop's behaviour without Tool RAG).
#[derive(Debug, Default, Clone, Copy)]
pub struct AllVisible;

#[async_trait]
impl ToolSelector for AllVisible {
    async fn select(&self, step: &StepView<'_>) -> Vec<ToolSpec> {
        visible_tools(step.gateway, step.role)
    }
}

/// The definitions of every available tool `role` may see, in catalog order.
pub fn visible_tools(gateway: &Gateway, role: &str) -> Vec<ToolSpec> {
    gateway
        .catalog()
        .all()
        .into_iter()
        .filter(|e| e.is_available() && gateway.visible_to(role, e))
        .map(|e| e.spec().clone())
        .collect()
}
