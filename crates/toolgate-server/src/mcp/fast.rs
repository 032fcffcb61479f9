//! `tools/call` in a session, answered with one `application/json` object instead of
//! through rmcp's session worker and an SSE stream. The Streamable HTTP transport (2025-06-18,
//! 2025-11-25) lets a server answer any POSTed request either way and obliges clients to
//! accept both; the JSON answer skips rmcp's per-session worker, its channels and the SSE
//! framing, which is most of what an MCP call costs over `/v1`.
//!
//! # Which requests
//! A POST is answered here only when all of these hold; anything else — or any doubt — goes
//! to rmcp untouched (the body, once read, is put back byte for byte):
//! - the session is known to be [quiet](toolgate_mcp_server::listening) (initialized, and its client
//!   declared neither sampling, elicitation nor roots and set no log level: a federated
//!   server's requests and log messages would reach it on the call's stream);
//! - the server is not shutting down (from then on rmcp decides, as for any other request);
//! - one `Mcp-Session-Id` naming a live session of the same session manager rmcp uses
//!   (an unknown session gets rmcp's `404`), and the caller our auth layer recorded;
//! - `Accept` names both `application/json` and `text/event-stream` with no parameters, and
//!   `Content-Type` is `application/json`;
//! - `MCP-Protocol-Version` is absent (rmcp then assumes 2025-03-26) or a known version that
//!   still has `initialize` (a session version), and no other `Mcp-*` header (the SEP-2243
//!   standard headers belong to 2026-07-28 requests);
//! - the body is one JSON-RPC request `tools/call` (as rmcp parses it) whose `_meta` has no
//!   `progressToken` (a call that wants progress — waiting for an approval — keeps the SSE
//!   stream) and no `io.modelcontextprotocol/*` key, with no input responses or request state
//!   (2026-07-28 multi-round trips), and whose id is not already in flight here.
//!
//! The call itself is [`run_call`], the same as rmcp's path: the same caller resolution, the
//! same envelope → `CallToolResult` mapping, the same concealment of hidden tools; the
//! JSON-RPC response is rmcp's own message type, serialized as rmcp serializes it.
//!
//! # Cancellation and shutdown
//! The call runs on [`AppState::run_call`]'s tracked task (it finishes and is audited even if
//! the client goes away) and is also tracked by the endpoint's [`Lifecycle`], so graceful
//! shutdown waits for it before the sessions close. Its token fires when:
//! - the HTTP request is dropped (client disconnected, or the grace period ended);
//! - the hard stop at the end of the shutdown grace fires;
//! - the client POSTs `notifications/cancelled` naming the request id on the same session
//!   (the notification is always passed on to rmcp as well, for its own requests). As
//!   rmcp does for a cancelled request, no JSON-RPC response is sent: the request is
//!   answered with an empty event stream;
//! - the session is deleted (`DELETE /mcp`), again answered with an empty event stream.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use toolgate_mcp_server::span::{Arrival, ServerOp, Transport, request_id, tool_error};

use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use http::header::{ACCEPT, CACHE_CONTROL, CONTENT_TYPE};
use http::{HeaderMap, Method, StatusCode};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientJsonRpcMessage, ClientNotification,
    ClientRequest, GetMeta, JsonRpcMessage, ProtocolVersion, RequestId, RequestMetaObject,
    ServerJsonRpcMessage, ServerResult,
};
use rmcp::transport::streamable_http_server::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use tokio_util::sync::CancellationToken;

use crate::state::AppState;
use toolgate_gateway::Caller;
use toolgate_mcp_server::call::{CallOrigin, ToolCall, run_call};
use toolgate_mcp_server::handler::{Lifecycle, http_caller};
use toolgate_mcp_server::listening::ListeningSessions;

const JSON: &str = "application/json";
const EVENT_STREAM: &str = "text/event-stream";
const SESSION_HEADER: &str = "mcp-session-id";
const VERSION_HEADER: &str = "mcp-protocol-version";
const PROGRESS_TOKEN: &str = "progressToken";
const PROTOCOL_META_PREFIX: &str = "io.modelcontextprotocol/";

/// What became of a request.
pub enum Route {
    /// Answered here.
    Answered(Response),
    /// For rmcp, as it arrived.
    Rmcp(Request),
}

/// The JSON answers of `/mcp`: one per router, next to the rmcp service it bypasses.
pub struct FastCalls {
    state: AppState,
    sessions: Arc<LocalSessionManager>,
    lifecycle: Lifecycle,
    /// rmcp's `max_request_body_bytes`, so an oversized body gets rmcp's answer.
    body_limit: usize,
    in_flight: InFlight,
    /// Sessions whose calls stay on rmcp's path.
    listening: Arc<ListeningSessions>,
}

impl FastCalls {
    pub fn new(
        state: AppState,
        sessions: Arc<LocalSessionManager>,
        lifecycle: Lifecycle,
        body_limit: usize,
        listening: Arc<ListeningSessions>,
    ) -> Self {
        FastCalls {
            state,
            sessions,
            lifecycle,
            body_limit,
            in_flight: InFlight::default(),
            listening,
        }
    }

    /// Answers `request` if it is a plain session `tools/call` (see the module doc), else
    /// hands it back for rmcp; cancels the call a `notifications/cancelled` names.
    pub async fn handle(&self, request: Request) -> Route {
        let Some((caller, session)) = self.eligible(&request) else {
            return Route::Rmcp(request);
        };
        if !self.listening.is_quiet(&session) {
            return Route::Rmcp(request);
        }
        if !self
            .sessions
            .has_session(&session.as_str().into())
            .await
            .unwrap_or(false)
        {
            return Route::Rmcp(request);
        }
        let (parts, body) = request.into_parts();
        let bytes = match Limited::new(body, self.body_limit).collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(e) => return Route::Answered(unreadable_body(&*e, self.body_limit)),
        };
        match serde_json::from_slice::<ClientJsonRpcMessage>(&bytes) {
            Ok(JsonRpcMessage::Request(message)) => {
                // rmcp's parser moves `_meta` into the request's extensions.
                let meta_is_plain = plain_meta(message.request.get_meta());
                let meta_trace = toolgate_core::TraceContext::from_meta(message.request.get_meta());
                if let ClientRequest::CallToolRequest(call) = message.request
                    && meta_is_plain
                    && plain(&call.params)
                    && let Some(entry) = self.in_flight.enter(&session, &message.id)
                {
                    let trace = meta_trace.or_else(|| {
                        let params_meta = call.params.meta.as_deref().map(|m| &**m);
                        crate::trace::for_mcp(params_meta, Some(&parts.headers))
                    });
                    let op = ServerOp::start(Arrival {
                        method: "tools/call",
                        tool: Some(&call.params.name),
                        tool_known: self.state.gateway.catalog().has(&call.params.name),
                        request_id: Some(request_id(&message.id)),
                        session: Some(&session),
                        protocol: parts
                            .headers
                            .get("mcp-protocol-version")
                            .and_then(|v| v.to_str().ok())
                            .map(str::to_owned),
                        transport: Transport::Tcp,
                        parent: trace.as_ref(),
                    });
                    let trace = op.trace(trace);
                    let answer = self
                        .call(&caller, (session, trace), call.params, entry)
                        .await;
                    op.end(answer.as_ref().and_then(tool_error));
                    return Route::Answered(match answer {
                        Some(result) => json_answer(message.id, result),
                        None => no_answer(),
                    });
                }
            }
            Ok(JsonRpcMessage::Notification(message)) => {
                if let ClientNotification::CancelledNotification(cancelled) = &message.notification
                    && let Some(id) = &cancelled.params.request_id
                {
                    self.in_flight.cancel(&session, id);
                }
            }
            _ => {}
        }
        Route::Rmcp(Request::from_parts(parts, Body::from(bytes)))
    }

    /// Cancels the calls in flight in `session` (deleted: nobody is listening any more).
    pub fn end_session(&self, session: &str) {
        self.in_flight.end_session(session);
        self.listening.remove(session);
    }

    /// Runs the call; `None` when it was cancelled by the client (or its session ended)
    /// and so gets no response.
    async fn call(
        &self,
        caller: &Caller,
        (session, trace): (String, Option<toolgate_core::TraceContext>),
        params: CallToolRequestParams,
        entry: Entry<'_>,
    ) -> Option<rmcp::model::CallToolResult> {
        let origin = CallOrigin {
            cancel: entry.cancel.clone(),
            client: None,
        };
        let call = ToolCall {
            caller,
            session: session.into(),
            params,
            trace,
        };
        let run = run_call(
            &self.state.gateway,
            &self.lifecycle.shutdown,
            call,
            origin,
            |request| self.state.run_call(request),
        );
        let result = self.lifecycle.calls.track_future(run).await;
        entry.leave().then_some(result)
    }

    /// The caller and session when the request's head qualifies (everything but the
    /// session's existence and the body).
    fn eligible(&self, request: &Request) -> Option<(Caller, String)> {
        if request.method() != Method::POST || self.lifecycle.shutdown.is_cancelled() {
            return None;
        }
        let headers = request.headers();
        let session = single(headers, SESSION_HEADER)?.to_str().ok()?;
        if session.is_empty()
            || !accepts_json_and_sse(headers)
            || !is_json(headers)
            || !session_version(headers)
            || has_other_mcp_headers(headers)
        {
            return None;
        }
        let (caller, session) = http_caller(request.extensions(), headers).ok()?;
        Some((caller, session))
    }
}

/// No progress wanted and no 2026-07-28 per-request lifecycle.
fn plain_meta(meta: &RequestMetaObject) -> bool {
    meta.keys()
        .all(|k| k != PROGRESS_TOKEN && !k.starts_with(PROTOCOL_META_PREFIX))
}

/// Plain `_meta` (wherever it was left) and no 2026-07-28 multi-round trip.
fn plain(params: &CallToolRequestParams) -> bool {
    params.meta.as_ref().is_none_or(plain_meta)
        && params.input_responses.is_none()
        && params.request_state.is_none()
}

fn single<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a http::HeaderValue> {
    let mut values = headers.get_all(name).iter();
    let first = values.next()?;
    values.next().is_none().then_some(first)
}

/// Both media types named, and no entry with parameters (a `q` weight is rmcp's to judge).
fn accepts_json_and_sse(headers: &HeaderMap) -> bool {
    let mut json = false;
    let mut sse = false;
    for value in headers.get_all(ACCEPT) {
        let Ok(value) = value.to_str() else {
            return false;
        };
        for entry in value.split(',') {
            let entry = entry.trim();
            if entry.contains([';', '"']) {
                return false;
            }
            json |= entry.eq_ignore_ascii_case(JSON);
            sse |= entry.eq_ignore_ascii_case(EVENT_STREAM);
        }
    }
    json && sse
}

fn is_json(headers: &HeaderMap) -> bool {
    single(headers, CONTENT_TYPE.as_str())
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            let essence = v.split_once(';').map_or(v, |(essence, _)| essence);
            essence.trim().eq_ignore_ascii_case(JSON)
        })
}

/// No `MCP-Protocol-Version` (rmcp assumes 2025-03-26), or a known one with `initialize`.
fn session_version(headers: &HeaderMap) -> bool {
    if !headers.contains_key(VERSION_HEADER) {
        return true;
    }
    single(headers, VERSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            ProtocolVersion::KNOWN_VERSIONS
                .iter()
                .any(|known| known.as_str() == v && known.has_initialize())
        })
}

/// `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`, … (SEP-2243) or any other `Mcp-*` header.
fn has_other_mcp_headers(headers: &HeaderMap) -> bool {
    headers.keys().any(|name| {
        let name = name.as_str();
        name.starts_with("mcp-") && name != SESSION_HEADER && name != VERSION_HEADER
    })
}

/// The JSON-RPC response, exactly as rmcp would put it in its event: a session always
/// negotiated a version with `initialize` (rmcp's handshake never agrees on a later one), so
/// the result keeps the shape those versions know, as rmcp's handler leaves it for them.
fn json_answer(id: RequestId, result: rmcp::model::CallToolResult) -> Response {
    let mut result = ServerResult::from(CallToolResponse::from(result));
    result.strip_result_type_for_legacy_peer();
    result.strip_non_object_output_for_legacy_peer();
    let message: ServerJsonRpcMessage = JsonRpcMessage::response(result, id);
    match serde_json::to_vec(&message) {
        Ok(body) => Response::builder()
            .status(StatusCode::OK)
            .header(CONTENT_TYPE, JSON)
            .body(Body::from(body))
            .unwrap_or_else(|_| internal_error("building the response")),
        Err(e) => internal_error(&format!("serializing the response: {e}")),
    }
}

/// A cancelled request's answer: an event stream that ends without a response, as rmcp
/// ends the stream of a request the client cancelled.
fn no_answer() -> Response {
    Response::builder()
        .status(StatusCode::OK)
        .header(CONTENT_TYPE, EVENT_STREAM)
        .header(CACHE_CONTROL, "no-cache")
        .body(Body::empty())
        .unwrap_or_else(|_| internal_error("building the response"))
}

/// rmcp's answers to a body too large or unreadable (the body is gone, so it cannot be
/// handed on).
fn unreadable_body(
    error: &(dyn std::error::Error + Send + Sync + 'static),
    limit: usize,
) -> Response {
    if error.is::<LengthLimitError>() {
        plain_text(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("Payload Too Large: request body exceeds {limit} bytes"),
        )
    } else {
        plain_text(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("Failed to read request body: {error}"),
        )
    }
}

fn internal_error(what: &str) -> Response {
    plain_text(
        StatusCode::INTERNAL_SERVER_ERROR,
        format!("Internal Server Error: {what}"),
    )
}

fn plain_text(status: StatusCode, text: String) -> Response {
    let mut response = Response::new(Body::from(text));
    *response.status_mut() = status;
    response
}

/// The fast calls running, by session and JSON-RPC id, as rmcp keeps its requests' tokens:
/// a cancellation removes the entry, and a call whose entry is gone when it ends gets no
/// response.
#[derive(Default)]
struct InFlight {
    calls: Mutex<HashMap<(String, RequestId), (u64, CancellationToken)>>,
    serial: AtomicU64,
}

/// One call's place in [`InFlight`]; removed when dropped.
struct Entry<'a> {
    in_flight: &'a InFlight,
    key: (String, RequestId),
    serial: u64,
    cancel: CancellationToken,
}

impl InFlight {
    fn lock(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<(String, RequestId), (u64, CancellationToken)>> {
        self.calls.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A new entry, unless the id is already in flight in that session (rmcp's to judge).
    fn enter(&self, session: &str, id: &RequestId) -> Option<Entry<'_>> {
        let key = (session.to_owned(), id.clone());
        let serial = self.serial.fetch_add(1, Ordering::Relaxed);
        let cancel = CancellationToken::new();
        let mut calls = self.lock();
        if calls.contains_key(&key) {
            return None;
        }
        calls.insert(key.clone(), (serial, cancel.clone()));
        Some(Entry {
            in_flight: self,
            key,
            serial,
            cancel,
        })
    }

    fn cancel(&self, session: &str, id: &RequestId) {
        let removed = self.lock().remove(&(session.to_owned(), id.clone()));
        if let Some((_, cancel)) = removed {
            tracing::debug!(%id, "client cancelled a call");
            cancel.cancel();
        }
    }

    fn end_session(&self, session: &str) {
        let mut ended = Vec::new();
        self.lock().retain(|(s, _), (_, cancel)| {
            let keep = s != session;
            if !keep {
                ended.push(cancel.clone());
            }
            keep
        });
        for cancel in ended {
            cancel.cancel();
        }
    }
}

impl Entry<'_> {
    /// Leaves; whether the entry was still there (nobody cancelled the call).
    fn leave(self) -> bool {
        self.remove()
    }

    fn remove(&self) -> bool {
        let mut calls = self.in_flight.lock();
        match calls.get(&self.key) {
            Some((serial, _)) if *serial == self.serial => {
                calls.remove(&self.key);
                true
            }
            _ => false,
        }
    }
}

impl Drop for Entry<'_> {
    fn drop(&mut self) {
        self.remove();
    }
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn accept_must_name_both_types_without_parameters() {
        let ok = headers(&[("accept", "application/json, text/event-stream")]);
        assert!(accepts_json_and_sse(&ok));
        let split = headers(&[
            ("accept", "text/event-stream"),
            ("accept", "Application/JSON"),
        ]);
        assert!(accepts_json_and_sse(&split));
        for doubtful in [
            "application/json",
            "application/json;q=0, text/event-stream",
            "application/json, text/event-stream; q=0.5",
            "*/*",
        ] {
            assert!(
                !accepts_json_and_sse(&headers(&[("accept", doubtful)])),
                "{doubtful}"
            );
        }
    }

    #[test]
    fn only_session_era_versions_qualify() {
        assert!(session_version(&headers(&[])));
        assert!(session_version(&headers(&[(VERSION_HEADER, "2025-11-25")])));
        assert!(session_version(&headers(&[(VERSION_HEADER, "2025-03-26")])));
        assert!(!session_version(&headers(&[(
            VERSION_HEADER,
            "2026-07-28"
        )])));
        assert!(!session_version(&headers(&[(
            VERSION_HEADER,
            "2099-01-01"
        )])));
        assert!(!session_version(&headers(&[
            (VERSION_HEADER, "2025-11-25"),
            (VERSION_HEADER, "2025-11-25")
        ])));
    }

    #[test]
    fn standard_headers_send_the_request_to_rmcp() {
        assert!(!has_other_mcp_headers(&headers(&[
            (SESSION_HEADER, "s"),
            (VERSION_HEADER, "2025-11-25")
        ])));
        for name in ["mcp-method", "mcp-name", "mcp-param-path"] {
            assert!(has_other_mcp_headers(&headers(&[(name, "x")])), "{name}");
        }
    }

    #[test]
    fn progress_and_lifecycle_meta_are_not_plain() {
        let parse =
            |v: serde_json::Value| -> CallToolRequestParams { serde_json::from_value(v).unwrap() };
        assert!(plain(&parse(serde_json::json!({"name": "t"}))));
        assert!(plain(&parse(
            serde_json::json!({"name": "t", "_meta": {"trace": 1}})
        )));
        assert!(!plain(&parse(
            serde_json::json!({"name": "t", "_meta": {"progressToken": 1}})
        )));
        assert!(!plain(&parse(serde_json::json!({"name": "t",
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}))));
    }

    #[test]
    fn a_cancelled_entry_is_gone_and_a_reused_id_is_not_touched() {
        let in_flight = InFlight::default();
        let id = RequestId::Number(7);
        let first = in_flight.enter("s", &id).unwrap();
        assert!(
            in_flight.enter("s", &id).is_none(),
            "same id twice in flight"
        );
        in_flight.cancel("s", &id);
        assert!(first.cancel.is_cancelled());
        let second = in_flight.enter("s", &id).unwrap();
        assert!(!first.leave(), "the cancelled call gets no response");
        assert!(second.leave());
        let third = in_flight.enter("s", &id).unwrap();
        let other = in_flight.enter("t", &id).unwrap();
        in_flight.end_session("s");
        assert!(third.cancel.is_cancelled() && !other.cancel.is_cancelled());
    }
}
