//! The tools the official MCP conformance suite calls (`test_simple_text`, …), as ordinary
//! catalog tools: they run through the whole gateway pipeline like any built-in. The ones
//! that talk back to the client (logging, progress, sampling, elicitation, roots) do it
//! through their context, as a federated server's tool does: `ctx.caller` (a session's
//! peer, or the rounds of a stateless client, where each question keeps the name the
//! suite expects) and `ctx.progress`.

// Logging is deprecated by the 2026-07-28 revision but the suite (2025-11-25) exercises it.
#![allow(deprecated)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use tokio::sync::watch;
use toolgate_core::{
    CallerQuestion, CallerRequest, DynTool, ProgressUpdate, Tool, ToolContext, ToolError,
};
use toolgate_protocol::{ContentBlock, Risk, ToolOutput, ToolSpec};
use toolgate_registry::Catalog;

/// A 1×1 red PNG.
pub const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// A 44-byte silent WAV header.
const WAV: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=";

struct Fixture {
    spec: ToolSpec,
    lists: Arc<Lists>,
}

/// The lists the SEP-2575 triggers change: tools in the catalog, prompts in the extras.
pub struct Lists {
    pub catalog: Arc<Catalog>,
    /// How many `test_dynamic_prompt_{n}` the prompt list holds; its receivers hear a change.
    pub prompts: watch::Sender<u32>,
    tools: AtomicU32,
}

impl Lists {
    pub fn new(catalog: Arc<Catalog>) -> Arc<Self> {
        Arc::new(Lists {
            catalog,
            prompts: watch::Sender::new(0),
            tools: AtomicU32::new(0),
        })
    }

    /// Adds `test_dynamic_tool_{n}` to the catalog.
    fn add_tool(self: &Arc<Self>) -> Result<String, ToolError> {
        let n = self.tools.fetch_add(1, Ordering::Relaxed) + 1;
        let name = format!("test_dynamic_tool_{n}");
        let tool = Arc::new(Fixture {
            spec: ToolSpec::new(&name, "Added by test_trigger_tool_change.", no_args())
                .with_risk(Risk::Read),
            lists: Arc::clone(self),
        });
        self.catalog
            .register(tool)
            .map_err(|e| ToolError::failed(e.to_string()))?;
        Ok(name)
    }
}

fn no_args() -> Value {
    json!({"type": "object", "properties": {}})
}

/// Every fixture tool.
pub fn tools(lists: &Arc<Lists>) -> Vec<DynTool> {
    let specs = [
        ("test_simple_text", "Returns simple text.", no_args()),
        ("test_image_content", "Returns an image.", no_args()),
        ("test_audio_content", "Returns audio.", no_args()),
        (
            "test_embedded_resource",
            "Returns an embedded resource.",
            no_args(),
        ),
        (
            "test_multiple_content_types",
            "Returns text, an image and a resource.",
            no_args(),
        ),
        (
            "test_tool_with_logging",
            "Sends three log messages.",
            no_args(),
        ),
        (
            "test_tool_with_progress",
            "Reports progress 0, 50, 100.",
            no_args(),
        ),
        ("test_error_handling", "Always fails.", no_args()),
        (
            "test_sampling",
            "Asks the client's LLM.",
            json!({"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]}),
        ),
        (
            "test_elicitation",
            "Asks the user for input.",
            json!({"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}),
        ),
        (
            "test_elicitation_sep1034_defaults",
            "Elicitation with defaults.",
            no_args(),
        ),
        (
            "test_elicitation_sep1330_enums",
            "Elicitation with enum schemas.",
            no_args(),
        ),
        (
            "test_reconnection",
            "Returns after a short pause.",
            no_args(),
        ),
        // SEP-2322 (2026-07-28): these ask the client mid-call, as a 2025-11-25 server does;
        // a gateway in front turns the questions into InputRequiredResult rounds for its
        // stateless clients.
        (
            "test_input_required_result_elicitation",
            "Asks for the user's name.",
            no_args(),
        ),
        (
            "test_input_required_result_sampling",
            "Asks the client's LLM.",
            no_args(),
        ),
        (
            "test_input_required_result_list_roots",
            "Asks for the client's roots.",
            no_args(),
        ),
        (
            "test_input_required_result_request_state",
            "Asks for a confirmation.",
            no_args(),
        ),
        (
            "test_input_required_result_tampered_state",
            "Asks for a confirmation.",
            no_args(),
        ),
        (
            "test_input_required_result_multiple_inputs",
            "Asks for a form, a completion and the roots at once.",
            no_args(),
        ),
        (
            "test_input_required_result_multi_round",
            "Asks for a name, then for a colour.",
            no_args(),
        ),
        (
            "test_input_required_result_capabilities",
            "Asks only what the client can answer.",
            no_args(),
        ),
        (
            "test_trigger_tool_change",
            "Adds a tool to the tool list.",
            no_args(),
        ),
        (
            "test_trigger_prompt_change",
            "Adds a prompt to the prompt list.",
            no_args(),
        ),
        (
            "test_missing_capability",
            "Needs sampling, whether or not the client declared it.",
            no_args(),
        ),
        (
            "json_schema_2020_12_tool",
            "Tool with JSON Schema 2020-12 features",
            json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "$defs": {"address": {"type": "object", "properties": {
                    "street": {"type": "string"}, "city": {"type": "string"}}}},
                "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
                "additionalProperties": false
            }),
        ),
    ];
    specs
        .into_iter()
        .map(|(name, description, schema)| {
            Arc::new(Fixture {
                spec: ToolSpec::new(name, description, schema).with_risk(Risk::Read),
                lists: Arc::clone(lists),
            }) as DynTool
        })
        .collect()
}

fn name_form() -> Value {
    json!({"mode": "form", "message": "What is your name?", "requestedSchema": {
        "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}})
}

fn confirm_form() -> Value {
    json!({"mode": "form", "message": "Please confirm", "requestedSchema": {
        "type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}})
}

fn capital_question() -> Value {
    json!({"messages": [{"role": "user", "content": {"type": "text", "text": "What is the capital of France?"}}],
        "maxTokens": 100})
}

fn text(s: &str) -> ToolOutput {
    ToolOutput::text(s)
}

fn blocks(content: Vec<ContentBlock>) -> ToolOutput {
    ToolOutput {
        data: Value::Null,
        content,
        mcp_result: None,
    }
}

impl Fixture {
    /// Asks the calling client `request` under the name `key` (what a stateless client
    /// sees in the `InputRequiredResult`) and returns its result.
    async fn ask_named(
        &self,
        ctx: &ToolContext,
        request: CallerRequest,
        key: &str,
        params: Value,
    ) -> Result<Value, ToolError> {
        self.send(ctx, CallerQuestion::new(request, params).named(key))
            .await
    }

    /// Asks the calling client `request`, unnamed, as the 2025-11-25 tools do.
    async fn ask(
        &self,
        ctx: &ToolContext,
        request: CallerRequest,
        params: Value,
    ) -> Result<Value, ToolError> {
        self.send(ctx, CallerQuestion::new(request, params)).await
    }

    async fn send(&self, ctx: &ToolContext, question: CallerQuestion) -> Result<Value, ToolError> {
        let method = question.request.method();
        let channel = ctx.caller.answering(question.request).ok_or_else(|| {
            ToolError::failed(format!(
                "the client did not declare that it answers {method}"
            ))
        })?;
        channel
            .ask(question)
            .await
            .map_err(|e| ToolError::failed(format!("{method} failed: {e}")))
    }

    async fn elicit(
        &self,
        ctx: &ToolContext,
        message: &str,
        schema: Value,
    ) -> Result<ToolOutput, ToolError> {
        let answer = self
            .ask(
                ctx,
                CallerRequest::Elicitation,
                json!({"mode": "form", "message": message, "requestedSchema": schema}),
            )
            .await?;
        Ok(text(&format!(
            "Elicitation completed: action={}, content={}",
            answer["action"].as_str().unwrap_or("?"),
            answer["content"]
        )))
    }
}

#[async_trait]
impl Tool for Fixture {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    #[allow(deprecated)]
    async fn call(&self, args: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let pause = || tokio::time::sleep(Duration::from_millis(50));
        match self.spec.name.as_str() {
            "test_simple_text" => Ok(text("This is a simple text response for testing.")),
            "test_image_content" => Ok(blocks(vec![ContentBlock::Image {
                data: PNG.into(),
                mime_type: "image/png".into(),
            }])),
            "test_audio_content" => Ok(blocks(vec![ContentBlock::Audio {
                data: WAV.into(),
                mime_type: "audio/wav".into(),
            }])),
            "test_embedded_resource" => Ok(blocks(vec![ContentBlock::Resource {
                resource: json!({"uri": "test://embedded-resource", "mimeType": "text/plain",
                    "text": "This is an embedded resource content."}),
            }])),
            "test_multiple_content_types" => Ok(blocks(vec![
                ContentBlock::Text {
                    text: "Multiple content types test:".into(),
                },
                ContentBlock::Image {
                    data: PNG.into(),
                    mime_type: "image/png".into(),
                },
                ContentBlock::Resource {
                    resource: json!({"uri": "test://mixed-content-resource",
                        "mimeType": "application/json", "text": "{\"test\":\"data\",\"value\":123}"}),
                },
            ])),
            "test_tool_with_logging" => {
                for (i, message) in [
                    "Tool execution started",
                    "Tool processing data",
                    "Tool execution completed",
                ]
                .into_iter()
                .enumerate()
                {
                    if i > 0 {
                        pause().await;
                    }
                    ctx.caller.log(json!({"level": "info", "data": message})).await;
                }
                Ok(text("Logging test completed"))
            }
            "test_tool_with_progress" => {
                for (i, progress) in [0.0, 50.0, 100.0].into_iter().enumerate() {
                    if i > 0 {
                        pause().await;
                    }
                    ctx.progress.report(ProgressUpdate {
                        progress,
                        total: Some(100.0),
                        message: None,
                    });
                }
                Ok(text("Progress test completed"))
            }
            "test_error_handling" => Err(ToolError::failed(
                "This tool intentionally returns an error for testing",
            )),
            "test_sampling" => {
                let prompt = args["prompt"].as_str().unwrap_or_default();
                let answer = self
                    .ask(&ctx, CallerRequest::Sampling, json!({
                        "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
                        "maxTokens": 100
                    }))
                    .await?;
                Ok(text(&format!(
                    "LLM response: {}",
                    answer["content"]["text"].as_str().unwrap_or_default()
                )))
            }
            "test_elicitation" => {
                let message = args["message"].as_str().unwrap_or("Please provide your information");
                self.elicit(&ctx, message, json!({"type": "object", "properties": {
                    "username": {"type": "string", "description": "User's response"},
                    "email": {"type": "string", "description": "User's email address"}
                }, "required": ["username", "email"]}))
                    .await
            }
            "test_elicitation_sep1034_defaults" => {
                self.elicit(&ctx, "Please review and update the form fields with defaults", json!({
                    "type": "object", "properties": {
                        "name": {"type": "string", "description": "User name", "default": "John Doe"},
                        "age": {"type": "integer", "description": "User age", "default": 30},
                        "score": {"type": "number", "description": "User score", "default": 95.5},
                        "status": {"type": "string", "description": "User status",
                            "enum": ["active", "inactive", "pending"], "default": "active"},
                        "verified": {"type": "boolean", "description": "Verification status", "default": true}
                    }, "required": []}))
                    .await
            }
            "test_elicitation_sep1330_enums" => {
                let titled = |titles: [&str; 3]| -> Vec<Value> {
                    titles
                        .iter()
                        .enumerate()
                        .map(|(i, t)| json!({"const": format!("value{}", i + 1), "title": t}))
                        .collect()
                };
                self.elicit(&ctx, "Please select options from the enum fields", json!({
                    "type": "object", "properties": {
                        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                        "titledSingle": {"type": "string",
                            "oneOf": titled(["First Option", "Second Option", "Third Option"])},
                        "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                            "enumNames": ["Option One", "Option Two", "Option Three"]},
                        "untitledMulti": {"type": "array",
                            "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
                        "titledMulti": {"type": "array",
                            "items": {"anyOf": titled(["First Choice", "Second Choice", "Third Choice"])}}
                    }, "required": []}))
                    .await
            }
            "test_input_required_result_elicitation" => {
                let answer = self
                    .ask_named(&ctx, CallerRequest::Elicitation, "user_name", name_form())
                    .await?;
                Ok(text(&format!("Hello, {}!", answer["content"]["name"].as_str().unwrap_or("?"))))
            }
            "test_input_required_result_sampling" => {
                let answer = self
                    .ask_named(&ctx, CallerRequest::Sampling, "capital_question", capital_question())
                    .await?;
                Ok(text(&format!("LLM said: {}", answer["content"]["text"].as_str().unwrap_or_default())))
            }
            "test_input_required_result_list_roots" => {
                let answer = self
                    .ask_named(&ctx, CallerRequest::Roots, "client_roots", json!({}))
                    .await?;
                Ok(text(&format!("Roots: {}", answer["roots"])))
            }
            "test_input_required_result_request_state" | "test_input_required_result_tampered_state" => {
                let answer = self
                    .ask_named(&ctx, CallerRequest::Elicitation, "confirm", confirm_form())
                    .await?;
                Ok(text(&format!("Confirmed: {}", answer["content"]["ok"])))
            }
            "test_input_required_result_multiple_inputs" => {
                let (form, completion, roots) = tokio::join!(
                    self.ask_named(&ctx, CallerRequest::Elicitation, "user_name", name_form()),
                    self.ask_named(&ctx, CallerRequest::Sampling, "greeting", capital_question()),
                    self.ask_named(&ctx, CallerRequest::Roots, "client_roots", json!({})),
                );
                let (form, completion, roots) = (form?, completion?, roots?);
                Ok(text(&format!(
                    "name={}, llm={}, roots={}",
                    form["content"]["name"], completion["content"]["text"], roots["roots"]
                )))
            }
            "test_input_required_result_multi_round" => {
                let name = self
                    .ask_named(&ctx, CallerRequest::Elicitation, "step1", name_form())
                    .await?;
                let colour = self.ask_named(&ctx, CallerRequest::Elicitation, "step2", json!({
                    "mode": "form", "message": "What is your favourite colour?",
                    "requestedSchema": {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]}
                })).await?;
                Ok(text(&format!("{} likes {}", name["content"]["name"], colour["content"]["color"])))
            }
            "test_input_required_result_capabilities" => {
                // Both are asked; what the client cannot answer fails and is left out.
                let (completion, form) = tokio::join!(
                    self.ask_named(&ctx, CallerRequest::Sampling, "capital_question", capital_question()),
                    self.ask_named(&ctx, CallerRequest::Elicitation, "user_name", name_form()),
                );
                Ok(text(&format!("sampling answered: {}, elicitation answered: {}", completion.is_ok(), form.is_ok())))
            }
            "test_reconnection" => {
                pause().await;
                Ok(text("Reconnection test completed successfully"))
            }
            "json_schema_2020_12_tool" => Ok(ToolOutput::json(json!({"received": args}))),
            "test_trigger_tool_change" => Ok(text(&format!("added {}", self.lists.add_tool()?))),
            "test_trigger_prompt_change" => {
                self.lists.prompts.send_modify(|n| *n += 1);
                Ok(text("added a prompt"))
            }
            dynamic if dynamic.starts_with("test_dynamic_tool_") => Ok(text(dynamic)),
            "test_missing_capability" => {
                // Asks whatever the client declared: one that declared no sampling gets
                // the -32021 the channel answers, passed on as the client's error.
                let Some(channel) = ctx.caller.channel() else {
                    return Err(ToolError::failed("no client to ask"));
                };
                let question = CallerQuestion::new(CallerRequest::Sampling, capital_question());
                match channel.ask(question).await {
                    Ok(answer) => Ok(text(&format!("LLM said: {}", answer["content"]["text"]))),
                    Err(e) => Err(ToolError::Failed {
                        message: e.message.clone(),
                        retryable: false,
                        details: Some(json!({"jsonrpc_code": e.code, "data": e.data})),
                    }),
                }
            }
            other => Err(ToolError::failed(format!("no fixture named {other}"))),
        }
    }
}
