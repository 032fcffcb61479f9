//! A scripted model server for tests and benchmarks (feature `fake`): axum on loopback,
//! speaking each API's wire format — `/v1/chat/completions`, `/v1/responses`,
//! `/v1/messages` — with or without streaming (as the request's `stream` asks). Streams are
//! sent in many small body frames, events split across frames, tool-call arguments split
//! across deltas. Every request body is recorded for golden comparisons.
//!
//! A model server on loopback is reachable only when allowlisted: use
//! [`FakeServer::egress`] for the `[egress]` policy.

use std::collections::{BTreeMap, VecDeque};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::Response;
use serde_json::{Value, json};

/// How a scripted turn ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FakeStop {
    EndTurn,
    ToolUse,
    MaxTokens,
    Refusal,
}

/// The token counts a scripted answer reports (10 in, 5 out unless a test says otherwise).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FakeUsage {
    pub input: u64,
    pub output: u64,
}

impl Default for FakeUsage {
    fn default() -> Self {
        FakeUsage {
            input: 10,
            output: 5,
        }
    }
}

/// One scripted model answer.
#[derive(Debug, Clone, PartialEq)]
pub struct FakeTurn {
    pub text: String,
    /// `(id, name, arguments text)`.
    pub calls: Vec<(String, String, String)>,
    pub refusal: Option<String>,
    pub stop: FakeStop,
    /// Reported in each API's `usage` (streamed or not).
    pub usage: FakeUsage,
}

impl FakeTurn {
    /// A final answer.
    pub fn text(text: &str) -> Self {
        FakeTurn {
            text: text.into(),
            calls: Vec::new(),
            refusal: None,
            stop: FakeStop::EndTurn,
            usage: FakeUsage::default(),
        }
    }

    /// Tool calls (`(id, name, arguments)`), nothing else.
    pub fn calls(calls: &[(&str, &str, &str)]) -> Self {
        FakeTurn {
            text: String::new(),
            calls: calls
                .iter()
                .map(|(i, n, a)| ((*i).into(), (*n).into(), (*a).into()))
                .collect(),
            refusal: None,
            stop: FakeStop::ToolUse,
            usage: FakeUsage::default(),
        }
    }

    /// A refusal.
    pub fn refusal(text: &str) -> Self {
        FakeTurn {
            text: String::new(),
            calls: Vec::new(),
            refusal: Some(text.into()),
            stop: FakeStop::Refusal,
            usage: FakeUsage::default(),
        }
    }

    /// Text cut at the token cap.
    pub fn max_tokens(text: &str) -> Self {
        FakeTurn {
            stop: FakeStop::MaxTokens,
            ..FakeTurn::text(text)
        }
    }

    /// The same answer reporting `input` and `output` tokens.
    pub fn with_usage(self, input: u64, output: u64) -> Self {
        FakeTurn {
            usage: FakeUsage { input, output },
            ..self
        }
    }
}

/// One scripted reply.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    Turn(FakeTurn),
    /// Never answers: the request waits until the client gives up (a model that is slow
    /// when toolgate is killed).
    Hang,
    /// An error answer: status, `retry-after` header, error message.
    Status {
        status: u16,
        retry_after: Option<String>,
        message: String,
    },
}

/// A request the server received.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    pub path: String,
    pub headers: BTreeMap<String, String>,
    pub body: Value,
}

impl Recorded {
    /// The names of the tools the request offered, in order, in any of the three APIs'
    /// shapes (`function.name` for Chat Completions, `name` otherwise).
    pub fn tool_names(&self) -> Vec<String> {
        self.body["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["function"]["name"].as_str().or(t["name"].as_str()))
            .map(str::to_owned)
            .collect()
    }
}

#[derive(Default)]
struct Shared {
    script: Mutex<VecDeque<Reply>>,
    requests: Mutex<Vec<Recorded>>,
    /// Replies handed out so far (numbers the response ids).
    served: Mutex<u64>,
    /// Replay the script forever (benchmarks).
    cycle: bool,
}

/// The running server; stops when dropped.
pub struct FakeServer {
    pub addr: SocketAddr,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FakeServer {
    /// Serves `script` in order; after it runs out every request gets a 500 saying so.
    pub async fn start(script: Vec<Reply>) -> std::io::Result<FakeServer> {
        Self::start_with(script, false).await
    }

    /// Serves `script` over and over (for benchmarks).
    pub async fn cycling(script: Vec<Reply>) -> std::io::Result<FakeServer> {
        Self::start_with(script, true).await
    }

    async fn start_with(script: Vec<Reply>, cycle: bool) -> std::io::Result<FakeServer> {
        let shared = Arc::new(Shared {
            script: Mutex::new(script.into()),
            cycle,
            ..Shared::default()
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let app = Router::new()
            .fallback(handle)
            .with_state(Arc::clone(&shared));
        // Streams are many small writes: without TCP_NODELAY, Nagle's algorithm and the
        // client's delayed ACK add ~40 ms to every streamed answer.
        let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
            let _ = tcp.set_nodelay(true);
        });
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(FakeServer { addr, shared, task })
    }

    /// `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The `[egress]` entries that let toolgate reach this server.
    pub fn egress(&self) -> toolgate_net::EgressPolicy {
        let host = format!("127.0.0.1:{}", self.addr.port());
        toolgate_net::EgressPolicy::default()
            .allow_host(&host)
            .and_then(|p| p.allow_plain_http(&host))
            .unwrap_or_default()
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<Recorded> {
        lock(&self.shared.requests).clone()
    }

    /// Replies not yet served.
    pub fn remaining(&self) -> usize {
        lock(&self.shared.script).len()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

async fn handle(
    State(shared): State<Arc<Shared>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let path = uri.path().to_owned();
    lock(&shared.requests).push(Recorded {
        path: path.clone(),
        headers: headers
            .iter()
            .map(|(k, v)| (k.as_str().to_owned(), v.to_str().unwrap_or("").to_owned()))
            .collect(),
        body: body.clone(),
    });
    let reply = {
        let mut script = lock(&shared.script);
        let r = script.pop_front();
        if shared.cycle
            && let Some(r) = &r
        {
            script.push_back(r.clone());
        }
        r
    };
    let n = {
        let mut served = lock(&shared.served);
        *served += 1;
        *served
    };
    let stream = body.get("stream").and_then(Value::as_bool) == Some(true);
    let model = body.get("model").and_then(Value::as_str).unwrap_or("fake");
    match reply {
        None => status(500, None, "the fake server's script ran out"),
        Some(Reply::Hang) => std::future::pending().await,
        Some(Reply::Status {
            status: s,
            retry_after,
            message,
        }) => status(s, retry_after.as_deref(), &message),
        Some(Reply::Turn(turn)) => match path.as_str() {
            "/v1/chat/completions" if stream => sse(chat_stream(&turn, model)),
            "/v1/chat/completions" => json_response(&chat_completion(&turn, model)),
            "/v1/responses" if stream => sse(responses_stream(&turn, model, n)),
            "/v1/responses" => json_response(&responses_object(&turn, model, n)),
            "/v1/messages" if stream => sse(anthropic_stream(&turn, model, n)),
            "/v1/messages" => json_response(&anthropic_message(&turn, model, n)),
            other => status(404, None, &format!("no such endpoint {other}")),
        },
    }
}

fn status(code: u16, retry_after: Option<&str>, message: &str) -> Response {
    let mut b = Response::builder()
        .status(StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR))
        .header("content-type", "application/json");
    if let Some(r) = retry_after {
        b = b.header("retry-after", r);
    }
    let body = json!({"error": {"message": message, "type": "fake_error"}}).to_string();
    b.body(Body::from(body))
        .unwrap_or_else(|_| Response::new(Body::empty()))
}

fn json_response(v: &Value) -> Response {
    Response::builder()
        .header("content-type", "application/json")
        .body(Body::from(v.to_string()))
        .unwrap_or_else(|_| Response::new(Body::empty()))
}

/// Events as `(event name, data)`; sent as many frames, each event cut in two.
fn sse(events: Vec<(Option<&'static str>, String)>) -> Response {
    let mut frames: Vec<Result<Bytes, Infallible>> = Vec::new();
    for (name, data) in events {
        let mut text = String::new();
        if let Some(n) = name {
            text.push_str(&format!("event: {n}\n"));
        }
        text.push_str(&format!("data: {data}\n\n"));
        let bytes = text.into_bytes();
        let mid = bytes.len() / 2;
        frames.push(Ok(Bytes::copy_from_slice(&bytes[..mid])));
        frames.push(Ok(Bytes::copy_from_slice(&bytes[mid..])));
    }
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(Body::from_stream(futures_util::stream::iter(frames)))
        .unwrap_or_else(|_| Response::new(Body::empty()))
}

/// Splits `s` in two (at a char boundary), for argument deltas.
fn halves(s: &str) -> [&str; 2] {
    let mut mid = s.len() / 2;
    while !s.is_char_boundary(mid) {
        mid -= 1;
    }
    [&s[..mid], &s[mid..]]
}

// ---- OpenAI Chat Completions ----

fn chat_finish(turn: &FakeTurn) -> &'static str {
    match turn.stop {
        FakeStop::EndTurn | FakeStop::Refusal => "stop",
        FakeStop::ToolUse => "tool_calls",
        FakeStop::MaxTokens => "length",
    }
}

fn chat_completion(turn: &FakeTurn, model: &str) -> Value {
    let calls: Vec<Value> = turn
        .calls
        .iter()
        .map(|(id, name, args)| {
            json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}})
        })
        .collect();
    let mut message = json!({
        "role": "assistant",
        "content": if turn.text.is_empty() { Value::Null } else { json!(turn.text) },
        "refusal": turn.refusal,
        "annotations": [],
    });
    if !calls.is_empty() {
        message["tool_calls"] = Value::Array(calls);
    }
    json!({
        "id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": model,
        "choices": [{"index": 0, "message": message, "logprobs": null,
                     "finish_reason": chat_finish(turn)}],
        "usage": {"prompt_tokens": turn.usage.input, "completion_tokens": turn.usage.output,
                  "total_tokens": turn.usage.input + turn.usage.output,
                  "completion_tokens_details": {"reasoning_tokens": 0}},
        "system_fingerprint": "fp_fake", "service_tier": "default",
    })
}

fn chat_stream(turn: &FakeTurn, model: &str) -> Vec<(Option<&'static str>, String)> {
    let chunk = |delta: Value, finish: Value| {
        (
            None,
            json!({"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0,
                   "model": model, "system_fingerprint": "fp_fake",
                   "choices": [{"index": 0, "delta": delta, "logprobs": null,
                                "finish_reason": finish}]})
            .to_string(),
        )
    };
    let mut out = vec![chunk(
        json!({"role": "assistant", "content": "", "refusal": null}),
        Value::Null,
    )];
    if !turn.text.is_empty() {
        for piece in halves(&turn.text) {
            out.push(chunk(json!({"content": piece}), Value::Null));
        }
    }
    if let Some(r) = &turn.refusal {
        for piece in halves(r) {
            out.push(chunk(json!({"refusal": piece}), Value::Null));
        }
    }
    for (i, (id, name, args)) in turn.calls.iter().enumerate() {
        out.push(chunk(
            json!({"tool_calls": [{"index": i, "id": id, "type": "function",
                                   "function": {"name": name, "arguments": ""}}]}),
            Value::Null,
        ));
        for piece in halves(args) {
            out.push(chunk(
                json!({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}),
                Value::Null,
            ));
        }
    }
    out.push(chunk(json!({}), json!(chat_finish(turn))));
    out.push((
        None,
        json!({"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0,
               "model": model, "choices": [],
               "usage": {"prompt_tokens": turn.usage.input, "completion_tokens": turn.usage.output,
                         "total_tokens": turn.usage.input + turn.usage.output}})
        .to_string(),
    ));
    out.push((None, "[DONE]".into()));
    out
}

// ---- OpenAI Responses ----

fn responses_output(turn: &FakeTurn, n: u64) -> Vec<Value> {
    // A reasoning item comes first, as reasoning models send it; it must come back untouched.
    let mut out = vec![
        json!({"type": "reasoning", "id": format!("rs_{n}"), "summary": [],
                              "encrypted_content": format!("opaque-{n}")}),
    ];
    if !turn.text.is_empty() || turn.refusal.is_some() {
        let content = match &turn.refusal {
            Some(r) => json!([{"type": "refusal", "refusal": r}]),
            None => json!([{"type": "output_text", "text": turn.text, "annotations": []}]),
        };
        out.push(
            json!({"type": "message", "id": format!("msg_{n}"), "status": "completed",
                        "role": "assistant", "content": content}),
        );
    }
    for (i, (id, name, args)) in turn.calls.iter().enumerate() {
        out.push(
            json!({"type": "function_call", "id": format!("fc_{n}_{i}"), "call_id": id,
                        "name": name, "arguments": args, "status": "completed"}),
        );
    }
    out
}

fn responses_object(turn: &FakeTurn, model: &str, n: u64) -> Value {
    let incomplete = turn.stop == FakeStop::MaxTokens;
    json!({
        "id": format!("resp_{n}"), "object": "response", "created_at": 0, "model": model,
        "status": if incomplete { "incomplete" } else { "completed" },
        "incomplete_details": if incomplete { json!({"reason": "max_output_tokens"}) } else { Value::Null },
        "output": responses_output(turn, n),
        "usage": {"input_tokens": turn.usage.input, "output_tokens": turn.usage.output,
                  "total_tokens": turn.usage.input + turn.usage.output},
        "parallel_tool_calls": true, "tool_choice": "auto", "metadata": {},
    })
}

fn responses_stream(turn: &FakeTurn, model: &str, n: u64) -> Vec<(Option<&'static str>, String)> {
    let mut out = Vec::new();
    let mut ev = |name: &'static str, v: Value| out.push((Some(name), v.to_string()));
    ev(
        "response.created",
        json!({"type": "response.created", "sequence_number": 0,
               "response": {"id": format!("resp_{n}"), "status": "in_progress", "output": []}}),
    );
    ev(
        "response.brand_new_event",
        json!({"type": "response.brand_new_event", "payload": {"x": 1}}),
    );
    let full = responses_object(turn, model, n);
    let items = responses_output(turn, n);
    for (index, item) in items.iter().enumerate() {
        let item_id = item["id"].clone();
        let mut added = item.clone();
        match item["type"].as_str() {
            Some("function_call") => added["arguments"] = json!(""),
            Some("message") => added["content"] = json!([]),
            _ => {}
        }
        ev(
            "response.output_item.added",
            json!({"type": "response.output_item.added", "output_index": index, "item": added}),
        );
        match item["type"].as_str() {
            Some("message") => {
                let (empty, full_part, done_event, done_field, done_text) = match &turn.refusal {
                    Some(r) => (
                        json!({"type": "refusal", "refusal": ""}),
                        json!({"type": "refusal", "refusal": r}),
                        "response.refusal.done",
                        "refusal",
                        r.clone(),
                    ),
                    None => (
                        json!({"type": "output_text", "text": "", "annotations": []}),
                        json!({"type": "output_text", "text": turn.text, "annotations": []}),
                        "response.output_text.done",
                        "text",
                        turn.text.clone(),
                    ),
                };
                ev(
                    "response.content_part.added",
                    json!({"type": "response.content_part.added", "item_id": item_id,
                           "output_index": index, "content_index": 0, "part": empty}),
                );
                if let Some(r) = &turn.refusal {
                    for piece in halves(r) {
                        ev(
                            "response.refusal.delta",
                            json!({"type": "response.refusal.delta", "item_id": item_id,
                                   "output_index": index, "content_index": 0, "delta": piece}),
                        );
                    }
                } else {
                    for piece in halves(&turn.text) {
                        ev(
                            "response.output_text.delta",
                            json!({"type": "response.output_text.delta", "item_id": item_id,
                                   "output_index": index, "content_index": 0, "delta": piece}),
                        );
                    }
                }
                let mut done = json!({"type": done_event, "item_id": item_id,
                                      "output_index": index, "content_index": 0});
                done[done_field] = json!(done_text);
                ev(done_event, done);
                ev(
                    "response.content_part.done",
                    json!({"type": "response.content_part.done", "item_id": item_id,
                           "output_index": index, "content_index": 0, "part": full_part}),
                );
            }
            Some("function_call") => {
                let args = item["arguments"].as_str().unwrap_or("");
                for piece in halves(args) {
                    ev(
                        "response.function_call_arguments.delta",
                        json!({"type": "response.function_call_arguments.delta",
                               "item_id": item_id, "output_index": index, "delta": piece}),
                    );
                }
                ev(
                    "response.function_call_arguments.done",
                    json!({"type": "response.function_call_arguments.done",
                           "item_id": item_id, "output_index": index, "arguments": args}),
                );
            }
            _ => {}
        }
        ev(
            "response.output_item.done",
            json!({"type": "response.output_item.done", "output_index": index, "item": item}),
        );
    }
    let done = if turn.stop == FakeStop::MaxTokens {
        "response.incomplete"
    } else {
        "response.completed"
    };
    ev(done, json!({"type": done, "response": full}));
    out
}

// ---- Anthropic Messages ----

fn anthropic_stop(turn: &FakeTurn) -> &'static str {
    match turn.stop {
        FakeStop::EndTurn => "end_turn",
        FakeStop::ToolUse => "tool_use",
        FakeStop::MaxTokens => "max_tokens",
        FakeStop::Refusal => "refusal",
    }
}

fn anthropic_blocks(turn: &FakeTurn, n: u64) -> Vec<Value> {
    // A thinking block with its signature: it must come back untouched.
    let mut blocks = vec![json!({"type": "thinking", "thinking": format!("plan {n}"),
                                 "signature": format!("sig-{n}")})];
    let text = turn.refusal.as_deref().unwrap_or(&turn.text);
    if !text.is_empty() {
        blocks.push(json!({"type": "text", "text": text}));
    }
    for (id, name, args) in &turn.calls {
        let input: Value = serde_json::from_str(args).unwrap_or_else(|_| json!({}));
        blocks.push(json!({"type": "tool_use", "id": id, "name": name, "input": input}));
    }
    blocks
}

fn anthropic_message(turn: &FakeTurn, model: &str, n: u64) -> Value {
    json!({
        "id": format!("msg_{n}"), "type": "message", "role": "assistant", "model": model,
        "content": anthropic_blocks(turn, n),
        "stop_reason": anthropic_stop(turn), "stop_sequence": null,
        "usage": {"input_tokens": turn.usage.input, "output_tokens": turn.usage.output,
                  "cache_read_input_tokens": 0},
    })
}

fn anthropic_stream(turn: &FakeTurn, model: &str, n: u64) -> Vec<(Option<&'static str>, String)> {
    let mut out = Vec::new();
    let mut ev = |name: &'static str, v: Value| out.push((Some(name), v.to_string()));
    ev(
        "message_start",
        json!({"type": "message_start", "message": {"id": format!("msg_{n}"), "type": "message",
               "role": "assistant", "model": model, "content": [], "stop_reason": null,
               "usage": {"input_tokens": turn.usage.input, "output_tokens": 1}}}),
    );
    ev("ping", json!({"type": "ping"}));
    for (index, block) in anthropic_blocks(turn, n).iter().enumerate() {
        let kind = block["type"].as_str().unwrap_or("");
        let start = match kind {
            "text" => json!({"type": "text", "text": ""}),
            "thinking" => json!({"type": "thinking", "thinking": "", "signature": ""}),
            _ => json!({"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}),
        };
        ev(
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": start}),
        );
        let delta = |d: Value| json!({"type": "content_block_delta", "index": index, "delta": d});
        match kind {
            "text" => {
                for piece in halves(block["text"].as_str().unwrap_or("")) {
                    ev(
                        "content_block_delta",
                        delta(json!({"type": "text_delta", "text": piece})),
                    );
                }
            }
            "thinking" => {
                ev(
                    "content_block_delta",
                    delta(json!({"type": "thinking_delta", "thinking": block["thinking"]})),
                );
                ev(
                    "content_block_delta",
                    delta(json!({"type": "signature_delta", "signature": block["signature"]})),
                );
            }
            _ => {
                // The scripted text, so that a test can stream input that is not JSON.
                let raw = turn
                    .calls
                    .iter()
                    .find(|(id, ..)| json!(id) == block["id"])
                    .map_or("", |(_, _, a)| a.as_str());
                for piece in halves(raw) {
                    ev(
                        "content_block_delta",
                        delta(json!({"type": "input_json_delta", "partial_json": piece})),
                    );
                }
            }
        }
        ev(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        );
    }
    ev(
        "message_delta",
        json!({"type": "message_delta",
               "delta": {"stop_reason": anthropic_stop(turn), "stop_sequence": null},
               "usage": {"output_tokens": turn.usage.output}}),
    );
    ev("message_stop", json!({"type": "message_stop"}));
    out
}
