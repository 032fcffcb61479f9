//! The documented operations and bodies of `/v1/conversations`, `/v1/chat/completions` and
//! `/v1/models` (the agent under `toolgate serve`).

use serde_json::{Value, json};

use super::{body, created, list_of, ok, operation, path_param, query, r};

/// The largest journal number (the store keeps them as signed 64-bit integers).
const SEQ_MAX: i64 = i64::MAX;

/// Every conversation route: no model configured (503), a store failure (500).
const TALK: [&str; 4] = ["401", "403", "500", "503"];

fn with(errs: &[&'static str]) -> Vec<&'static str> {
    TALK.iter().chain(errs).copied().collect()
}

fn accepted(mut op: Value) -> Value {
    if let Some(responses) = op["responses"].as_object_mut()
        && let Some(answer) = responses.remove("200")
    {
        responses.insert("202".into(), answer);
    }
    op
}

pub fn list_conversations() -> Value {
    let mut op = operation(
        "listConversations",
        "conversations",
        "The caller's conversations with the agent, newest first (an operator: everyone's with `all=true`).",
        ok("Conversations.", list_of("Conversation")),
        &with(&["400"]),
    );
    op["parameters"] = json!([
        query(
            "limit",
            "At most this many (default 50, at most 500).",
            json!({"type": "integer", "minimum": 0, "maximum": 500})
        ),
        query("all", "Operators: everyone's.", json!({"type": "boolean"})),
    ]);
    op
}

pub fn create_conversation() -> Value {
    let mut op = created(operation(
        "createConversation",
        "conversations",
        "Start a conversation with the agent as the caller (its principal and role); with `text`, post a first message at once.",
        ok(
            "The conversation (and `posted` when `text` was given).",
            r("Conversation"),
        ),
        &with(&["400", "413", "415", "429"]),
    ));
    op["requestBody"] = body("NewConversation");
    op
}

pub fn get_conversation() -> Value {
    let mut op = operation(
        "getConversation",
        "conversations",
        "One conversation and its journal: every message, model turn, tool result, approval card and answer, numbered by `seq`.",
        ok(
            "The conversation with `events`.",
            r("ConversationWithEvents"),
        ),
        &with(&["400", "404"]),
    );
    op["parameters"] = json!([
        path_param("id", "Conversation id, `conv_…`."),
        query(
            "after",
            "Only events after this `seq`.",
            json!({"type": "integer", "minimum": 0, "maximum": SEQ_MAX})
        ),
        query(
            "limit",
            "At most this many events (default and most 1000).",
            json!({"type": "integer", "minimum": 0, "maximum": 1000})
        ),
    ]);
    op
}

pub fn post_message() -> Value {
    let mut op = accepted(operation(
        "postMessage",
        "conversations",
        "Say something in the conversation (its own user only). A message is journaled and its turn runs by itself (one at a time; later ones queue); `/new`, `/stop`, `/tools` and `/help` are answered at once.",
        ok(
            "Queued (its `seq`, and how many turns are ahead), or a command's reply.",
            r("Posted"),
        ),
        &with(&["400", "404", "409", "413", "415", "429"]),
    ));
    op["parameters"] = json!([path_param("id", "Conversation id, `conv_…`.")]);
    op["requestBody"] = body("NewMessage");
    op
}

pub fn stream_conversation() -> Value {
    let mut op = operation(
        "streamConversation",
        "conversations",
        "Server-sent events: `entry` (a journal entry; its `seq` is the event id, so `Last-Event-ID` resumes after it) for the backlog, then `synced` (`{\"last_seq\": N}`), then as they happen `entry`, `delta` (the answer's text as it is written), `tool` (a call started or ended). Keep-alive comments; ends on shutdown.",
        json!({}),
        &with(&["400", "404"]),
    );
    op["parameters"] = json!([
        path_param("id", "Conversation id, `conv_…`."),
        query(
            "after",
            "Start after this `seq` (`Last-Event-ID` wins).",
            json!({"type": "integer", "minimum": 0, "maximum": SEQ_MAX})
        ),
    ]);
    op["responses"]["200"] = json!({"description": "An event stream.",
    "content": {"text/event-stream": {"schema": {"type": "object", "required": ["event", "data"],
        "properties": {
            "event": {"type": "string", "enum": ["entry", "synced", "delta", "tool"]},
            "id": {"type": "string"},
            "data": {"type": "string", "contentMediaType": "application/json"}
        }}}}});
    op
}

pub fn get_conversation_approval() -> Value {
    let mut op = operation(
        "getConversationApproval",
        "conversations",
        "An approval request a turn of this conversation waits for (its card): the complete, redacted arguments.",
        ok("The request.", r("Approval")),
        &with(&["400", "404"]),
    );
    op["parameters"] = json!([
        path_param("id", "Conversation id, `conv_…`."),
        path_param("approval_id", "Approval id, `apr_…`."),
    ]);
    op
}

pub fn decide_conversation_approval() -> Value {
    let mut op = operation(
        "decideConversationApproval",
        "conversations",
        "Decide an approval request of this conversation: its own user (unless `[conversations] approvals = \"operators\"`) or an operator. A dangerous tool needs its name in `confirm`. Whoever decides first — here, the console, a chat channel — wins.",
        ok("The decided request.", r("Approval")),
        &with(&["400", "404", "409", "410", "415"]),
    );
    op["parameters"] = json!([
        path_param("id", "Conversation id, `conv_…`."),
        path_param("approval_id", "Approval id, `apr_…`."),
    ]);
    op["requestBody"] = body("Decision");
    op
}

pub fn chat_completions() -> Value {
    let mut op = operation(
        "chatCompletions",
        "openai",
        "OpenAI Chat Completions where the server runs the tools: the agent answers the last user message with the earlier ones as its history, as the caller (bearer token). `stream: true` sends `chat.completion.chunk`s, with a line per tool call and per approval waited for, then `[DONE]`.",
        ok(
            "A `chat.completion` (or, streaming, `text/event-stream` of chunks).",
            r("ChatCompletion"),
        ),
        &with(&["400", "413", "415", "429"]),
    );
    op["requestBody"] = body("ChatCompletionRequest");
    op
}

pub fn list_models() -> Value {
    operation(
        "listModels",
        "openai",
        "The model the agent runs on, as OpenAI's `GET /v1/models` lists models.",
        ok("A list of one model.", r("ModelList")),
        &TALK,
    )
}

/// The bodies of these routes.
pub(super) fn schemas() -> Value {
    json!({
        "Conversation": {
            "type": "object",
            "required": ["id", "entry", "title", "principal", "role", "created_at", "updated_at", "closed", "last_seq", "busy"],
            "properties": {
                "id": {"type": "string"},
                "entry": {"type": "string", "description": "`web`, `openai`, `telegram:<channel>`, …"},
                "title": {"type": "string"},
                "principal": {"type": "string"},
                "role": {"type": "string"},
                "created_at": {"type": "string"},
                "updated_at": {"type": "string"},
                "closed": {"type": "boolean", "description": "Ended by /new."},
                "last_seq": {"type": "integer"},
                "busy": {"type": "boolean", "description": "A message waits for (or is in) its turn."},
                "posted": r("Posted")
            }
        },
        "ConversationWithEvents": {
            "allOf": [r("Conversation"), {"type": "object", "required": ["events"],
                "properties": {"events": {"type": "array", "items": r("ConversationEvent")}}}]
        },
        "ConversationEvent": {
            "type": "object",
            "description": "One journal entry: `prelude`, `user`, `assistant` (a model turn: `turn.text`, `turn.tool_calls`), `results`, `approval` (a card: `approval_id`, `tool`, `requires_confirmation`), `answer`, `failed`, `stop`, `notice`.",
            "required": ["kind", "seq", "at"],
            "properties": {
                "kind": {"type": "string", "enum": ["prelude", "user", "assistant", "results", "approval", "answer", "failed", "stop", "notice"]},
                "seq": {"type": "integer"},
                "at": {"type": "string"},
                "reply_to": {"type": "integer"},
                "text": {"type": "string"}
            }
        },
        "NewConversation": {
            "type": "object",
            "additionalProperties": false,
            "properties": {"text": {"type": ["string", "null"], "description": "A first message (null: none)."}}
        },
        "NewMessage": {
            "type": "object",
            "required": ["text"],
            "additionalProperties": false,
            "properties": {"text": {"type": "string", "minLength": 1,
                "description": "Not only whitespace; at most [conversations] max_message_bytes."}}
        },
        "Posted": {
            "type": "object",
            "required": ["queued"],
            "properties": {
                "queued": {"type": "boolean"},
                "seq": {"type": ["integer", "null"]},
                "ahead": {"type": "integer"},
                "reply": {"type": "string"},
                "opened": {"type": ["string", "null"], "description": "/new: the conversation that continues."}
            }
        },
        "ChatCompletionRequest": {
            "type": "object",
            "required": ["messages"],
            "properties": {
                "model": {"type": "string"},
                "messages": {"type": "array", "minItems": 1,
                    "description": "The last message is the user's (the agent answers it); earlier `tool` messages are ignored.",
                    "items": {"type": "object", "required": ["role"],
                    "properties": {"role": {"type": "string", "enum": ["system", "developer", "user", "assistant", "tool", "function"]},
                        "content": {"description": "A string, or a list of text parts."}}}},
                "stream": {"type": "boolean"}
            }
        },
        "ChatCompletion": {
            "type": "object",
            "required": ["id", "object", "created", "model", "choices"],
            "properties": {
                "id": {"type": "string"},
                "object": {"type": "string"},
                "created": {"type": "integer"},
                "model": {"type": "string"},
                "choices": {"type": "array"},
                "usage": {"type": "object"}
            }
        },
        "ModelList": {
            "type": "object",
            "required": ["object", "data"],
            "properties": {"object": {"type": "string"}, "data": {"type": "array"}}
        }
    })
}
