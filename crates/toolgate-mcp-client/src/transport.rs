//! The stdio transport of a server child process, with limits that end a call at once.
//!
//! rmcp's own child transport drops an incoming line over its 16 MiB cap, and a line it
//! cannot decode (a result nested deeper than serde_json's 128 levels, broken JSON), without
//! a word to the request waiting for it: the call then sits until its whole `call_timeout`
//! and ends `timeout`. This transport reads the child's stdout itself and answers the waiting
//! request at once instead:
//!
//! - a line over [`MAX_MESSAGE_BYTES`] is never buffered; it is scanned as it streams past
//!   (`Envelope`) for its top-level `id`, and once that is known to belong to a response
//!   the request fails with a synthesized error marked [`Limit::TooLarge`]
//!   (`result_too_large`); the rest of the line is discarded. The line ends at its newline
//!   or at the message's closing brace, whichever comes first: a server that sends an
//!   oversized response with its `id` last and no newline after it, then waits, fails the
//!   request there rather than leaving it to its `call_timeout`;
//! - a line within the cap that does not decode is scanned the same way and its request
//!   fails with [`Limit::Undecodable`] (`execution_failed`) and the decoder's reason.
//!
//! A line whose `id` cannot be found (not JSON at all, or a request or notification from the
//! server) is dropped and logged, as rmcp does. The synthesized errors carry a mark no server
//! can forge ([`limit_of`] recognises it): it is random per process and never sent anywhere.
//!
//! Closing follows rmcp's (and the MCP specification's) stdio shutdown: close the child's
//! stdin, wait, `SIGTERM` its process group, wait, kill. Dropping the transport kills it.

use std::borrow::Cow;
use std::hash::{BuildHasher, Hasher};
use std::process::Stdio;
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use process_wrap::tokio::{ChildWrapper, CommandWrap};
use rmcp::RoleClient;
use rmcp::model::{ClientJsonRpcMessage, ErrorCode, ErrorData, RequestId, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWriteExt, BufReader};
use tokio::process::{ChildStderr, ChildStdin, ChildStdout};
use tokio::sync::Mutex;

/// The largest message read from a server (as rmcp's stdio and SSE limits).
pub const MAX_MESSAGE_BYTES: usize = 16 << 20;
/// How long `close` waits for the child after closing its stdin, and again after `SIGTERM`.
const EXIT_GRACE: Duration = Duration::from_secs(3);
const SIGTERM: i32 = 15;
/// The key of the mark in a synthesized error's `data`.
const MARK_KEY: &str = "toolgate_transport_limit";
/// The JSON-RPC code of a synthesized error (implementation-defined server error range).
const LIMIT_CODE: ErrorCode = ErrorCode(-32099);

/// Random per process: a server cannot put it in an error of its own.
static MARK: LazyLock<String> = LazyLock::new(|| {
    let a = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    let b = std::collections::hash_map::RandomState::new().hash_one(a);
    format!("{a:016x}{b:016x}")
});

/// Why the transport failed a request itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// The response was longer than [`MAX_MESSAGE_BYTES`].
    TooLarge,
    /// The response could not be decoded (too deeply nested, not valid JSON-RPC).
    Undecodable,
}

impl Limit {
    fn name(self) -> &'static str {
        match self {
            Limit::TooLarge => "too_large",
            Limit::Undecodable => "undecodable",
        }
    }
}

/// The limit behind an error this transport synthesized; `None` for a server's own error.
pub fn limit_of(error: &ErrorData) -> Option<Limit> {
    let data = error.data.as_ref()?.get(MARK_KEY)?;
    if data.get("mark").and_then(Value::as_str) != Some(MARK.as_str()) {
        return None;
    }
    match data.get("limit").and_then(Value::as_str)? {
        "too_large" => Some(Limit::TooLarge),
        "undecodable" => Some(Limit::Undecodable),
        _ => None,
    }
}

fn limit_error(id: RequestId, limit: Limit, message: String) -> ServerJsonRpcMessage {
    let data = json!({ MARK_KEY: { "mark": MARK.as_str(), "limit": limit.name() } });
    ServerJsonRpcMessage::error(
        ErrorData::new(LIMIT_CODE, Cow::Owned(message), Some(data)),
        Some(id),
    )
}

/// A spawned server: its stdin and stdout as one rmcp transport.
pub struct ChildTransport {
    child: ChildGuard,
    reader: LineReader<ChildStdout>,
    writer: Arc<Mutex<Option<ChildStdin>>>,
}

/// Kills the child (its whole process group) when dropped before it exited.
struct ChildGuard(Option<Box<dyn ChildWrapper>>);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            // `kill` also reaps it, so no zombie is left; outside a runtime only signal.
            match tokio::runtime::Handle::try_current() {
                Ok(rt) => {
                    rt.spawn(async move {
                        let _ = Box::into_pin(child.kill()).await;
                    });
                }
                Err(_) => {
                    let _ = child.start_kill();
                }
            }
        }
    }
}

impl ChildTransport {
    /// Spawns `command` with piped stdin, stdout and stderr; returns the transport and the
    /// child's stderr.
    pub fn spawn(mut command: CommandWrap) -> std::io::Result<(Self, Option<ChildStderr>)> {
        command
            .command_mut()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn()?;
        let stdin = child.inner_mut().stdin().take();
        let stdout = child.inner_mut().stdout().take();
        let stderr = child.inner_mut().stderr().take();
        let guard = ChildGuard(Some(child));
        let (Some(stdin), Some(stdout)) = (stdin, stdout) else {
            return Err(std::io::Error::other(
                "the child's stdin or stdout is missing",
            ));
        };
        Ok((
            ChildTransport {
                child: guard,
                reader: LineReader::new(stdout, MAX_MESSAGE_BYTES),
                writer: Arc::new(Mutex::new(Some(stdin))),
            },
            stderr,
        ))
    }

    async fn shutdown(&mut self) -> std::io::Result<()> {
        drop(self.writer.lock().await.take());
        let Some(child) = self.child.0.as_mut() else {
            return Ok(());
        };
        if tokio::time::timeout(EXIT_GRACE, child.wait()).await.is_ok() {
            self.child.0 = None;
            return Ok(());
        }
        if child.signal(SIGTERM).is_ok()
            && tokio::time::timeout(EXIT_GRACE, child.wait()).await.is_ok()
        {
            self.child.0 = None;
            return Ok(());
        }
        let killed = Box::into_pin(child.kill()).await;
        self.child.0 = None;
        killed
    }
}

impl Transport<RoleClient> for ChildTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let writer = Arc::clone(&self.writer);
        async move {
            let mut line = serde_json::to_vec(&item)?;
            line.push(b'\n');
            let mut writer = writer.lock().await;
            let stdin = writer.as_mut().ok_or_else(|| {
                std::io::Error::new(std::io::ErrorKind::NotConnected, "the transport is closed")
            })?;
            stdin.write_all(&line).await?;
            stdin.flush().await
        }
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        loop {
            match self.reader.next().await {
                Read::Line(line) => {
                    if let Some(message) = decode(&line) {
                        return Some(message);
                    }
                }
                Read::Oversized(Some(id)) => {
                    tracing::warn!(%id, max = MAX_MESSAGE_BYTES, "MCP server sent a response over the message size limit; failing its request");
                    return Some(limit_error(
                        id,
                        Limit::TooLarge,
                        format!(
                            "the result is over the MCP message limit of {MAX_MESSAGE_BYTES} bytes"
                        ),
                    ));
                }
                Read::Oversized(None) => {
                    tracing::warn!(
                        max = MAX_MESSAGE_BYTES,
                        "MCP server sent a message over the size limit that is no response; dropped"
                    );
                }
                Read::Eof => return None,
                Read::Io(e) => {
                    tracing::warn!(error = %e, "reading from the MCP server failed");
                    return None;
                }
            }
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.shutdown()
    }
}

/// One line as a message; a response that does not decode becomes the error of its request.
fn decode(line: &[u8]) -> Option<ServerJsonRpcMessage> {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xef\xbb\xbf").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    let e = match serde_json::from_slice::<ServerJsonRpcMessage>(line) {
        Ok(message) => return Some(message),
        Err(e) => e,
    };
    let mut envelope = Envelope::default();
    envelope.feed(line);
    match envelope.response_id() {
        Some(id) => {
            tracing::warn!(%id, error = %e, "MCP server sent a response that does not decode; failing its request");
            Some(limit_error(
                id,
                Limit::Undecodable,
                format!("the server's response could not be decoded: {e}"),
            ))
        }
        None => {
            tracing::debug!(error = %e, "ignoring an undecodable line from the MCP server");
            None
        }
    }
}

/// What one read gave.
enum Read {
    /// A whole line, newline included.
    Line(Vec<u8>),
    /// A line over the cap; the id of the response it carried, if any.
    Oversized(Option<RequestId>),
    Eof,
    Io(std::io::Error),
}

/// Reads lines of at most `max` bytes. Cancellation-safe (`receive` is polled in a
/// `select!`): a partial line and the scan of an oversized one live in the struct, and
/// bytes are consumed from the buffer only together with their processing.
struct LineReader<R> {
    read: BufReader<R>,
    line: Vec<u8>,
    max: usize,
    /// Scanning an oversized line; `reported` once its error was returned.
    oversized: Option<(Envelope, bool)>,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    fn new(read: R, max: usize) -> Self {
        LineReader {
            read: BufReader::with_capacity(64 << 10, read),
            line: Vec::new(),
            max,
            oversized: None,
        }
    }

    async fn next(&mut self) -> Read {
        loop {
            let available = match self.read.fill_buf().await {
                Ok(bytes) => bytes,
                Err(e) => return Read::Io(e),
            };
            if available.is_empty() {
                return match self.oversized.take() {
                    Some((envelope, false)) => Read::Oversized(envelope.response_id()),
                    _ => Read::Eof,
                };
            }
            let newline = available.iter().position(|&b| b == b'\n');
            let take = newline.map_or(available.len(), |at| at + 1);
            let chunk = &available[..take];
            if let Some((envelope, reported)) = &mut self.oversized {
                // The message ends at its closing brace even with no newline after it (a
                // server that then waits): the call is failed there, not at its timeout.
                let end = envelope.feed_until_end(chunk);
                let take = end.unwrap_or(take);
                let done = newline.is_some() || end.is_some();
                // Report as soon as the id of a response is known, or at the end of the line.
                let report = !*reported && (done || envelope.is_known_response());
                let id = envelope.response_id();
                *reported |= report;
                self.read.consume(take);
                if done {
                    self.oversized = None;
                }
                if report {
                    return Read::Oversized(id);
                }
                continue;
            }
            if self.line.len() + take > self.max {
                let mut envelope = Envelope::default();
                envelope.feed(&self.line);
                let end = envelope.feed_until_end(chunk);
                self.line = Vec::new();
                self.read.consume(end.unwrap_or(take));
                let id = envelope.response_id();
                if newline.is_some() || end.is_some() {
                    return Read::Oversized(id);
                }
                let known = envelope.is_known_response();
                self.oversized = Some((envelope, known));
                if known {
                    return Read::Oversized(id);
                }
                continue;
            }
            self.line.extend_from_slice(chunk);
            self.read.consume(take);
            if newline.is_some() {
                return Read::Line(std::mem::take(&mut self.line));
            }
        }
    }
}

/// The top level of one JSON-RPC message, read byte by byte in constant memory: its `id` and
/// whether it has `result`/`error` (a response) or `method` (a request or notification).
/// Nesting is only counted, so neither depth nor length matters.
#[derive(Default)]
pub(crate) struct Envelope {
    depth: u32,
    in_string: bool,
    escaped: bool,
    /// At depth 1 the next string is a key.
    expect_key: bool,
    /// The string being read, when it matters (a top-level key or the id), capped.
    text: Vec<u8>,
    key: Vec<u8>,
    /// Inside the value of the top-level `id` (a number being read, or about to start).
    in_id: bool,
    number: Vec<u8>,
    id: Option<RequestId>,
    response: bool,
    method: bool,
}

/// Longer keys and ids are not ours to find.
const ENVELOPE_TEXT_CAP: usize = 256;

impl Envelope {
    pub(crate) fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.byte(b);
        }
    }

    /// Feeds `bytes` up to the end of the top-level value; the count fed (with the line end
    /// right after it) if it ended there.
    pub(crate) fn feed_until_end(&mut self, bytes: &[u8]) -> Option<usize> {
        for (i, &b) in bytes.iter().enumerate() {
            let (depth, in_string) = (self.depth, self.in_string);
            self.byte(b);
            if !in_string && depth == 1 && self.depth == 0 {
                // The line's own end, when it follows, goes with it.
                let rest = &bytes[i + 1..];
                let eol = rest
                    .iter()
                    .take_while(|&&c| matches!(c, b'\r' | b'\n'))
                    .count();
                return Some(i + 1 + eol);
            }
        }
        None
    }

    /// The id, if this is a response (has `result` or `error`, no `method`).
    pub(crate) fn response_id(&self) -> Option<RequestId> {
        (self.response && !self.method).then(|| self.id.clone())?
    }

    /// Id and `result`/`error` both seen: a response, whatever follows.
    fn is_known_response(&self) -> bool {
        self.response && !self.method && self.id.is_some()
    }

    fn byte(&mut self, b: u8) {
        if self.in_string {
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = false;
                self.end_string();
                return;
            }
            if self.depth == 1 && self.text.len() < ENVELOPE_TEXT_CAP + 1 {
                self.text.push(b);
            }
            return;
        }
        if self.in_id && self.depth == 1 {
            if b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E') {
                if self.number.len() <= ENVELOPE_TEXT_CAP {
                    self.number.push(b);
                }
                return;
            }
            if !self.number.is_empty() {
                self.id = serde_json::from_slice(&self.number).ok();
                self.number.clear();
                self.in_id = false;
            }
        }
        match b {
            b'"' => {
                self.in_string = true;
                self.text.clear();
            }
            b'{' | b'[' => {
                self.depth = self.depth.saturating_add(1);
                self.expect_key = self.depth == 1 && b == b'{';
                if self.depth > 1 {
                    self.in_id = false;
                }
            }
            b'}' | b']' => self.depth = self.depth.saturating_sub(1),
            b':' if self.depth == 1 => {
                self.expect_key = false;
                self.in_id = self.key == b"id";
                match self.key.as_slice() {
                    b"result" | b"error" => self.response = true,
                    b"method" => self.method = true,
                    _ => {}
                }
            }
            b',' if self.depth == 1 => {
                self.expect_key = true;
                self.in_id = false;
            }
            _ => {}
        }
    }

    fn end_string(&mut self) {
        if self.depth != 1 {
            return;
        }
        if self.expect_key {
            self.key = std::mem::take(&mut self.text);
        } else if self.in_id && self.text.len() <= ENVELOPE_TEXT_CAP {
            let mut quoted = Vec::with_capacity(self.text.len() + 2);
            quoted.push(b'"');
            quoted.extend_from_slice(&self.text);
            quoted.push(b'"');
            self.id = serde_json::from_slice(&quoted).ok();
            self.in_id = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(text: &str) -> Option<RequestId> {
        let mut e = Envelope::default();
        // Byte by byte and whole must agree.
        for b in text.as_bytes() {
            e.feed(std::slice::from_ref(b));
        }
        let mut whole = Envelope::default();
        whole.feed(text.as_bytes());
        assert_eq!(e.response_id(), whole.response_id(), "{text}");
        whole.response_id()
    }

    #[test]
    fn the_envelope_finds_a_responses_id_wherever_it_is() {
        let deep = format!("{}{}", "[".repeat(300), "]".repeat(300));
        let cases = [
            (r#"{"jsonrpc":"2.0","id":7,"result":{"id":99}}"#.to_owned(), Some(RequestId::Number(7))),
            (format!(r#"{{"result":{{"a":{deep},"id":3}},"jsonrpc":"2.0","id":12}}"#), Some(RequestId::Number(12))),
            (r#" { "id" : "a\"b" , "error" : {"code":1} } "#.to_owned(), Some(RequestId::String("a\"b".into()))),
            (r#"{"jsonrpc":"2.0","id":-4,"result":"x"}"#.to_owned(), Some(RequestId::Number(-4))),
            // A request or notification from the server is not a response.
            (r#"{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{"result":1}}"#.to_owned(), None),
            (r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"id":1}}"#.to_owned(), None),
            // Keys inside strings and nested objects do not count.
            (r#"{"result":{"text":"\"id\":5"},"x":{"id":5}}"#.to_owned(), None),
            ("not json at all".to_owned(), None),
        ];
        for (text, want) in cases {
            assert_eq!(scan(&text), want, "{text}");
        }
    }

    #[test]
    fn only_this_process_marks_are_limits() {
        let ServerJsonRpcMessage::Error(e) =
            limit_error(RequestId::Number(1), Limit::TooLarge, "big".into())
        else {
            panic!("not an error");
        };
        assert_eq!(limit_of(&e.error), Some(Limit::TooLarge));
        let forged = ErrorData::new(
            LIMIT_CODE,
            "forged",
            Some(json!({ MARK_KEY: { "mark": "0123", "limit": "too_large" } })),
        );
        assert_eq!(limit_of(&forged), None);
    }

    #[tokio::test]
    async fn an_oversized_line_is_reported_once_and_the_next_line_read() {
        let mut input =
            br#"{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":""#.to_vec();
        input.extend(std::iter::repeat_n(b'x', 5000));
        input.extend_from_slice(b"\"}]}}\n");
        input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{}}\n");
        let mut reader = LineReader::new(&input[..], 1000);
        assert!(matches!(
            reader.next().await,
            Read::Oversized(Some(RequestId::Number(5)))
        ));
        assert!(matches!(reader.next().await, Read::Line(l) if l.ends_with(b"{}}\n")));
        assert!(matches!(reader.next().await, Read::Eof));
    }

    #[tokio::test]
    async fn an_oversized_message_ends_at_its_closing_brace_without_a_newline() {
        let mut input = br#"{"jsonrpc":"2.0","result":{"text":""#.to_vec();
        input.extend(std::iter::repeat_n(b'x', 5000));
        input.extend_from_slice(br#""},"id":8}{"jsonrpc":"2.0","id":9,"result":{}}"#);
        input.push(b'\n');
        let mut reader = LineReader::new(&input[..], 1000);
        assert!(matches!(
            reader.next().await,
            Read::Oversized(Some(RequestId::Number(8)))
        ));
        assert!(
            matches!(reader.next().await, Read::Line(l) if l.starts_with(br#"{"jsonrpc":"2.0","id":9"#))
        );
    }
}
