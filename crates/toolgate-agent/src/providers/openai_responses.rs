//! OpenAI Responses (`POST {base}/responses`).
//!
//! Request: `instructions`, `input` items — user `message`s (`input_text`), the assistant's
//! output items passed back verbatim when this provider produced them (`reasoning` items
//! untouched, `message`s, `function_call`s with `call_id`), and one `function_call_output`
//! (`call_id`, `output`) per result in the calls' order; `tools` in the flat function shape,
//! `tool_choice` (`auto` | `none` | `required` | `{"type":"function","name"}`),
//! `parallel_tool_calls`, `max_output_tokens`, `store`. With `store = true` a conversation
//! chains: `previous_response_id` names the last stored response and `input` holds only
//! what came after it. Streaming: `response.output_text.delta`,
//! `response.function_call_arguments.delta`, `response.output_item.added/done`,
//! `response.completed` / `response.incomplete` / `response.failed`.

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
    AssistantTurn, Message, ModelRequest, ModelResponse, NativeTurn, StopReason, StreamEvent,
    ToolCall, ToolChoice, Usage,
};

const PROVIDER: &str = "openai-responses";

#[derive(Debug)]
pub struct OpenAiResponsesClient {
    http: Http,
    model: String,
    key: Option<ApiKey>,
    store: bool,
    max_tokens: u32,
    temperature: Option<f32>,
    /// OpenAI itself: ask for reasoning items with their encrypted content when nothing is
    /// stored, so that they can be passed back (compatible servers may not know `include`).
    official: bool,
}

impl OpenAiResponsesClient {
    pub fn new(http: Http, config: &ModelConfig, key: Option<String>) -> Self {
        OpenAiResponsesClient {
            http,
            model: config.model.clone(),
            key: key.map(ApiKey::new),
            store: config.store,
            max_tokens: config.max_tokens,
            temperature: config.temperature,
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
        if let Some(s) = &req.system {
            body.insert("instructions".into(), json!(s));
        }
        // Chaining: everything up to the last stored response is already on the server.
        let (previous, rest) = if self.store {
            split_at_stored(&req.messages)
        } else {
            (None, &req.messages[..])
        };
        if let Some(id) = previous {
            body.insert("previous_response_id".into(), json!(id));
        }
        body.insert("input".into(), Value::Array(items(rest)));
        if !req.tools.is_empty() {
            let specs: Vec<_> = req.tools.iter().collect();
            body.insert(
                "tools".into(),
                export(&specs, ExportFormat::OpenAiResponses),
            );
            body.insert(
                "tool_choice".into(),
                match &req.tool_choice {
                    ToolChoice::Auto => json!("auto"),
                    ToolChoice::None => json!("none"),
                    ToolChoice::Required => json!("required"),
                    ToolChoice::Tool(name) => json!({"type": "function", "name": name}),
                },
            );
            if let Some(p) = req.parallel_tool_calls {
                body.insert("parallel_tool_calls".into(), json!(p));
            }
        }
        body.insert(
            "max_output_tokens".into(),
            json!(req.max_tokens.unwrap_or(self.max_tokens)),
        );
        if let Some(t) = req.temperature.or(self.temperature) {
            body.insert("temperature".into(), json!(t));
        }
        body.insert("store".into(), json!(self.store));
        if !self.store && self.official {
            body.insert("include".into(), json!(["reasoning.encrypted_content"]));
        }
        if stream {
            body.insert("stream".into(), json!(true));
        }
        Value::Object(body)
    }
}

/// The id of the last response this provider stored, and the messages after it.
fn split_at_stored(messages: &[Message]) -> (Option<&str>, &[Message]) {
    for (i, m) in messages.iter().enumerate().rev() {
        if let Message::Assistant(turn) = m
            && let Some(n) = &turn.native
            && n.provider == PROVIDER
            && let Some(id) = &n.response_id
        {
            return (Some(id), &messages[i + 1..]);
        }
    }
    (None, messages)
}

fn items(messages: &[Message]) -> Vec<Value> {
    let mut out = Vec::new();
    for m in messages {
        match m {
            Message::User { text } => out.push(json!({
                "type": "message", "role": "user",
                "content": [{"type": "input_text", "text": text}],
            })),
            Message::Assistant(turn) => {
                if let Some(n) = turn.native.as_ref().filter(|n| n.provider == PROVIDER) {
                    out.extend(n.items.iter().cloned());
                    continue;
                }
                if !turn.text.is_empty() {
                    out.push(json!({
                        "type": "message", "role": "assistant",
                        "content": [{"type": "output_text", "text": turn.text}],
                    }));
                }
                for c in &turn.tool_calls {
                    out.push(json!({"type": "function_call", "call_id": c.id,
                                    "name": c.name, "arguments": c.arguments}));
                }
            }
            Message::ToolResults { results } => {
                for r in results {
                    out.push(json!({"type": "function_call_output",
                                    "call_id": r.call_id, "output": r.content}));
                }
            }
        }
    }
    out
}

/// A whole `response` object: its output items become the turn.
pub fn parse_response(v: &Value) -> Result<ModelResponse, ModelError> {
    if str_of(v, "status") == "failed" {
        let e = v.get("error").cloned().unwrap_or(Value::Null);
        return Err(ModelError::Protocol(format!(
            "the response failed: {} ({})",
            str_of(&e, "message"),
            str_of(&e, "code")
        )));
    }
    let output = v
        .get("output")
        .and_then(Value::as_array)
        .cloned()
        .ok_or_else(|| ModelError::Protocol("no `output` array in the response".into()))?;
    let mut turn = AssistantTurn::default();
    let mut refusal = String::new();
    for (i, item) in output.iter().enumerate() {
        match str_of(item, "type") {
            "message" => {
                for part in item
                    .get("content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    match str_of(part, "type") {
                        "output_text" => turn.text.push_str(str_of(part, "text")),
                        "refusal" => refusal.push_str(str_of(part, "refusal")),
                        _ => {}
                    }
                }
            }
            "function_call" => {
                let id = Some(str_of(item, "call_id"))
                    .filter(|s| !s.is_empty())
                    .map_or_else(|| fallback_call_id(i), str::to_owned);
                turn.tool_calls.push(ToolCall {
                    id,
                    name: str_of(item, "name").to_owned(),
                    arguments: str_of(item, "arguments").to_owned(),
                });
            }
            _ => {}
        }
    }
    if !refusal.is_empty() {
        turn.refusal = Some(refusal);
    }
    let reason = v
        .get("incomplete_details")
        .map(|d| str_of(d, "reason"))
        .unwrap_or("");
    let stop = if turn.refusal.is_some() {
        StopReason::Refusal
    } else if str_of(v, "status") == "incomplete" {
        match reason {
            "max_output_tokens" => StopReason::MaxTokens,
            "content_filter" => StopReason::ContentFilter,
            other => StopReason::Other(format!("incomplete: {other}")),
        }
    } else if turn.tool_calls.is_empty() {
        StopReason::EndTurn
    } else {
        StopReason::ToolUse
    };
    let id = Some(str_of(v, "id"))
        .filter(|s| !s.is_empty())
        .map(str::to_owned);
    turn.native = Some(NativeTurn {
        provider: PROVIDER.into(),
        items: output,
        response_id: id,
    });
    let usage = v
        .get("usage")
        .map(|u| Usage {
            input_tokens: u64_of(u, "input_tokens"),
            output_tokens: u64_of(u, "output_tokens"),
        })
        .unwrap_or_default();
    Ok(ModelResponse { turn, stop, usage })
}

#[async_trait]
impl Wire for OpenAiResponsesClient {
    const PROVIDER: &'static str = PROVIDER;
    const FORMAT: ExportFormat = ExportFormat::OpenAiResponses;
    const PATH: &'static str = "responses";
    const ANSWER: &'static str = "the response";

    fn http(&self) -> &Http {
        &self.http
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn headers(&self) -> Result<HeaderMap, ModelError> {
        OpenAiResponsesClient::headers(self)
    }

    fn body(&self, request: &ModelRequest, stream: bool) -> Value {
        OpenAiResponsesClient::body(self, request, stream)
    }

    fn parse(answer: &Value) -> Result<ModelResponse, ModelError> {
        parse_response(answer)
    }

    async fn read_stream(
        &self,
        resp: reqwest::Response,
        sink: EventSink<'_>,
    ) -> Result<ModelResponse, ModelError> {
        // item id → call id, for argument deltas that name only the item.
        let mut call_ids: BTreeMap<String, String> = BTreeMap::new();
        let mut done_items: BTreeMap<u64, Value> = BTreeMap::new();
        let mut last: Option<Value> = None;
        read_events(resp, |ev| {
            if ev.data.trim() == "[DONE]" {
                return Ok(false);
            }
            let v: Value = serde_json::from_str(&ev.data).map_err(|e| {
                ModelError::Protocol(format!("a stream event is not JSON ({e}): {}", ev.data))
            })?;
            match str_of(&v, "type") {
                "response.output_text.delta" => {
                    sink(StreamEvent::TextDelta(str_of(&v, "delta").to_owned()));
                }
                "response.refusal.delta" => {
                    sink(StreamEvent::RefusalDelta(str_of(&v, "delta").to_owned()));
                }
                "response.output_item.added" => {
                    let item = v.get("item").cloned().unwrap_or(Value::Null);
                    if str_of(&item, "type") == "function_call" {
                        let call_id = str_of(&item, "call_id").to_owned();
                        call_ids.insert(str_of(&item, "id").to_owned(), call_id.clone());
                        sink(StreamEvent::ToolCallStarted {
                            id: call_id,
                            name: str_of(&item, "name").to_owned(),
                        });
                    }
                }
                "response.function_call_arguments.delta" => {
                    let item_id = str_of(&v, "item_id");
                    sink(StreamEvent::ToolArgumentsDelta {
                        id: call_ids.get(item_id).cloned().unwrap_or_default(),
                        delta: str_of(&v, "delta").to_owned(),
                    });
                }
                "response.output_item.done" => {
                    let index = v.get("output_index").and_then(Value::as_u64).unwrap_or(0);
                    done_items.insert(index, v.get("item").cloned().unwrap_or(Value::Null));
                }
                "response.completed" | "response.incomplete" | "response.failed" => {
                    last = v.get("response").cloned();
                    return Ok(false);
                }
                "error" => {
                    return Err(ModelError::Protocol(format!(
                        "the stream ended with an error: {} ({})",
                        str_of(&v, "message"),
                        str_of(&v, "code")
                    )));
                }
                _ => {}
            }
            Ok(true)
        })
        .await?;
        let mut response = last.ok_or_else(|| {
            ModelError::Protocol("the stream ended before response.completed".into())
        })?;
        // Some servers send the final response without its output: use the items seen.
        let empty = response
            .get("output")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty);
        if empty && !done_items.is_empty() {
            response["output"] = Value::Array(done_items.into_values().collect());
        }
        parse_response(&response)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_items_pass_and_failures_say_why() {
        let v = json!({
            "id": "resp_9", "status": "completed",
            "output": [
                {"type": "web_search_call", "id": "ws_1", "status": "completed"},
                {"type": "message", "role": "assistant",
                 "content": [{"type": "output_text", "text": "Done"}, {"type": "new_part"}]},
            ],
        });
        let r = parse_response(&v).unwrap();
        assert_eq!(
            (r.turn.text.as_str(), r.stop),
            ("Done", StopReason::EndTurn)
        );
        let native = r.turn.native.unwrap();
        assert_eq!(native.items, v["output"].as_array().unwrap().clone());
        assert_eq!(native.response_id.as_deref(), Some("resp_9"));
        let failed =
            json!({"status": "failed", "error": {"code": "server_error", "message": "oops"}});
        let e = parse_response(&failed).unwrap_err().to_string();
        assert!(e.contains("oops") && e.contains("server_error"), "{e}");
    }
}
