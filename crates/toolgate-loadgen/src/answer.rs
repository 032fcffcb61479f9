//! The JSON-RPC answer to request `id` inside a Streamable HTTP response body, which is either
//! one JSON message (`application/json`) or a stream of server-sent events
//! (`text/event-stream`) holding notifications (progress, logging) and events without data
//! (rmcp's priming event) before the answer.

use serde_json::Value;

use crate::error::{LoadError, excerpt};

/// The message whose `id` is `id`, from a JSON or an SSE body.
pub fn find_answer(body: &[u8], is_event_stream: bool, id: u64) -> Result<Value, LoadError> {
    let not_found = || LoadError::NoAnswer {
        id,
        body: excerpt(body, 300),
    };
    if !is_event_stream {
        let message: Value = serde_json::from_slice(body)?;
        return if has_id(&message, id) {
            Ok(message)
        } else {
            Err(not_found())
        };
    }
    let text = std::str::from_utf8(body).map_err(|_| not_found())?;
    for data in event_data(text) {
        if data.is_empty() {
            continue;
        }
        let message: Value = serde_json::from_str(&data)?;
        if has_id(&message, id) {
            return Ok(message);
        }
    }
    Err(not_found())
}

fn has_id(message: &Value, id: u64) -> bool {
    message.get("id").and_then(Value::as_u64) == Some(id)
}

/// The `data` of each event in an SSE stream: its `data:` lines joined by `\n`
/// (per the WHATWG event-stream rules: one optional space after the colon, CRLF or LF).
pub fn event_data(stream: &str) -> Vec<String> {
    let mut events = Vec::new();
    let mut data: Option<String> = None;
    for line in stream.lines() {
        if line.is_empty() {
            if let Some(done) = data.take() {
                events.push(done);
            }
            continue;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        if field == "data" {
            match data.as_mut() {
                Some(joined) => {
                    joined.push('\n');
                    joined.push_str(value);
                }
                None => data = Some(value.to_owned()),
            }
        }
    }
    events.extend(data);
    events
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn event_data_joins_lines_and_skips_other_fields() {
        let stream = "id: 0\nretry: 3000\ndata:\n\nevent: message\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\n: keep-alive\n\ndata:x";
        assert_eq!(event_data(stream), vec!["", "{\"a\":\n1}", "x"]);
    }

    #[test]
    fn finds_the_answer_after_a_priming_event_and_a_notification() {
        let body = concat!(
            "id: 0\ndata: \n\n",
            "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}\n\n",
            "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"isError\":false}}\n\n",
        );
        assert_eq!(
            find_answer(body.as_bytes(), true, 7).unwrap(),
            json!({"jsonrpc": "2.0", "id": 7, "result": {"isError": false}})
        );
    }

    #[test]
    fn a_json_body_is_one_message() {
        let body = br#"{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"no"}}"#;
        assert_eq!(
            find_answer(body, false, 3).unwrap(),
            json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32601, "message": "no"}})
        );
    }

    #[test]
    fn a_missing_answer_names_the_id_and_shows_the_body() {
        let err = find_answer(b"data: {\"id\":1}\n\n", true, 2).unwrap_err();
        assert_eq!(
            err.to_string(),
            "no JSON-RPC answer with id 2 in the response body: data: {\"id\":1}\n\n"
        );
    }
}
