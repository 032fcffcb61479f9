//! The resources, prompts, completions and logging level the conformance suite expects,
//! through the MCP handler's `McpExtras` extension point. Results are written in wire shape
//! and parsed into rmcp's types, so they read like the suite's own descriptions.

#![allow(deprecated)]

use async_trait::async_trait;
use rmcp::ErrorData;
use rmcp::model::{
    CompleteRequestParams, CompleteResult, GetPromptRequestParams, GetPromptResult,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, LoggingLevel,
    ReadResourceRequestParams, ReadResourceResult, ServerCapabilities,
};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use toolgate_core::{CallerQuestion, CallerRequest};
use toolgate_server::mcp::{McpExtras, Requester};

use std::sync::Arc;

use rmcp::model::{Prompt, SubscriptionFilter};
use rmcp::service::SubscriptionSink;
use tokio_util::sync::CancellationToken;

use crate::fixtures::{Lists, PNG};

pub struct ConformanceExtras {
    pub lists: Arc<Lists>,
}

fn wire<T: DeserializeOwned>(value: Value) -> Result<T, ErrorData> {
    serde_json::from_value(value).map_err(|e| ErrorData::internal_error(e.to_string(), None))
}

#[async_trait]
impl McpExtras for ConformanceExtras {
    fn capabilities(&self) -> ServerCapabilities {
        serde_json::from_value(json!({
            "resources": {"subscribe": true, "listChanged": false},
            "prompts": {"listChanged": true},
            "completions": {},
            "logging": {}
        }))
        .unwrap_or_default()
    }

    async fn list_resources(&self, _who: &Requester) -> Result<ListResourcesResult, ErrorData> {
        wire(json!({"resources": [
            {"uri": "test://static-text", "name": "static-text", "description": "A static text resource", "mimeType": "text/plain"},
            {"uri": "test://static-binary", "name": "static-binary", "description": "A static binary resource", "mimeType": "image/png"},
            {"uri": "test://watched-resource", "name": "watched-resource", "description": "A resource to subscribe to", "mimeType": "text/plain"}
        ]}))
    }

    async fn list_resource_templates(
        &self,
        _who: &Requester,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        wire(json!({"resourceTemplates": [
            {"uriTemplate": "test://template/{id}/data", "name": "template", "description": "Data by id", "mimeType": "application/json"}
        ]}))
    }

    async fn read_resource(
        &self,
        _who: &Requester,
        request: ReadResourceRequestParams,
    ) -> Result<ReadResourceResult, ErrorData> {
        let uri = request.uri.as_str();
        let contents = match uri {
            "test://static-text" => {
                json!({"uri": uri, "mimeType": "text/plain", "text": "This is the content of the static text resource."})
            }
            "test://static-binary" => json!({"uri": uri, "mimeType": "image/png", "blob": PNG}),
            "test://watched-resource" => {
                json!({"uri": uri, "mimeType": "text/plain", "text": "Watched resource content."})
            }
            _ => match uri
                .strip_prefix("test://template/")
                .and_then(|rest| rest.strip_suffix("/data"))
            {
                Some(id) => json!({"uri": uri, "mimeType": "application/json",
                    "text": json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")}).to_string()}),
                None => {
                    return Err(ErrorData::resource_not_found(
                        format!("no resource {uri}"),
                        Some(json!({"uri": uri})),
                    ));
                }
            },
        };
        wire(json!({"contents": [contents]}))
    }

    async fn subscribe(&self, _who: &Requester, _uri: String) -> Result<(), ErrorData> {
        Ok(())
    }

    async fn unsubscribe(&self, _who: &Requester, _uri: String) -> Result<(), ErrorData> {
        Ok(())
    }

    async fn list_prompts(&self, _who: &Requester) -> Result<ListPromptsResult, ErrorData> {
        wire(json!({"prompts": [
            {"name": "test_simple_prompt", "description": "A simple prompt"},
            {"name": "test_prompt_with_arguments", "description": "A prompt with arguments", "arguments": [
                {"name": "arg1", "description": "First argument", "required": true},
                {"name": "arg2", "description": "Second argument", "required": true}]},
            {"name": "test_prompt_with_embedded_resource", "description": "A prompt with a resource", "arguments": [
                {"name": "resourceUri", "description": "URI of the resource", "required": true}]},
            {"name": "test_prompt_with_image", "description": "A prompt with an image"},
            {"name": "test_input_required_result_prompt", "description": "A prompt that asks the user for its context"}
        ]}))
        .map(|mut list: ListPromptsResult| {
            let added = *self.lists.prompts.borrow();
            for n in 1..=added {
                let name = format!("test_dynamic_prompt_{n}");
                list.prompts.push(Prompt::new(name, Some("Added by test_trigger_prompt_change."), None));
            }
            list
        })
    }

    async fn get_prompt(
        &self,
        who: &Requester,
        request: GetPromptRequestParams,
    ) -> Result<GetPromptResult, ErrorData> {
        if request.name == "test_input_required_result_prompt" {
            return context_prompt(who).await;
        }
        if request.name.starts_with("test_dynamic_prompt_") {
            return wire(
                json!({"messages": [{"role": "user", "content": {"type": "text",
                "text": request.name}}]}),
            );
        }
        let arg = |name: &str| {
            request
                .arguments
                .as_ref()
                .and_then(|a| a.get(name))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let messages = match request.name.as_str() {
            "test_simple_prompt" => json!([{"role": "user", "content": {"type": "text",
                "text": "This is a simple prompt for testing."}}]),
            "test_prompt_with_arguments" => json!([{"role": "user", "content": {"type": "text",
                "text": format!("Prompt with arguments: arg1='{}', arg2='{}'", arg("arg1"), arg("arg2"))}}]),
            "test_prompt_with_embedded_resource" => json!([
                {"role": "user", "content": {"type": "resource", "resource": {"uri": arg("resourceUri"),
                    "mimeType": "text/plain", "text": "Embedded resource content for testing."}}},
                {"role": "user", "content": {"type": "text", "text": "Please process the embedded resource above."}}
            ]),
            "test_prompt_with_image" => json!([
                {"role": "user", "content": {"type": "image", "data": PNG, "mimeType": "image/png"}},
                {"role": "user", "content": {"type": "text", "text": "Please analyze the image above."}}
            ]),
            other => {
                return Err(ErrorData::invalid_params(
                    format!("no prompt named {other}"),
                    None,
                ));
            }
        };
        wire(json!({"messages": messages}))
    }

    async fn complete(
        &self,
        _who: &Requester,
        _request: CompleteRequestParams,
    ) -> Result<CompleteResult, ErrorData> {
        wire(
            json!({"completion": {"values": ["paris", "park", "party"], "total": 3, "hasMore": false}}),
        )
    }

    async fn set_level(&self, _who: &Requester, _level: LoggingLevel) -> Result<(), ErrorData> {
        Ok(())
    }

    fn accepted_notices(&self, requested: &SubscriptionFilter) -> SubscriptionFilter {
        let mut accepted = SubscriptionFilter::new();
        accepted.prompts_list_changed = requested.prompts_list_changed.filter(|w| *w);
        accepted
    }

    async fn listen(
        &self,
        _who: &Requester,
        accepted: &SubscriptionFilter,
        sink: &SubscriptionSink,
        stop: &CancellationToken,
    ) {
        if accepted.prompts_list_changed != Some(true) {
            return stop.cancelled().await;
        }
        let mut changes = self.lists.prompts.subscribe();
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                changed = changes.changed() => {
                    if changed.is_err() || sink.notify_prompt_list_changed().await.is_err() {
                        return;
                    }
                }
            }
        }
    }
}

/// SEP-2322's prompt that needs the client's input: the context is asked of the client
/// (`user_context`), through rounds for a stateless client.
async fn context_prompt(who: &Requester) -> Result<GetPromptResult, ErrorData> {
    let request = CallerRequest::Elicitation;
    let channel = who.client.answering(request).ok_or_else(|| {
        ErrorData::invalid_request("the client does not answer elicitation/create", None)
    })?;
    let form = json!({"mode": "form", "message": "What context should the prompt use?",
        "requestedSchema": {"type": "object", "properties": {"context": {"type": "string"}},
            "required": ["context"]}});
    let answer = channel
        .ask(CallerQuestion::new(request, form).named("user_context"))
        .await
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    let context = answer["content"]["context"].as_str().unwrap_or_default();
    wire(
        json!({"messages": [{"role": "user", "content": {"type": "text",
        "text": format!("Use this context: {context}")}}]}),
    )
}
