//! `POST /v1/chat/completions` and `GET /v1/models`: the agent behind the OpenAI Chat
//! Completions wire format, so any OpenAI SDK client or chat UI pointed at toolgate gets the
//! agent, with the *server* running the tools. The bearer token is the principal; the
//! conversation is carried by the request's messages (each request is a conversation of its
//! own, entry `openai`, whose history starts with the earlier messages and whose turn answers
//! the last user message), readable afterwards under `/v1/conversations` by its id
//! (`chatcmpl-conv_…` without the prefix).
//!
//! The client's own `tools` are not offered (toolgate runs its catalog's, as the caller's
//! role allows); its `system`/`developer` messages become the first user message, labelled.
//! Streaming sends the answer as the model writes it, with a line for each tool call and for
//! each approval the turn waits for (where to decide it); a turn that fails ends with its
//! reason as the content and `finish_reason: "stop"`.

use std::convert::Infallible;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::broadcast::error::RecvError;
use toolgate_agent::{AssistantTurn, Message};
use toolgate_conversations::{Conversations, Event, Live, Posted};
use toolgate_protocol::ErrorCode;

use super::conversations::{desk, refused};
use super::extract::ApiJson;
use crate::auth::Caller;
use crate::error::ApiError;
use crate::state::AppState;

/// How often the journal is read again without a live notice (a turn on another replica).
const POLL: Duration = Duration::from_secs(1);

/// One message of the request. Content is a string or a list of parts (text parts are
/// joined; other parts are refused).
#[derive(Debug, Deserialize)]
pub struct ChatMessage {
    role: String,
    #[serde(default)]
    content: Value,
}

/// The request: the fields toolgate reads; the rest of the OpenAI request (temperature,
/// tools, …) is accepted and ignored.
#[derive(Debug, Deserialize)]
pub struct ChatRequest {
    #[serde(default)]
    model: Option<String>,
    messages: Vec<ChatMessage>,
    #[serde(default)]
    stream: bool,
}

fn invalid(message: impl Into<String>) -> ApiError {
    ApiError::new(ErrorCode::InvalidArguments, message)
}

fn text_of(content: &Value) -> Result<String, ApiError> {
    match content {
        Value::String(s) => Ok(s.clone()),
        Value::Null => Ok(String::new()),
        Value::Array(parts) => {
            let mut text = Vec::new();
            for p in parts {
                match (p["type"].as_str(), p["text"].as_str()) {
                    (Some("text"), Some(t)) => text.push(t),
                    (kind, _) => {
                        return Err(invalid(format!(
                            "content parts of type {} are not supported: send text",
                            kind.unwrap_or("(none)")
                        )));
                    }
                }
            }
            Ok(text.join("\n"))
        }
        _ => Err(invalid(
            "a message's content is a string or a list of text parts",
        )),
    }
}

/// The history the request brings, and its last user message.
fn split(messages: &[ChatMessage]) -> Result<(Vec<Message>, String), ApiError> {
    let Some((last, earlier)) = messages.split_last() else {
        return Err(invalid("messages is empty: send at least one user message"));
    };
    if last.role != "user" {
        return Err(invalid(format!(
            "the last message is `{}`: the agent answers a user message (toolgate runs the tools itself; do not send tool results)",
            last.role
        )));
    }
    let mut instructions = Vec::new();
    let mut history = Vec::new();
    for m in earlier {
        let text = text_of(&m.content)?;
        match m.role.as_str() {
            "system" | "developer" => instructions.push(text),
            "user" => history.push(Message::user(text)),
            "assistant" => history.push(Message::Assistant(AssistantTurn {
                text,
                ..AssistantTurn::default()
            })),
            // Results of tools the client ran: toolgate ran its own; theirs carry nothing the
            // agent's history can hold.
            "tool" | "function" => {}
            other => return Err(invalid(format!("unknown message role `{other}`"))),
        }
    }
    let mut prelude = Vec::new();
    if !instructions.is_empty() {
        prelude.push(Message::user(format!(
            "Instructions from the client application:\n{}",
            instructions.join("\n\n")
        )));
    }
    prelude.extend(history);
    Ok((prelude, text_of(&last.content)?))
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// What a turn's progress adds to the streamed answer.
enum Step {
    Text(String),
    Done { text: String, failed: bool },
}

/// Follows turn `seq` of conversation `id`: its text and progress as they come, then its end.
struct Follower {
    desk: Conversations,
    id: String,
    seq: u64,
    after: u64,
    rx: tokio::sync::broadcast::Receiver<Live>,
    console: String,
    /// Text streamed since the last call (the answer, if the turn ends now).
    streamed: String,
    shutdown: tokio_util::sync::CancellationToken,
}

impl Follower {
    async fn next(&mut self) -> Option<Vec<Step>> {
        loop {
            let received = tokio::select! {
                () = self.shutdown.cancelled() => return None,
                () = tokio::time::sleep(POLL) => None,
                r = self.rx.recv() => Some(r),
            };
            match received {
                Some(Ok(Live::Delta { reply_to, text })) if reply_to == self.seq => {
                    self.streamed.push_str(&text);
                    return Some(vec![Step::Text(text)]);
                }
                Some(Ok(Live::Tool {
                    reply_to, name, ok, ..
                })) if reply_to == self.seq => {
                    self.streamed.clear();
                    let line = match ok {
                        None => format!("\n\n> running `{name}`…\n\n"),
                        Some(true) => format!("> `{name}` done\n\n"),
                        Some(false) => format!("> `{name}` failed\n\n"),
                    };
                    return Some(vec![Step::Text(line)]);
                }
                Some(Ok(_)) => {}
                Some(Err(RecvError::Closed)) => return None,
                None | Some(Err(RecvError::Lagged(_))) => {}
            }
            let steps = self.read_journal().await;
            if !steps.is_empty() {
                return Some(steps);
            }
        }
    }

    async fn read_journal(&mut self) -> Vec<Step> {
        let Ok(entries) = self.desk.entries(&self.id, self.after, 200).await else {
            return Vec::new();
        };
        let mut steps = Vec::new();
        for e in &entries {
            self.after = e.seq;
            match &e.event {
                Event::Approval {
                    reply_to,
                    tool,
                    approval_id,
                    requires_confirmation,
                    ..
                } if *reply_to == self.seq => {
                    let typed = if *requires_confirmation {
                        format!(" (type `{tool}` to confirm)")
                    } else {
                        String::new()
                    };
                    steps.push(Step::Text(format!(
                        "\n\n> ⏸ `{tool}` waits for approval {approval_id}{typed}: decide at {}/#/conversations/{} or with `toolgate approvals approve {approval_id}`\n\n",
                        self.console, self.id
                    )));
                }
                Event::Answer { reply_to, text, .. } if *reply_to == self.seq => {
                    // What was not streamed (a turn finished from the journal, a non-streaming
                    // model) arrives whole.
                    let rest = text
                        .strip_prefix(self.streamed.as_str())
                        .unwrap_or(text)
                        .to_owned();
                    steps.push(Step::Done {
                        text: rest,
                        failed: false,
                    });
                    return steps;
                }
                Event::Failed { reply_to, message } if *reply_to == self.seq => {
                    steps.push(Step::Done {
                        text: format!("\n\n{message}"),
                        failed: true,
                    });
                    return steps;
                }
                _ => {}
            }
        }
        steps
    }
}

pub async fn models(
    State(state): State<AppState>,
    _caller: Caller,
) -> Result<Json<Value>, ApiError> {
    let desk = desk(&state)?;
    Ok(Json(json!({
        "object": "list",
        "data": [{"id": desk.model_name(), "object": "model", "created": 0, "owned_by": "toolgate"}],
    })))
}

pub async fn chat_completions(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(request): ApiJson<ChatRequest>,
) -> Result<Response, ApiError> {
    let desk = desk(&state)?.clone();
    let (prelude, text) = split(&request.messages)?;
    let row = desk
        .create_with("openai", &caller.principal, &caller.role, prelude)
        .await
        .map_err(refused)?;
    let rx = desk.listen(&row.id);
    let posted = desk
        .post(&row, &caller.principal, &caller.role, &text)
        .await
        .map_err(refused)?;
    let model = request
        .model
        .filter(|m| !m.is_empty())
        .unwrap_or_else(|| desk.model_name().to_owned());
    let id = format!("chatcmpl-{}", row.id);
    let created = unix_now();
    let seq = match posted {
        Posted::Queued { seq, .. } => seq,
        // A command (`/tools`, `/help`) is answered at once.
        Posted::Command { reply, .. } => {
            return Ok(if request.stream {
                let chunks = vec![
                    chunk(
                        &id,
                        created,
                        &model,
                        json!({"role": "assistant", "content": reply}),
                        None,
                    ),
                    chunk(&id, created, &model, json!({}), Some("stop")),
                ];
                sse_of(chunks).into_response()
            } else {
                Json(completion(&id, created, &model, &reply)).into_response()
            });
        }
    };
    let follower = Follower {
        desk,
        id: row.id.clone(),
        seq,
        after: seq,
        rx,
        console: super::public_url(&state),
        streamed: String::new(),
        shutdown: state.shutdown.clone(),
    };
    if request.stream {
        return Ok(stream(follower, id, created, model).into_response());
    }
    let mut follower = follower;
    let mut answer = String::new();
    while let Some(steps) = follower.next().await {
        for step in steps {
            match step {
                Step::Text(_) => {}
                Step::Done { text, failed } => {
                    let text = if failed {
                        text.trim().to_owned()
                    } else {
                        format!("{}{text}", follower.streamed)
                    };
                    answer = text;
                    return Ok(Json(completion(&id, created, &model, &answer)).into_response());
                }
            }
        }
    }
    Err(ApiError::new(
        ErrorCode::Unavailable,
        "the server is shutting down; the turn continues after the restart",
    )
    .with_status(StatusCode::SERVICE_UNAVAILABLE)
    .with_details(json!({"conversation": row.id, "partial": answer})))
}

fn completion(id: &str, created: u64, model: &str, text: &str) -> Value {
    json!({
        "id": id, "object": "chat.completion", "created": created, "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                     "finish_reason": "stop", "logprobs": null}],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    })
}

fn chunk(id: &str, created: u64, model: &str, delta: Value, finish: Option<&str>) -> Value {
    json!({
        "id": id, "object": "chat.completion.chunk", "created": created, "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": null}],
    })
}

fn sse_of(
    chunks: Vec<Value>,
) -> Sse<impl futures_util::Stream<Item = Result<SseEvent, Infallible>>> {
    let events = chunks
        .into_iter()
        .map(|c| Ok(SseEvent::default().data(c.to_string())))
        .chain(std::iter::once(Ok(SseEvent::default().data("[DONE]"))));
    Sse::new(futures_util::stream::iter(events))
}

fn stream(
    follower: Follower,
    id: String,
    created: u64,
    model: String,
) -> Sse<impl futures_util::Stream<Item = Result<SseEvent, Infallible>>> {
    let first = chunk(
        &id,
        created,
        &model,
        json!({"role": "assistant", "content": ""}),
        None,
    );
    let head = futures_util::stream::iter([Ok(SseEvent::default().data(first.to_string()))]);
    let tail = futures_util::stream::unfold(
        (Some(follower), id, model),
        move |(follower, id, model)| async move {
            let mut follower = follower?;
            let Some(steps) = follower.next().await else {
                return Some((vec![SseEvent::default().data("[DONE]")], (None, id, model)));
            };
            let mut events = Vec::new();
            let mut done = false;
            for step in steps {
                let (text, finish) = match step {
                    Step::Text(t) => (t, None),
                    Step::Done { text, .. } => {
                        done = true;
                        (text, Some("stop"))
                    }
                };
                if !text.is_empty() {
                    let c = chunk(&id, created, &model, json!({"content": text}), None);
                    events.push(SseEvent::default().data(c.to_string()));
                }
                if let Some(finish) = finish {
                    let c = chunk(&id, created, &model, json!({}), Some(finish));
                    events.push(SseEvent::default().data(c.to_string()));
                    events.push(SseEvent::default().data("[DONE]"));
                }
            }
            Some((
                events,
                (if done { None } else { Some(follower) }, id, model),
            ))
        },
    );
    use futures_util::StreamExt;
    let tail = tail.flat_map(|events| futures_util::stream::iter(events.into_iter().map(Ok)));
    Sse::new(head.chain(tail)).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
}
