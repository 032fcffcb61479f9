//! The two ways to call a tool: MCP `tools/call` over Streamable HTTP (a session per worker:
//! `initialize`, `notifications/initialized`, then calls carrying `Mcp-Session-Id` and
//! `MCP-Protocol-Version`) and toolgate's `POST /v1/calls`. Each call's answer is checked: a
//! JSON-RPC error, an `isError` result, a non-2xx status or an `ok: false` envelope is a
//! failure, never a latency sample.

use bytes::Bytes;
use http::header::{ACCEPT, HeaderName, HeaderValue};
use http::{Method, StatusCode};
use serde_json::{Value, json};

use crate::answer::find_answer;
use crate::connection::{Connection, Reply};
use crate::endpoint::Endpoint;
use crate::error::{LoadError, excerpt};

/// The MCP protocol version asked for in `initialize`.
pub const MCP_PROTOCOL_VERSION: &str = "2025-11-25";
const SESSION_HEADER: HeaderName = HeaderName::from_static("mcp-session-id");
const VERSION_HEADER: HeaderName = HeaderName::from_static("mcp-protocol-version");

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    /// MCP Streamable HTTP: the URL is the MCP endpoint (…/mcp).
    Mcp,
    /// toolgate's HTTP API: the URL is the server's base; calls go to /v1/calls.
    V1,
}

/// What every call of a run sends.
#[derive(Debug, Clone)]
pub struct CallTemplate {
    pub protocol: Protocol,
    pub endpoint: Endpoint,
    pub tool: String,
    pub arguments: Value,
}

/// One worker's connection, ready to call.
pub struct Caller {
    connection: Connection,
    path: String,
    headers: Vec<(HeaderName, HeaderValue)>,
    kind: CallerKind,
}

enum CallerKind {
    Mcp {
        /// `"params":{…}}` — everything after the id of a `tools/call` request.
        params_tail: String,
        next_id: u64,
    },
    V1 {
        body: Bytes,
    },
}

impl Caller {
    /// Connects and, for MCP, opens a session.
    pub async fn connect(template: &CallTemplate) -> Result<Self, LoadError> {
        let mut connection = Connection::open(&template.endpoint).await?;
        match template.protocol {
            Protocol::V1 => {
                let body = json!({"tool": template.tool, "arguments": template.arguments});
                Ok(Caller {
                    connection,
                    path: v1_calls_path(&template.endpoint.path),
                    headers: Vec::new(),
                    kind: CallerKind::V1 {
                        body: Bytes::from(body.to_string()),
                    },
                })
            }
            Protocol::Mcp => {
                let path = template.endpoint.path.clone();
                let headers = open_session(&mut connection, &path).await?;
                let params = json!({"name": template.tool, "arguments": template.arguments});
                Ok(Caller {
                    connection,
                    path,
                    headers,
                    kind: CallerKind::Mcp {
                        params_tail: format!(r#","method":"tools/call","params":{params}}}"#),
                        next_id: 2,
                    },
                })
            }
        }
    }

    /// One call, checked.
    pub async fn call(&mut self) -> Result<(), LoadError> {
        match &mut self.kind {
            CallerKind::V1 { body } => {
                let reply = self
                    .connection
                    .post_json(&self.path, &self.headers, body.clone())
                    .await?;
                check_envelope(&self.path, &reply)
            }
            CallerKind::Mcp {
                params_tail,
                next_id,
            } => {
                let id = *next_id;
                *next_id += 1;
                let body = format!(r#"{{"jsonrpc":"2.0","id":{id}{params_tail}"#);
                let reply = self
                    .connection
                    .post_json(&self.path, &self.headers, Bytes::from(body))
                    .await?;
                let answer = json_rpc_answer(&self.path, &reply, id)?;
                check_tool_result(&answer)
            }
        }
    }

    /// Ends the MCP session (DELETE), so the server can free it; nothing for /v1.
    pub async fn close(mut self) -> Result<(), LoadError> {
        if let CallerKind::Mcp { .. } = self.kind {
            let reply = self
                .connection
                .send(Method::DELETE, &self.path, &self.headers, None)
                .await?;
            expect_success(&self.path, &reply)?;
        }
        Ok(())
    }
}

/// `/v1/calls` under the URL's path (`/` or a prefix such as `/toolgate`).
fn v1_calls_path(base: &str) -> String {
    format!("{}/v1/calls", base.trim_end_matches('/'))
}

/// `initialize` + `notifications/initialized`; returns the headers every later request carries.
async fn open_session(
    connection: &mut Connection,
    path: &str,
) -> Result<Vec<(HeaderName, HeaderValue)>, LoadError> {
    let accept = (
        ACCEPT,
        HeaderValue::from_static("application/json, text/event-stream"),
    );
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": MCP_PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "toolgate-loadgen", "version": env!("CARGO_PKG_VERSION")},
        },
    });
    let reply = connection
        .post_json(
            path,
            std::slice::from_ref(&accept),
            Bytes::from(initialize.to_string()),
        )
        .await?;
    let session = reply
        .headers
        .get(SESSION_HEADER)
        .cloned()
        .ok_or(LoadError::NoSession)?;
    let answer = json_rpc_answer(path, &reply, 1)?;
    let version = answer
        .pointer("/result/protocolVersion")
        .and_then(Value::as_str)
        .ok_or_else(|| LoadError::CallFailed(format!("initialize failed: {answer}")))?;
    let version = HeaderValue::from_str(version).map_err(http::Error::from)?;
    let headers = vec![accept, (SESSION_HEADER, session), (VERSION_HEADER, version)];
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let reply = connection
        .post_json(path, &headers, Bytes::from_static(initialized.as_bytes()))
        .await?;
    expect_success(path, &reply)?;
    Ok(headers)
}

fn expect_success(path: &str, reply: &Reply) -> Result<(), LoadError> {
    if reply.status.is_success() {
        Ok(())
    } else {
        Err(LoadError::Status {
            status: reply.status.as_u16(),
            path: path.to_owned(),
            body: excerpt(&reply.body, 300),
        })
    }
}

fn json_rpc_answer(path: &str, reply: &Reply, id: u64) -> Result<Value, LoadError> {
    expect_success(path, reply)?;
    let is_event_stream = reply
        .headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    find_answer(&reply.body, is_event_stream, id)
}

/// A `tools/call` answer is a success when it is a result without `isError: true`.
pub fn check_tool_result(answer: &Value) -> Result<(), LoadError> {
    match answer.get("result") {
        Some(result) if result.get("isError") != Some(&Value::Bool(true)) => Ok(()),
        Some(result) => Err(LoadError::CallFailed(format!("isError result: {result}"))),
        None => Err(LoadError::CallFailed(format!(
            "JSON-RPC error: {}",
            answer.get("error").unwrap_or(answer)
        ))),
    }
}

/// A `/v1/calls` answer is a success when it is 200 with `ok: true`.
pub fn check_envelope(path: &str, reply: &Reply) -> Result<(), LoadError> {
    if reply.status != StatusCode::OK {
        return Err(LoadError::Status {
            status: reply.status.as_u16(),
            path: path.to_owned(),
            body: excerpt(&reply.body, 300),
        });
    }
    let envelope: Value = serde_json::from_slice(&reply.body)?;
    if envelope.get("ok") == Some(&Value::Bool(true)) {
        Ok(())
    } else {
        Err(LoadError::CallFailed(excerpt(&reply.body, 300)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(status: u16, body: &str) -> Reply {
        Reply {
            status: StatusCode::from_u16(status).unwrap(),
            headers: http::HeaderMap::new(),
            body: Bytes::from(body.to_owned()),
        }
    }

    #[test]
    fn the_v1_path_goes_under_the_base() {
        assert_eq!(v1_calls_path("/"), "/v1/calls");
        assert_eq!(v1_calls_path("/toolgate/"), "/toolgate/v1/calls");
    }

    #[test]
    fn tool_results_succeed_unless_is_error_or_a_json_rpc_error() {
        assert!(check_tool_result(&json!({"id": 2, "result": {"content": []}})).is_ok());
        assert!(
            check_tool_result(&json!({"id": 2, "result": {"content": [], "isError": false}}))
                .is_ok()
        );
        let failed = |answer: Value| check_tool_result(&answer).unwrap_err().to_string();
        assert_eq!(
            failed(json!({"id": 2, "result": {"isError": true}})),
            r#"the call failed: isError result: {"isError":true}"#
        );
        assert_eq!(
            failed(json!({"id": 2, "error": {"code": -32602}})),
            r#"the call failed: JSON-RPC error: {"code":-32602}"#
        );
    }

    #[test]
    fn envelopes_succeed_only_when_ok() {
        assert!(check_envelope("/v1/calls", &reply(200, r#"{"ok":true,"data":1}"#)).is_ok());
        assert_eq!(
            check_envelope("/v1/calls", &reply(200, r#"{"ok":false}"#))
                .unwrap_err()
                .to_string(),
            r#"the call failed: {"ok":false}"#
        );
        assert_eq!(
            check_envelope("/v1/calls", &reply(503, "busy"))
                .unwrap_err()
                .to_string(),
            "HTTP 503 from /v1/calls: busy"
        );
    }
}
