//! Provider-neutral conversation types. Every provider maps these onto its wire format and
//! back; nothing here knows one API from another.
//!
//! A conversation is a list of [`Message`]s: user text, assistant turns (text and tool calls,
//! plus the provider's own items kept verbatim so they can be passed back untouched), and the
//! tool results of one turn, matched to the calls by id.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolgate_protocol::ToolSpec;

/// One tool call the model asked for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's id for the call (`call_…`, `toolu_…`); results go back under it.
    pub id: String,
    /// The tool name as the model wrote it (it may not exist).
    pub name: String,
    /// The arguments exactly as the model produced them: JSON text that may not parse.
    pub arguments: String,
}

/// The outcome of one tool call, as the model will read it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolResult {
    /// The [`ToolCall::id`] this answers.
    pub call_id: String,
    /// The tool name of the call (some APIs want it back).
    pub name: String,
    /// The text the model reads (the gateway's envelope as JSON).
    pub content: String,
    /// The call failed (Anthropic `is_error`; the others see it in the content).
    #[serde(default)]
    pub is_error: bool,
}

/// The provider's own representation of an assistant turn, kept verbatim: OpenAI Responses
/// output items (reasoning items included) or Anthropic content blocks (thinking included).
/// Passed back untouched when the same provider continues the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NativeTurn {
    /// [`ModelClient::provider`](crate::ModelClient::provider) of the client that produced it.
    pub provider: String,
    /// The items or blocks as received.
    pub items: Vec<Value>,
    /// The response id (OpenAI Responses), for `previous_response_id` chaining when stored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_id: Option<String>,
}

/// What the model said in one turn.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AssistantTurn {
    /// Visible answer text (may be empty when the turn only calls tools).
    #[serde(default)]
    pub text: String,
    /// Tool calls, in the order the model made them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// A refusal, when the provider reports it apart from the text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub native: Option<NativeTurn>,
}

/// One entry of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    User {
        text: String,
    },
    Assistant(AssistantTurn),
    /// The results of every call of the preceding assistant turn, in the calls' order.
    ToolResults {
        results: Vec<ToolResult>,
    },
}

impl Message {
    pub fn user(text: impl Into<String>) -> Self {
        Message::User { text: text.into() }
    }
}

/// Which tool the model must (or must not) call.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolChoice {
    /// The model decides.
    #[default]
    Auto,
    /// No tool calls.
    None,
    /// At least one tool call (Anthropic: `any`).
    Required,
    /// This tool.
    Tool(String),
}

impl std::str::FromStr for ToolChoice {
    type Err = String;
    /// `auto`, `none`, `required` (or `any`), or a tool name.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "auto" => ToolChoice::Auto,
            "none" => ToolChoice::None,
            "required" | "any" => ToolChoice::Required,
            "" => return Err("empty tool choice (auto, none, required or a tool name)".into()),
            name => ToolChoice::Tool(name.to_owned()),
        })
    }
}

/// One request to a model.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelRequest {
    /// System prompt (Chat: a `system` message; Responses: `instructions`; Anthropic: `system`).
    pub system: Option<String>,
    pub messages: Vec<Message>,
    /// Tool definitions; each provider exports them with `toolgate_protocol::export`.
    pub tools: Vec<ToolSpec>,
    pub tool_choice: ToolChoice,
    /// `Some(false)` asks for at most one call per turn.
    pub parallel_tool_calls: Option<bool>,
    /// Output token cap (Anthropic requires one: the client's configured default applies).
    pub max_tokens: Option<u32>,
    pub temperature: Option<f32>,
    /// The trace context the request carries (`traceparent`, `tracestate` headers).
    pub trace: Option<toolgate_core::TraceContext>,
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// A finished answer.
    EndTurn,
    /// It wants tool results.
    ToolUse,
    /// The output token cap cut it.
    MaxTokens,
    /// A stop sequence.
    StopSequence,
    /// It declined (Anthropic `refusal`, OpenAI `refusal` content).
    Refusal,
    /// The provider's content filter stopped it.
    ContentFilter,
    /// Anything else the provider said, verbatim.
    Other(String),
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StopReason::EndTurn => f.write_str("end_turn"),
            StopReason::ToolUse => f.write_str("tool_use"),
            StopReason::MaxTokens => f.write_str("max_tokens"),
            StopReason::StopSequence => f.write_str("stop_sequence"),
            StopReason::Refusal => f.write_str("refusal"),
            StopReason::ContentFilter => f.write_str("content_filter"),
            StopReason::Other(s) => f.write_str(s),
        }
    }
}

/// Token counts, when the provider reports them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

impl Usage {
    pub fn add(&mut self, other: Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
    }
}

/// One model answer.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelResponse {
    pub turn: AssistantTurn,
    pub stop: StopReason,
    pub usage: Usage,
}

/// What a streaming call reports as it arrives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamEvent {
    /// Visible answer text.
    TextDelta(String),
    /// Refusal text.
    RefusalDelta(String),
    /// A tool call began (its arguments follow as deltas).
    ToolCallStarted { id: String, name: String },
    /// More argument text for the call `id`.
    ToolArgumentsDelta { id: String, delta: String },
}
