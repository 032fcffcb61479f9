//! OpenAI Chat Completions (`POST {base}/chat/completions`), which most OpenAI-compatible
//! local servers also speak.
//!
//! Request: `messages` with the roles `system`, `user`, `assistant` (text and `tool_calls`
//! with string `arguments`) and `tool` (`tool_call_id`, one message per result, in the calls'
//! order); `tools`, `tool_choice` (`auto` | `none` | `required` | a named function) and
//! `parallel_tool_calls` only when tools are offered. Streaming: `chat.completion.chunk`s whose
//! `delta.tool_calls[]` carry an `index`, the id and name in the first fragment and
//! `arguments` in pieces. Responses are read as untyped JSON: unknown fields never fail.

use std::collections::BTreeMap;

use async_trait::async_trait;
use reqwest::header::HeaderMap;
use serde_json::{Map, Value, json};
use toolgate_protocol::{ExportFormat, export};

use crate::client::{EventSink, ModelError};
use crate::config::ModelConfig;
use crate::http::{ApiKey, Http};
use crate::providers::{Wire, fallback_call_id, str_of, u64_of};
use crate::sse::read_events;
use crate::types::{
    AssistantTurn, Message, ModelRequest, ModelResponse, StopReason, StreamEvent, ToolCall,
    ToolChoice, Usage,
};

#[derive(Debug)]
pub struct OpenAiChatClient {
    http: Http,
    model: String,
    key: Option<ApiKey>,
    defaults: Defaults,
    /// OpenAI itself wants `max_completion_tokens`; compatible servers know `max_tokens`.
    official: bool,
}

#[derive(Debug, Clone)]
struct Defaults {
    max_tokens: u32,
    temperature: Option<f32>,
}

impl OpenAiChatClient {
    pub fn new(http: Http, config: &ModelConfig, key: Option<String>) -> Self {
        OpenAiChatClient {
            http,
            model: config.model.clone(),
            key: key.map(ApiKey::new),
            defaults: Defaults {
                max_tokens: config.max_tokens,
                temperature: config.temperature,
            },
            official: config.base_url.is_none(),
        }
    }

    fn headers(&self) -> Result<HeaderMap, ModelError> {
        ApiKey::bearer_headers(self.key.as_ref())
    }

    /// The request body (public for the golden tests).
    pub fn body(&self, req: &ModelRequest, stream: bool) -> Value {
        let mut body = Map::new();
        body.insert("model".into(), json!(self.model));
        body.insert("messages".into(), Value::Array(messages(req)));
        if !req.tools.is_empty() {
            let specs: Vec<_> = req.tools.iter().collect();
            body.insert("tools".into(), export(&specs, ExportFormat::OpenAiChat));
            body.insert("tool_choice".into(), tool_choice(&req.tool_choice));
            if let Some(p) = req.parallel_tool_calls {
                body.insert("parallel_tool_calls".into(), json!(p));
            }
        }
        let max = req.max_tokens.unwrap_or(self.defaults.max_tokens);
        let key = if self.official {
            "max_completion_tokens"
        } else {
            "max_tokens"
        };
        body.insert(key.into(), json!(max));
        if let Some(t) = req.temperature.or(self.defaults.temperature) {
            body.insert("temperature".into(), json!(t));
        }
        if stream {
            body.insert("stream".into(), json!(true));
            body.insert("stream_options".into(), json!({"include_usage": true}));
        }
        Value::Object(body)
    }
}

fn tool_choice(c: &ToolChoice) -> Value {
    match c {
        ToolChoice::Auto => json!("auto"),
        ToolChoice::None => json!("none"),
        ToolChoice::Required => json!("required"),
        ToolChoice::Tool(name) => json!({"type": "function", "function": {"name": name}}),
    }
}

fn messages(req: &ModelRequest) -> Vec<Value> {
    let mut out = Vec::with_capacity(req.messages.len() + 1);
    if let Some(system) = &req.system {
        out.push(json!({"role": "system", "content": system}));
    }
    for m in &req.messages {
        match m {
            Message::User { text } => out.push(json!({"role": "user", "content": text})),
            Message::Assistant(turn) => {
                let mut msg = Map::new();
                msg.insert("role".into(), json!("assistant"));
                let content = if turn.text.is_empty() && !turn.tool_calls.is_empty() {
                    Value::Null
                } else {
                    json!(turn.text)
                };
                msg.insert("content".into(), content);
                if let Some(r) = &turn.refusal {
                    msg.insert("refusal".into(), json!(r));
                }
                if !turn.tool_calls.is_empty() {
                    let calls: Vec<Value> = turn
                        .tool_calls
                        .iter()
                        .map(|c| {
                            json!({"id": c.id, "type": "function",
                                   "function": {"name": c.name, "arguments": c.arguments}})
                        })
                        .collect();
                    msg.insert("tool_calls".into(), Value::Array(calls));
                }
                out.push(Value::Object(msg));
            }
            Message::ToolResults { results } => {
                for r in results {
                    out.push(
                        json!({"role": "tool", "tool_call_id": r.call_id, "content": r.content}),
                    );
                }
            }
        }
    }
    out
}

fn stop_reason(finish: Option<&str>, turn: &AssistantTurn) -> StopReason {
    if turn.refusal.is_some() {
        return StopReason::Refusal;
    }
    match finish {
        Some("stop") | None => {
            if turn.tool_calls.is_empty() {
                StopReason::EndTurn
            } else {
                StopReason::ToolUse
            }
        }
        Some("tool_calls" | "function_call") => StopReason::ToolUse,
        Some("length") => StopReason::MaxTokens,
        Some("content_filter") => StopReason::ContentFilter,
        Some(other) => StopReason::Other(other.to_owned()),
    }
}

fn usage(v: &Value) -> Usage {
    Usage {
        input_tokens: u64_of(v, "prompt_tokens"),
        output_tokens: u64_of(v, "completion_tokens"),
    }
}

/// Reads a non-streaming `chat.completion`.
pub fn parse_completion(v: &Value) -> Result<ModelResponse, ModelError> {
    let choice = v
        .get("choices")
        .and_then(|c| c.get(0))
        .ok_or_else(|| ModelError::Protocol("no `choices[0]` in the completion".into()))?;
    let msg = choice.get("message").cloned().unwrap_or(Value::Null);
    let mut turn = AssistantTurn {
        text: str_of(&msg, "content").to_owned(),
        refusal: msg
            .get("refusal")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned),
        ..AssistantTurn::default()
    };
    if let Some(calls) = msg.get("tool_calls").and_then(Value::as_array) {
        for (i, c) in calls.iter().enumerate() {
            let f = c.get("function").cloned().unwrap_or(Value::Null);
            let arguments = match f.get("arguments") {
                Some(Value::String(s)) => s.clone(),
                // Some compatible servers send an object.
                Some(other @ Value::Object(_)) => other.to_string(),
                _ => String::new(),
            };
            turn.tool_calls.push(ToolCall {
                id: Some(str_of(c, "id"))
                    .filter(|s| !s.is_empty())
                    .map_or_else(|| fallback_call_id(i), str::to_owned),
                name: str_of(&f, "name").to_owned(),
                arguments,
            });
        }
    }
    let stop = stop_reason(choice.get("finish_reason").and_then(Value::as_str), &turn);
    Ok(ModelResponse {
        turn,
        stop,
        usage: v.get("usage").map(usage).unwrap_or_default(),
    })
}

#[derive(Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

#[async_trait]
impl Wire for OpenAiChatClient {
    const PROVIDER: &'static str = "openai-chat";
    const FORMAT: ExportFormat = ExportFormat::OpenAiChat;
    const PATH: &'static str = "chat/completions";
    const ANSWER: &'static str = "the completion";

    fn http(&self) -> &Http {
        &self.http
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn headers(&self) -> Result<HeaderMap, ModelError> {
        OpenAiChatClient::headers(self)
    }

    fn body(&self, request: &ModelRequest, stream: bool) -> Value {
        OpenAiChatClient::body(self, request, stream)
    }

    fn parse(answer: &Value) -> Result<ModelResponse, ModelError> {
        parse_completion(answer)
    }

    async fn read_stream(
        &self,
        resp: reqwest::Response,
        sink: EventSink<'_>,
    ) -> Result<ModelResponse, ModelError> {
        let mut text = String::new();
        let mut refusal = String::new();
        let mut calls: BTreeMap<u64, PartialCall> = BTreeMap::new();
        let mut finish: Option<String> = None;
        let mut use_ = Usage::default();
        read_events(resp, |ev| {
            if ev.data.trim() == "[DONE]" {
                return Ok(false);
            }
            let chunk: Value = serde_json::from_str(&ev.data).map_err(|e| {
                ModelError::Protocol(format!("a stream chunk is not JSON ({e}): {}", ev.data))
            })?;
            if let Some(err) = chunk.get("error") {
                return Err(ModelError::Protocol(format!("error in the stream: {err}")));
            }
            if let Some(u) = chunk.get("usage").filter(|u| u.is_object()) {
                use_ = usage(u);
            }
            let Some(choice) = chunk.get("choices").and_then(|c| c.get(0)) else {
                return Ok(true);
            };
            if let Some(f) = choice.get("finish_reason").and_then(Value::as_str) {
                finish = Some(f.to_owned());
            }
            let Some(delta) = choice.get("delta") else {
                return Ok(true);
            };
            if let Some(t) = delta.get("content").and_then(Value::as_str)
                && !t.is_empty()
            {
                text.push_str(t);
                sink(StreamEvent::TextDelta(t.to_owned()));
            }
            if let Some(t) = delta.get("refusal").and_then(Value::as_str)
                && !t.is_empty()
            {
                refusal.push_str(t);
                sink(StreamEvent::RefusalDelta(t.to_owned()));
            }
            for (pos, tc) in delta
                .get("tool_calls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                let index = tc
                    .get("index")
                    .and_then(Value::as_u64)
                    .unwrap_or(pos as u64);
                let fresh = !calls.contains_key(&index);
                let call = calls.entry(index).or_default();
                if let Some(id) = tc
                    .get("id")
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
                {
                    call.id = id.to_owned();
                }
                let f = tc.get("function").cloned().unwrap_or(Value::Null);
                if let Some(n) = f.get("name").and_then(Value::as_str) {
                    call.name.push_str(n);
                }
                if call.id.is_empty() {
                    call.id = fallback_call_id(usize::try_from(index).unwrap_or(0));
                }
                if fresh {
                    sink(StreamEvent::ToolCallStarted {
                        id: call.id.clone(),
                        name: call.name.clone(),
                    });
                }
                if let Some(a) = f.get("arguments").and_then(Value::as_str)
                    && !a.is_empty()
                {
                    call.arguments.push_str(a);
                    sink(StreamEvent::ToolArgumentsDelta {
                        id: call.id.clone(),
                        delta: a.to_owned(),
                    });
                }
            }
            Ok(true)
        })
        .await?;
        let turn = AssistantTurn {
            text,
            refusal: (!refusal.is_empty()).then_some(refusal),
            tool_calls: calls
                .into_values()
                .map(|c| ToolCall {
                    id: c.id,
                    name: c.name,
                    arguments: c.arguments,
                })
                .collect(),
            native: None,
        };
        let stop = stop_reason(finish.as_deref(), &turn);
        Ok(ModelResponse {
            turn,
            stop,
            usage: use_,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compatible_servers_odd_answers_are_read() {
        // Arguments as an object, no call id, unknown fields everywhere.
        let v = json!({
            "choices": [{"index": 0, "finish_reason": "tool_calls", "brand_new": 1,
                "message": {"role": "assistant", "content": null, "reasoning_content": "hm",
                    "tool_calls": [{"type": "function",
                        "function": {"name": "echo", "arguments": {"text": "x"}}}]}}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 2, "extra": {}},
        });
        let r = parse_completion(&v).unwrap();
        assert_eq!(r.stop, StopReason::ToolUse);
        assert_eq!(r.turn.tool_calls.len(), 1);
        let call = &r.turn.tool_calls[0];
        assert_eq!(
            (call.name.as_str(), call.arguments.as_str()),
            ("echo", r#"{"text":"x"}"#)
        );
        assert!(call.id.starts_with("call_tg"), "{}", call.id);
        assert_eq!(
            r.usage,
            Usage {
                input_tokens: 3,
                output_tokens: 2
            }
        );
        assert!(parse_completion(&json!({"choices": []})).is_err());
    }
}
