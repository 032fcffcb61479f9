//! A call's [`Envelope`] as an MCP `CallToolResult` — the one place this mapping is decided.
//!
//! - a federated MCP tool's result that governance left whole: exactly as its server sent
//!   it (annotations, `_meta`, resource links, `structuredContent` included).
//! - ok: the data as a text block (a string as-is, anything else as compact JSON), then the
//!   tool's own image / audio / resource blocks; `structuredContent` when the data is an
//!   object; a closing text block when result governance cut the output, naming the
//!   `result_id` to page through with `read_result`.
//! - a federated MCP tool's own `isError` result (kept whole in the error's details by the
//!   MCP client): as its server sent it, content untouched, with toolgate's error object
//!   (`code`, `message`, `retryable`) added under `_meta["io.toolgate/error"]`.
//! - any other error: `isError: true` and one text block holding the error object
//!   (`{code, message, retryable, hint?, details?}`, the approval id in `details`), so a model
//!   reads what went wrong and what to do next. Never a JSON-RPC error: those are for requests
//!   that cannot be routed at all.

use rmcp::model::{CallToolResult, ContentBlock as McpBlock, ResourceContents};
use serde_json::Value;
use toolgate_protocol::{CallError, ContentBlock, Envelope, ErrorCode, Governance};

/// The MCP result for a call's envelope.
pub fn call_result(envelope: Envelope) -> CallToolResult {
    match envelope.error {
        Some(error) if !envelope.ok => {
            upstream_error(&error).unwrap_or_else(|| error_result(&error))
        }
        _ => match envelope
            .mcp_result
            .map(serde_json::from_value::<CallToolResult>)
        {
            // A federated tool's result, as its server sent it (a 2025-11-25 server sends no
            // `resultType`; the answer is complete either way).
            Some(Ok(mut upstream)) => {
                upstream
                    .result_type
                    .get_or_insert(rmcp::model::ResultType::COMPLETE);
                upstream
            }
            _ => success_result(envelope.data, envelope.content, envelope.truncated),
        },
    }
}

/// The `_meta` key under which an upstream's own error result carries toolgate's verdict.
pub const ERROR_META: &str = "io.toolgate/error";

/// A federated tool's `isError` result, as its server sent it, with toolgate's error object
/// in `_meta`; `None` for every other error.
fn upstream_error(error: &CallError) -> Option<CallToolResult> {
    let details = error.details.as_ref()?;
    if error.code != ErrorCode::ExecutionFailed
        || details.get("isError") != Some(&Value::Bool(true))
    {
        return None;
    }
    let mut result = serde_json::from_value::<CallToolResult>(details.clone()).ok()?;
    result
        .result_type
        .get_or_insert(rmcp::model::ResultType::COMPLETE);
    let mut meta = result.meta.take().unwrap_or_default();
    meta.insert(
        ERROR_META.to_owned(),
        serde_json::json!({
            "code": error.code,
            "message": error.message,
            "retryable": error.retryable,
        }),
    );
    result.meta = Some(meta);
    Some(result)
}

/// `isError: true` with the error object as text.
pub fn error_result(error: &CallError) -> CallToolResult {
    let text = serde_json::to_string(error).unwrap_or_else(|_| error.message.clone());
    CallToolResult::error(vec![McpBlock::text(text)])
}

fn success_result(
    data: Option<Value>,
    content: Vec<ContentBlock>,
    truncated: Option<Governance>,
) -> CallToolResult {
    let data = data.unwrap_or(Value::Null);
    let mut blocks = Vec::with_capacity(content.len() + 2);
    match &data {
        Value::String(s) => blocks.push(McpBlock::text(s.clone())),
        // A tool that answers only with typed blocks (an image) has nothing to say as text.
        Value::Null if !content.is_empty() => {}
        other => blocks.push(McpBlock::text(other.to_string())),
    }
    blocks.extend(content.into_iter().map(block));
    if let Some(cut) = &truncated {
        blocks.push(McpBlock::text(truncation_note(cut)));
    }
    let mut result = CallToolResult::success(blocks);
    if data.is_object() {
        result.structured_content = Some(data);
    }
    result
}

fn truncation_note(cut: &Governance) -> String {
    match &cut.result_id {
        Some(id) => format!(
            "[result truncated: {} of {} bytes shown; read the rest with the `read_result` tool, result_id `{id}`]",
            cut.returned_bytes, cut.total_bytes
        ),
        None => format!(
            "[result truncated: {} of {} bytes shown]",
            cut.returned_bytes, cut.total_bytes
        ),
    }
}

fn block(content: ContentBlock) -> McpBlock {
    match content {
        ContentBlock::Text { text } => McpBlock::text(text),
        ContentBlock::Image { data, mime_type } => McpBlock::image(data, mime_type),
        ContentBlock::Audio { data, mime_type } => McpBlock::audio(data, mime_type),
        ContentBlock::Resource { resource } => {
            match serde_json::from_value::<ResourceContents>(resource.clone()) {
                Ok(contents) => McpBlock::resource(contents),
                // Not a valid MCP resource: still show the model what the tool returned.
                Err(_) => McpBlock::text(resource.to_string()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use toolgate_protocol::{ErrorCode, ToolOutput};

    use super::*;

    fn wire(result: CallToolResult) -> Value {
        serde_json::to_value(result).unwrap()
    }

    #[test]
    fn object_data_is_text_and_structured_content() {
        let env = Envelope::success("c1", ToolOutput::json(json!({"a": 1})), None);
        assert_eq!(
            wire(call_result(env)),
            json!({
                "content": [{"type": "text", "text": "{\"a\":1}"}],
                "structuredContent": {"a": 1},
                "isError": false,
                "resultType": "complete"
            })
        );
    }

    #[test]
    fn string_data_is_plain_text_and_blocks_follow() {
        let mut out = ToolOutput::text("hello");
        out.content = vec![
            ContentBlock::Image {
                data: "iVBO".into(),
                mime_type: "image/png".into(),
            },
            ContentBlock::Resource {
                resource: json!({"uri": "test://r", "mimeType": "text/plain", "text": "t"}),
            },
        ];
        let env = Envelope::success("c1", out, None);
        assert_eq!(
            wire(call_result(env)),
            json!({
                "content": [
                    {"type": "text", "text": "hello"},
                    {"type": "image", "data": "iVBO", "mimeType": "image/png"},
                    {"type": "resource", "resource": {"uri": "test://r", "mimeType": "text/plain", "text": "t"}}
                ],
                "isError": false,
                "resultType": "complete"
            })
        );
    }

    #[test]
    fn a_federated_result_passes_unchanged_unless_it_was_cut() {
        let upstream = json!({
            "content": [
                {"type": "text", "text": "done", "annotations": {"priority": 0.7, "audience": ["user"]},
                 "_meta": {"vendor/x": 1}},
                {"type": "resource_link", "uri": "demo://r/1", "name": "r1", "mimeType": "text/plain",
                 "description": "a link"}
            ],
            "structuredContent": {"n": 1},
            "isError": false,
            "_meta": {"vendor/trace": "t"}
        });
        let mut out = ToolOutput::json(json!({"n": 1}));
        out.mcp_result = Some(upstream.clone());
        // As written on the wire (rmcp keeps a priority as f32, written in its shortest form).
        let text = serde_json::to_string(&call_result(Envelope::success("c1", out.clone(), None)));
        let mut whole: Value = serde_json::from_str(&text.unwrap()).unwrap();
        assert_eq!(
            whole.as_object_mut().unwrap().remove("resultType"),
            Some(json!("complete"))
        );
        assert_eq!(whole, upstream);

        let cut = Governance {
            total_bytes: 10,
            returned_bytes: 4,
            result_id: Some("res_1".into()),
        };
        let result = wire(call_result(Envelope::success("c1", out, Some(cut))));
        let last = result["content"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()
            .clone();
        assert!(
            last["text"].as_str().unwrap().contains("result truncated"),
            "{result}"
        );
    }

    #[test]
    fn null_data_with_blocks_has_no_text() {
        let out = ToolOutput {
            data: Value::Null,
            content: vec![ContentBlock::Audio {
                data: "UklG".into(),
                mime_type: "audio/wav".into(),
            }],
            mcp_result: None,
        };
        let result = wire(call_result(Envelope::success("c1", out, None)));
        assert_eq!(
            result["content"],
            json!([{"type": "audio", "data": "UklG", "mimeType": "audio/wav"}])
        );
    }

    #[test]
    fn truncated_results_name_the_result_id() {
        let cut = Governance {
            total_bytes: 100,
            returned_bytes: 10,
            result_id: Some("res_1".into()),
        };
        let env = Envelope::success("c1", ToolOutput::text("0123456789"), Some(cut));
        let result = wire(call_result(env));
        assert_eq!(
            result["content"][1]["text"],
            "[result truncated: 10 of 100 bytes shown; read the rest with the `read_result` tool, result_id `res_1`]"
        );
    }

    #[test]
    fn errors_are_is_error_results_with_the_error_object() {
        let err = CallError::new(
            ErrorCode::ApprovalRequired,
            "`write_file` needs approval: apr_1",
        )
        .with_hint("approve it")
        .with_details(json!({"approval_id": "apr_1"}));
        let result = wire(call_result(Envelope::failure("c1", err)));
        assert_eq!(result["isError"], true);
        let text: Value =
            serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(
            text,
            json!({
                "code": "approval_required",
                "message": "`write_file` needs approval: apr_1",
                "retryable": true,
                "hint": "approve it",
                "details": {"approval_id": "apr_1"}
            })
        );
    }
}

#[cfg(test)]
mod upstream_errors {
    use serde_json::json;
    use toolgate_core::ToolError;

    use super::*;

    /// Issue 34, item 3: an upstream's `isError` result reaches the client with its content
    /// intact (annotations, resource links, `structuredContent`, `_meta`), toolgate's
    /// verdict beside it in `_meta` — not replaced by toolgate's JSON error text.
    #[test]
    fn an_upstream_error_result_passes_on_as_sent() {
        let upstream = json!({
            "content": [
                {"type": "text", "text": "{\"code\":\"not_found\"}", "annotations": {"priority": 0.5}},
                {"type": "resource_link", "uri": "file:///a.log", "name": "a.log"}
            ],
            "structuredContent": {"code": "not_found"},
            "isError": true,
            "_meta": {"upstream/trace": "t1"}
        });
        let error = ToolError::Failed {
            message: "{\"code\":\"not_found\"}".into(),
            retryable: false,
            details: Some(upstream.clone()),
        }
        .into_call_error();
        let result = serde_json::to_value(call_result(Envelope::failure("c1", error))).unwrap();
        assert_eq!(result["content"], upstream["content"], "{result}");
        assert_eq!(result["structuredContent"], upstream["structuredContent"]);
        assert_eq!(result["isError"], true);
        assert_eq!(result["_meta"]["upstream/trace"], "t1");
        assert_eq!(result["_meta"][ERROR_META]["code"], "execution_failed");
    }

    /// toolgate's own refusals and a built-in tool's failures stay the error object as text.
    #[test]
    fn toolgates_own_errors_are_the_error_object() {
        let error = ToolError::Failed {
            message: "disk full".into(),
            retryable: true,
            details: Some(json!({"path": "a.txt"})),
        }
        .into_call_error();
        let result = serde_json::to_value(call_result(Envelope::failure("c1", error))).unwrap();
        let text: Value =
            serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(text["code"], "execution_failed");
        assert_eq!(text["details"]["path"], "a.txt");
    }
}
