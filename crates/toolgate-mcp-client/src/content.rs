//! An MCP `CallToolResult` as a toolgate result, keeping every content type (R-MCP-5).
//!
//! - `structuredContent` present: it is `data`; a text block that only repeats it (the
//!   spec's backwards-compatible JSON copy, or the bare value of a `{"result": value}`
//!   wrapper as SDKs write for tools returning a scalar) is left out; every other block is
//!   kept.
//! - otherwise: the first text block is `data` (a string), the other blocks follow in order.
//! - `resource_link` has no variant of its own in [`ContentBlock`]: it travels as a
//!   `Resource` whose object carries `"type": "resource_link"` and the link's fields.
//! - `isError: true`: a [`ToolError::Failed`] whose message is the server's text and whose
//!   details are the whole result as received (content, `structuredContent`, `_meta`,
//!   `isError`), so an MCP front end passes the server's error on as it was sent.
//! - the whole result object, as received, is kept in [`ToolOutput::mcp_result`], so an MCP
//!   front end passes annotations, `_meta` and resource links on unchanged.

use serde_json::Value;
use toolgate_core::ToolError;
use toolgate_protocol::{ContentBlock, ToolOutput};

/// Maps a `tools/call` result. `result` is the result object as JSON (rmcp's
/// `CallToolResult` serialised), so fields rmcp does not model yet are not lost.
pub fn tool_output(result: Value) -> Result<ToolOutput, ToolError> {
    let mut result = match result {
        Value::Object(m) => m,
        other => return Ok(ToolOutput::json(other)),
    };
    let upstream = Value::Object(result.clone());
    let blocks = match result.remove("content") {
        Some(Value::Array(blocks)) => blocks,
        _ => Vec::new(),
    };
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        return Err(error(&blocks, upstream));
    }
    let structured = result.remove("structuredContent");
    let mut content: Vec<ContentBlock> = Vec::with_capacity(blocks.len());
    let data = match structured {
        Some(structured) => {
            content.extend(
                blocks
                    .into_iter()
                    .filter(|b| !repeats(b, &structured))
                    .map(block),
            );
            structured
        }
        None => {
            let mut data = Value::Null;
            for b in blocks {
                match (&data, text_of(&b)) {
                    (Value::Null, Some(text)) => data = Value::String(text.to_owned()),
                    _ => content.push(block(b)),
                }
            }
            data
        }
    };
    Ok(ToolOutput {
        data,
        content,
        mcp_result: Some(upstream),
    })
}

fn text_of(block: &Value) -> Option<&str> {
    (block.get("type")?.as_str()? == "text")
        .then(|| block.get("text")?.as_str())
        .flatten()
}

/// True for a text block that says nothing `structured` does not: its JSON serialisation,
/// or the one value of a single-field object (`"5"` for `{"result": 5}`).
fn repeats(block: &Value, structured: &Value) -> bool {
    let Some(text) = text_of(block) else {
        return false;
    };
    let parsed = serde_json::from_str::<Value>(text).ok();
    if parsed.as_ref() == Some(structured) {
        return true;
    }
    match structured
        .as_object()
        .map(|o| o.values().collect::<Vec<_>>())
        .as_deref()
    {
        Some([only]) => parsed.as_ref() == Some(*only) || only.as_str() == Some(text),
        _ => false,
    }
}

fn string_field(block: &Value, key: &str) -> String {
    block
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

fn block(b: Value) -> ContentBlock {
    match b.get("type").and_then(Value::as_str).unwrap_or_default() {
        "text" => ContentBlock::Text {
            text: string_field(&b, "text"),
        },
        "image" => ContentBlock::Image {
            data: string_field(&b, "data"),
            mime_type: string_field(&b, "mimeType"),
        },
        "audio" => ContentBlock::Audio {
            data: string_field(&b, "data"),
            mime_type: string_field(&b, "mimeType"),
        },
        "resource" => ContentBlock::Resource {
            resource: b.get("resource").cloned().unwrap_or(Value::Null),
        },
        // resource_link and any type a newer server sends: the whole block, type included.
        _ => ContentBlock::Resource { resource: b },
    }
}

fn error(blocks: &[Value], upstream: Value) -> ToolError {
    let texts: Vec<&str> = blocks.iter().filter_map(text_of).collect();
    let message = if texts.is_empty() {
        "the MCP tool reported an error without a message".to_owned()
    } else {
        texts.join("\n")
    };
    ToolError::Failed {
        message,
        retryable: false,
        details: Some(upstream),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn text_becomes_data_and_typed_blocks_follow_in_order() {
        let input = json!({"content": [
            {"type": "text", "text": "hello"},
            {"type": "image", "data": "iVBO", "mimeType": "image/png"},
            {"type": "text", "text": "second"},
            {"type": "audio", "data": "UklG", "mimeType": "audio/wav"},
            {"type": "resource", "resource": {"uri": "test://a", "text": "A", "mimeType": "text/plain"}},
            {"type": "resource_link", "uri": "file:///x", "name": "x", "mimeType": "text/plain"}
        ]});
        let out = tool_output(input.clone()).unwrap();
        assert_eq!(
            out,
            ToolOutput {
                data: json!("hello"),
                content: vec![
                    ContentBlock::Image {
                        data: "iVBO".into(),
                        mime_type: "image/png".into()
                    },
                    ContentBlock::Text {
                        text: "second".into()
                    },
                    ContentBlock::Audio {
                        data: "UklG".into(),
                        mime_type: "audio/wav".into()
                    },
                    ContentBlock::Resource {
                        resource: json!({"uri": "test://a", "text": "A", "mimeType": "text/plain"})
                    },
                    ContentBlock::Resource {
                        resource: json!({"type": "resource_link", "uri": "file:///x", "name": "x", "mimeType": "text/plain"})
                    },
                ],
                mcp_result: Some(input),
            }
        );
    }

    #[test]
    fn structured_content_is_data_and_its_json_copy_is_dropped() {
        let input = json!({
            "content": [
                {"type": "text", "text": "{\"temperature\": 22.5}"},
                {"type": "text", "text": "note"}
            ],
            "structuredContent": {"temperature": 22.5}
        });
        let out = tool_output(input.clone()).unwrap();
        assert_eq!(
            out,
            ToolOutput {
                data: json!({"temperature": 22.5}),
                content: vec![ContentBlock::Text {
                    text: "note".into()
                }],
                mcp_result: Some(input),
            }
        );
    }

    #[test]
    fn the_bare_value_of_a_single_field_wrapper_is_a_copy() {
        for (text, structured) in [("5", json!({"result": 5})), ("hi", json!({"result": "hi"}))] {
            let out = tool_output(json!({
                "content": [{"type": "text", "text": text}],
                "structuredContent": structured
            }))
            .unwrap();
            assert_eq!((out.data, out.content), (structured, vec![]));
        }
        let two_fields = tool_output(json!({
            "content": [{"type": "text", "text": "5"}],
            "structuredContent": {"a": 5, "b": 5}
        }))
        .unwrap();
        assert_eq!(
            two_fields.content,
            vec![ContentBlock::Text { text: "5".into() }]
        );
    }

    #[test]
    fn an_image_only_result_has_null_data() {
        let out = tool_output(
            json!({"content": [{"type": "image", "data": "x", "mimeType": "image/png"}]}),
        )
        .unwrap();
        assert_eq!(out.data, Value::Null);
        assert_eq!(out.content.len(), 1);
    }

    #[test]
    fn is_error_is_a_failure_with_the_servers_text() {
        let err = tool_output(json!({
            "content": [{"type": "text", "text": "division by zero"}],
            "isError": true
        }))
        .unwrap_err();
        assert_eq!(
            err,
            ToolError::Failed {
                message: "division by zero".into(),
                retryable: false,
                details: Some(json!({
                    "content": [{"type": "text", "text": "division by zero"}],
                    "isError": true
                })),
            }
        );
        let silent = tool_output(json!({"content": [], "isError": true})).unwrap_err();
        assert_eq!(
            silent.to_string(),
            "the MCP tool reported an error without a message"
        );
    }
}
