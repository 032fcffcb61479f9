//! `[conversations]`: the agent under `toolgate serve`. The model is `[model]`'s; these
//! settings shape the conversations around it.

use serde::{Deserialize, Serialize};

/// Who may decide a call's approval from inside the conversation it was made in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalRight {
    /// The conversation's own user (the human in the loop), besides the operators.
    #[default]
    User,
    /// Only operators (the console, `/v1/approvals`, the approval channels).
    Operators,
}

/// `[conversations]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ConversationsConfig {
    /// Serve conversations when `[model]` names a model (the API answers 503 otherwise).
    pub enabled: bool,
    /// Who decides approvals from inside a conversation.
    pub approvals: ApprovalRight,
    /// The system prompt; `[model] system` when unset.
    pub system: Option<String>,
    /// Model calls per turn; `[model] max_steps` when unset.
    pub max_steps: Option<u32>,
    /// Messages that may wait behind a running turn; more are refused with a reply.
    pub max_queued: usize,
    /// Conversations of one principal that may be busy at once (a message waiting for, or in,
    /// its turn), across every replica: bounds what one token spends on the model.
    pub max_busy_per_principal: usize,
    /// The longest message accepted, in bytes.
    pub max_message_bytes: usize,
    /// How long a runner's hold on a conversation lasts unless renewed (every third of it):
    /// a process that dies holding it is taken over after this.
    pub lease_secs: u64,
    /// How often a process looks for conversations whose runner died.
    pub sweep_secs: u64,
}

impl Default for ConversationsConfig {
    fn default() -> Self {
        ConversationsConfig {
            enabled: true,
            approvals: ApprovalRight::User,
            system: None,
            max_steps: None,
            max_queued: 8,
            max_busy_per_principal: 4,
            max_message_bytes: 32 * 1024,
            lease_secs: 15,
            sweep_secs: 5,
        }
    }
}

impl ConversationsConfig {
    /// What is wrong with the settings, if anything.
    pub fn check(&self) -> Result<(), String> {
        if self.lease_secs < 3 {
            return Err(format!(
                "[conversations] lease_secs = {} is too short: at least 3 (it is renewed every third)",
                self.lease_secs
            ));
        }
        if self.sweep_secs == 0 {
            return Err("[conversations] sweep_secs must be at least 1".into());
        }
        if self.max_busy_per_principal == 0 {
            return Err("[conversations] max_busy_per_principal must be at least 1".into());
        }
        if self.max_message_bytes == 0 {
            return Err("[conversations] max_message_bytes must be at least 1".into());
        }
        Ok(())
    }
}
