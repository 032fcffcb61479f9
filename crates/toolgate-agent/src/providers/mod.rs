//! The three APIs. Each provider maps [`ModelRequest`](crate::ModelRequest) onto its documented
//! wire format and reads answers as untyped JSON, so an unknown item type or field never fails
//! a response.

mod anthropic;
mod openai_chat;
mod openai_responses;

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;

pub use anthropic::AnthropicClient;
pub use openai_chat::OpenAiChatClient;
pub use openai_responses::OpenAiResponsesClient;

/// `v[key]` as a string, or "".
fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// `v[key]` as a count, or 0.
fn u64_of(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// An id for a tool call whose server sent none (some compatible servers): unique in the
/// process, so results still match their calls.
fn fallback_call_id(index: usize) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    format!("call_tg{}_{index}", NEXT.fetch_add(1, Ordering::Relaxed))
}
