//! [`ScriptedModel`]: a language model in process that answers from a script — text, tool
//! calls, or never — and counts what it was asked, for tests of what drives the agent loop
//! (the conversations) without HTTP. The wire formats are the fake model *server*'s
//! (`toolgate_agent::fake`).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use toolgate_agent::{
    AssistantTurn, EventSink, ModelClient, ModelError, ModelRequest, ModelResponse, StopReason,
    StreamEvent, ToolCall, Usage,
};
use toolgate_protocol::ExportFormat;

/// One answer of the script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Say {
    Text(String),
    /// One tool call: id, tool, arguments text.
    Call(String, String, String),
    /// Never answers (a model that is slow when the process dies).
    Hang,
}

impl Say {
    pub fn text(t: &str) -> Say {
        Say::Text(t.to_owned())
    }

    pub fn call(id: &str, tool: &str, arguments: &str) -> Say {
        Say::Call(id.to_owned(), tool.to_owned(), arguments.to_owned())
    }
}

/// Answers from a script, in order; when it runs out, every request fails saying so. Text is
/// streamed as one delta.
pub struct ScriptedModel {
    script: Mutex<VecDeque<Say>>,
    /// Replay the script forever (benchmarks).
    cycle: bool,
    asked: AtomicUsize,
    /// How many messages each request held, in order.
    histories: Mutex<Vec<usize>>,
}

impl ScriptedModel {
    pub fn new(script: &[Say]) -> Arc<ScriptedModel> {
        Self::with(script, false)
    }

    /// Answers `script` over and over (benchmarks).
    pub fn cycling(script: &[Say]) -> Arc<ScriptedModel> {
        Self::with(script, true)
    }

    fn with(script: &[Say], cycle: bool) -> Arc<ScriptedModel> {
        Arc::new(ScriptedModel {
            script: Mutex::new(script.iter().cloned().collect()),
            cycle,
            asked: AtomicUsize::new(0),
            histories: Mutex::new(Vec::new()),
        })
    }

    /// Requests received so far.
    pub fn asked(&self) -> usize {
        self.asked.load(Ordering::SeqCst)
    }

    /// How many messages each request held.
    pub fn histories(&self) -> Vec<usize> {
        self.histories
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

#[async_trait]
impl ModelClient for ScriptedModel {
    fn provider(&self) -> &'static str {
        "scripted"
    }

    fn model(&self) -> &str {
        "scripted-1"
    }

    fn tool_format(&self) -> ExportFormat {
        ExportFormat::OpenAiChat
    }

    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        self.histories
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(request.messages.len());
        let next = {
            let mut script = self.script.lock().unwrap_or_else(PoisonError::into_inner);
            let next = script.pop_front();
            if self.cycle
                && let Some(n) = &next
            {
                script.push_back(n.clone());
            }
            next
        };
        let (turn, stop) = match next {
            Some(Say::Text(text)) => (
                AssistantTurn {
                    text,
                    ..AssistantTurn::default()
                },
                StopReason::EndTurn,
            ),
            Some(Say::Call(id, name, arguments)) => (
                AssistantTurn {
                    tool_calls: vec![ToolCall {
                        id,
                        name,
                        arguments,
                    }],
                    ..AssistantTurn::default()
                },
                StopReason::ToolUse,
            ),
            Some(Say::Hang) => std::future::pending().await,
            None => return Err(ModelError::Protocol("the script ran out".into())),
        };
        Ok(ModelResponse {
            turn,
            stop,
            usage: Usage::default(),
        })
    }

    async fn stream(
        &self,
        request: &ModelRequest,
        sink: EventSink<'_>,
    ) -> Result<ModelResponse, ModelError> {
        let response = self.complete(request).await?;
        if !response.turn.text.is_empty() {
            sink(StreamEvent::TextDelta(response.turn.text.clone()));
        }
        Ok(response)
    }
}
