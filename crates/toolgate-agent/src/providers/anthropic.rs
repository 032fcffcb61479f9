//! Anthropic Messages (`POST {base}/messages`, `x-api-key`, `anthropic-version`).
//!
//! Request: `system`, `max_tokens` (required), `messages` alternating `user` / `assistant`
//! with content blocks: the assistant's `text` and `tool_use` blocks (passed back verbatim,
//! `thinking` blocks and signatures included, when this provider produced them), the results
//! as `tool_result` blocks (`tool_use_id`, `content`, `is_error`) in one user message, in the
//! calls' order. `tool_choice` is `auto` | `any` | `tool` (+`name`) | `none`;
//! `disable_parallel_tool_use` carries `parallel_tool_calls = false`. Streaming:
//! `content_block_start/delta/stop` with `text_delta`, `input_json_delta` (`partial_json`),
//! `thinking_delta`, `signature_delta`; `message_delta` carries `stop_reason` and usage.

use std::collections::BTreeMap;

use async_trait::async_trait;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value, json};
use toolgate_protocol::{ExportFormat, export};

use crate::client::{EventSink, ModelError};
use crate::config::ModelConfig;
use crate::http::{ApiKey, Http};
use crate::providers::{Wire, str_of, u64_of};
use crate::sse::read_events;
use crate::types::{
    AssistantTurn, Message, ModelRequest, ModelResponse, NativeTurn, StopReason, StreamEvent,
    ToolCall, ToolChoice, Usage,
};

const PROVIDER: &str = "anthropic";

#[derive(Debug)]
pub struct AnthropicClient {
    http: Http,
    model: String,
    key: Option<ApiKey>,
    version: String,
    max_tokens: u32,
    temperature: Option<f32>,
}

impl AnthropicClient {
    pub fn new(http: Http, config: &ModelConfig, key: Option<String>) -> Self {
        AnthropicClient {
            http,
            model: config.model.clone(),
            key: key.map(ApiKey::new),
            version: config.anthropic_version.clone(),
            max_tokens: config.max_tokens,
            temperature: config.temperature,
        }
    }

    fn headers(&self) -> Result<HeaderMap, ModelError> {
        let mut h = HeaderMap::new();
        if let Some(k) = &self.key {
            h.insert(HeaderName::from_static("x-api-key"), k.header("")?);
        }
        h.insert(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_str(&self.version).map_err(|_| {
                ModelError::Config("[model] anthropic_version is not a header value".into())
            })?,
        );
        Ok(h)
    }

    /// The request body (public for the golden tests).
    pub fn body(&self, req: &ModelRequest, stream: bool) -> Value {
        let mut body = Map::new();
        body.insert("model".into(), json!(self.model));
        body.insert(
            "max_tokens".into(),
            json!(req.max_tokens.unwrap_or(self.max_tokens)),
        );
        if let Some(s) = &req.system {
            body.insert("system".into(), json!(s));
        }
        body.insert("messages".into(), Value::Array(messages(req)));
        if !req.tools.is_empty() {
            let specs: Vec<_> = req.tools.iter().collect();
            body.insert("tools".into(), export(&specs, ExportFormat::Anthropic));
            let mut choice = match &req.tool_choice {
                ToolChoice::Auto => json!({"type": "auto"}),
                ToolChoice::None => json!({"type": "none"}),
                ToolChoice::Required => json!({"type": "any"}),
                ToolChoice::Tool(name) => json!({"type": "tool", "name": name}),
            };
            if req.parallel_tool_calls == Some(false) && req.tool_choice != ToolChoice::None {
                choice["disable_parallel_tool_use"] = json!(true);
            }
            body.insert("tool_choice".into(), choice);
        }
        if let Some(t) = req.temperature.or(self.temperature) {
            body.insert("temperature".into(), json!(t));
        }
        if stream {
            body.insert("stream".into(), json!(true));
        }
        Value::Object(body)
    }
}

/// The assistant turn as content blocks: verbatim when this provider produced it.
fn assistant_blocks(turn: &AssistantTurn) -> Vec<Value> {
    if let Some(n) = turn.native.as_ref().filter(|n| n.provider == PROVIDER) {
        return n.items.clone();
    }
    let mut blocks = Vec::new();
    if !turn.text.is_empty() {
        blocks.push(json!({"type": "text", "text": turn.text}));
    }
    for c in &turn.tool_calls {
        let input = serde_json::from_str::<Value>(&c.arguments)
            .ok()
            .filter(Value::is_object)
            .unwrap_or_else(|| json!({}));
        blocks.push(json!({"type": "tool_use", "id": c.id, "name": c.name, "input": input}));
    }
    blocks
}

fn messages(req: &ModelRequest) -> Vec<Value> {
    // Consecutive messages of one role are merged: the API wants them alternating.
    let mut out: Vec<(&'static str, Vec<Value>)> = Vec::new();
    let mut push = |role: &'static str, blocks: Vec<Value>| match out.last_mut() {
        Some((r, existing)) if *r == role => existing.extend(blocks),
        _ => out.push((role, blocks)),
    };
    for m in &req.messages {
        match m {
            Message::User { text } => push("user", vec![json!({"type": "text", "text": text})]),
            // The API refuses an empty assistant message (a refusal or a cut answer with no
            // text); leaving it out keeps the roles alternating through the merge.
            Message::Assistant(turn) => {
                let blocks = assistant_blocks(turn);
                if !blocks.is_empty() {
                    push("assistant", blocks);
                }
            }
            Message::ToolResults { results } => push(
                "user",
                results
                    .iter()
                    .map(|r| {
                        json!({"type": "tool_result", "tool_use_id": r.call_id,
                               "content": r.content, "is_error": r.is_error})
                    })
                    .collect(),
            ),
        }
    }
    out.into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect()
}

fn stop_reason(s: &str, turn: &AssistantTurn) -> StopReason {
    match s {
        "end_turn" => StopReason::EndTurn,
        "tool_use" => StopReason::ToolUse,
        "max_tokens" => StopReason::MaxTokens,
        "stop_sequence" => StopReason::StopSequence,
        "refusal" => StopReason::Refusal,
        "" if !turn.tool_calls.is_empty() => StopReason::ToolUse,
        "" => StopReason::EndTurn,
        other => StopReason::Other(other.to_owned()),
    }
}

/// Text and tool calls out of the content blocks.
fn turn_of(blocks: Vec<Value>, raw_inputs: &BTreeMap<usize, String>) -> AssistantTurn {
    let mut turn = AssistantTurn::default();
    for (i, b) in blocks.iter().enumerate() {
        match str_of(b, "type") {
            "text" => turn.text.push_str(str_of(b, "text")),
            "tool_use" => {
                let arguments = match raw_inputs.get(&i) {
                    // Unparseable streamed input is handed on as it came.
                    Some(raw) if serde_json::from_str::<Value>(raw).is_err() => raw.clone(),
                    _ => b.get("input").map_or_else(|| "{}".into(), Value::to_string),
                };
                turn.tool_calls.push(ToolCall {
                    id: str_of(b, "id").to_owned(),
                    name: str_of(b, "name").to_owned(),
                    arguments,
                });
            }
            _ => {}
        }
    }
    turn.native = Some(NativeTurn {
        provider: PROVIDER.into(),
        items: blocks,
        response_id: None,
    });
    turn
}

fn usage(v: &Value) -> Usage {
    Usage {
        input_tokens: u64_of(v, "input_tokens"),
        output_tokens: u64_of(v, "output_tokens"),
    }
}

/// Reads a non-streaming `message`.
pub fn parse_message(v: &Value) -> Result<ModelResponse, ModelError> {
    let blocks = v
        .get("content")
        .and_then(Value::as_array)
        .cloned()
        .ok_or_else(|| ModelError::Protocol("no `content` array in the message".into()))?;
    let turn = turn_of(blocks, &BTreeMap::new());
    let stop = stop_reason(str_of(v, "stop_reason"), &turn);
    Ok(ModelResponse {
        turn,
        stop,
        usage: v.get("usage").map(usage).unwrap_or_default(),
    })
}

#[async_trait]
impl Wire for AnthropicClient {
    const PROVIDER: &'static str = PROVIDER;
    const FORMAT: ExportFormat = ExportFormat::Anthropic;
    const PATH: &'static str = "messages";
    const ANSWER: &'static str = "the message";

    fn http(&self) -> &Http {
        &self.http
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn headers(&self) -> Result<HeaderMap, ModelError> {
        AnthropicClient::headers(self)
    }

    fn body(&self, request: &ModelRequest, stream: bool) -> Value {
        AnthropicClient::body(self, request, stream)
    }

    fn parse(answer: &Value) -> Result<ModelResponse, ModelError> {
        parse_message(answer)
    }

    async fn read_stream(
        &self,
        resp: reqwest::Response,
        sink: EventSink<'_>,
    ) -> Result<ModelResponse, ModelError> {
        let mut blocks: BTreeMap<usize, Value> = BTreeMap::new();
        let mut partial_json: BTreeMap<usize, String> = BTreeMap::new();
        let mut stop = String::new();
        let mut use_ = Usage::default();
        read_events(resp, |ev| {
            let v: Value = match serde_json::from_str(&ev.data) {
                Ok(v) => v,
                Err(_) if ev.data.trim().is_empty() => return Ok(true),
                Err(e) => {
                    return Err(ModelError::Protocol(format!(
                        "a stream event is not JSON ({e}): {}",
                        ev.data
                    )));
                }
            };
            let index = v
                .get("index")
                .and_then(Value::as_u64)
                .and_then(|i| usize::try_from(i).ok())
                .unwrap_or(0);
            match str_of(&v, "type") {
                "message_start" => {
                    if let Some(u) = v.get("message").and_then(|m| m.get("usage")) {
                        use_ = usage(u);
                    }
                }
                "content_block_start" => {
                    let block = v.get("content_block").cloned().unwrap_or(Value::Null);
                    if str_of(&block, "type") == "tool_use" {
                        sink(StreamEvent::ToolCallStarted {
                            id: str_of(&block, "id").to_owned(),
                            name: str_of(&block, "name").to_owned(),
                        });
                    }
                    blocks.insert(index, block);
                }
                "content_block_delta" => {
                    let delta = v.get("delta").cloned().unwrap_or(Value::Null);
                    let Some(block) = blocks.get_mut(&index) else {
                        return Ok(true);
                    };
                    let mut append = |field: &str, piece: &str| {
                        let old = str_of(block, field).to_owned();
                        block[field] = json!(old + piece);
                    };
                    match str_of(&delta, "type") {
                        "text_delta" => {
                            let t = str_of(&delta, "text");
                            append("text", t);
                            sink(StreamEvent::TextDelta(t.to_owned()));
                        }
                        "input_json_delta" => {
                            let piece = str_of(&delta, "partial_json");
                            partial_json.entry(index).or_default().push_str(piece);
                            sink(StreamEvent::ToolArgumentsDelta {
                                id: str_of(block, "id").to_owned(),
                                delta: piece.to_owned(),
                            });
                        }
                        "thinking_delta" => append("thinking", str_of(&delta, "thinking")),
                        "signature_delta" => {
                            block["signature"] = json!(str_of(&delta, "signature"));
                        }
                        _ => {}
                    }
                }
                "content_block_stop" => {
                    if let (Some(raw), Some(block)) =
                        (partial_json.get(&index), blocks.get_mut(&index))
                    {
                        // The empty string is how a call without arguments streams.
                        let input = if raw.trim().is_empty() {
                            Some(json!({}))
                        } else {
                            serde_json::from_str::<Value>(raw).ok()
                        };
                        if let Some(input) = input {
                            block["input"] = input;
                        }
                    }
                }
                "message_delta" => {
                    if let Some(s) = v
                        .get("delta")
                        .and_then(|d| d.get("stop_reason"))
                        .and_then(Value::as_str)
                    {
                        stop = s.to_owned();
                    }
                    if let Some(u) = v.get("usage") {
                        let out = u64_of(u, "output_tokens");
                        if out > 0 {
                            use_.output_tokens = out;
                        }
                        let inp = u64_of(u, "input_tokens");
                        if inp > 0 {
                            use_.input_tokens = inp;
                        }
                    }
                }
                "message_stop" => return Ok(false),
                "error" => {
                    let e = v.get("error").cloned().unwrap_or(Value::Null);
                    return Err(ModelError::Protocol(format!(
                        "the stream ended with an error: {} ({})",
                        str_of(&e, "message"),
                        str_of(&e, "type")
                    )));
                }
                _ => {}
            }
            Ok(true)
        })
        .await?;
        let turn = turn_of(blocks.into_values().collect(), &partial_json);
        let stop = stop_reason(&stop, &turn);
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
    fn unknown_blocks_are_kept_verbatim_and_roles_alternate() {
        let v = json!({
            "content": [
                {"type": "server_tool_use", "id": "srv_1", "name": "web_search", "input": {}},
                {"type": "text", "text": "Hi"},
                {"type": "tool_use", "id": "toolu_1", "name": "echo", "input": {"text": "a"}},
            ],
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 1, "output_tokens": 2},
        });
        let r = parse_message(&v).unwrap();
        assert_eq!(r.turn.text, "Hi");
        assert_eq!(r.turn.tool_calls[0].arguments, r#"{"text":"a"}"#);
        let req = ModelRequest {
            messages: vec![
                Message::user("one"),
                Message::user("two"),
                Message::Assistant(r.turn.clone()),
            ],
            ..ModelRequest::default()
        };
        let msgs = messages(&req);
        assert_eq!(msgs.len(), 2, "{msgs:?}");
        assert_eq!(msgs[0]["content"].as_array().unwrap().len(), 2);
        assert_eq!(msgs[1]["content"], v["content"]);
        assert_eq!(
            stop_reason("pause_turn", &r.turn),
            StopReason::Other("pause_turn".into())
        );
        let empty = ModelRequest {
            messages: vec![
                Message::user("bad"),
                Message::Assistant(AssistantTurn::default()),
                Message::user("sorry"),
            ],
            ..ModelRequest::default()
        };
        let msgs = messages(&empty);
        assert_eq!(msgs.len(), 1, "{msgs:?}");
    }
}
