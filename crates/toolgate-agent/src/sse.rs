//! Server-sent events as the model APIs send them: `event:` and `data:` lines, an empty line
//! ends an event, `:` lines are comments. Bytes arrive in arbitrary chunks; lines may end in
//! `\n` or `\r\n`; a multi-line `data` is joined with `\n`.

use crate::client::ModelError;

/// One event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    pub event: Option<String>,
    pub data: String,
}

/// Incremental parser: feed bytes, take the complete events.
#[derive(Debug, Default)]
pub struct SseParser {
    buf: Vec<u8>,
    event: Option<String>,
    data: Vec<String>,
}

impl SseParser {
    /// Appends `chunk` and returns every event it completes.
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        self.buf.extend_from_slice(chunk);
        let mut out = Vec::new();
        while let Some(pos) = self.buf.iter().position(|b| *b == b'\n') {
            let mut line: Vec<u8> = self.buf.drain(..=pos).collect();
            line.pop();
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            let line = String::from_utf8_lossy(&line).into_owned();
            if let Some(ev) = self.line(&line) {
                out.push(ev);
            }
        }
        out
    }

    /// The event left when the body ends without a final empty line.
    pub fn finish(&mut self) -> Option<SseEvent> {
        if !self.buf.is_empty() {
            let rest = String::from_utf8_lossy(&std::mem::take(&mut self.buf)).into_owned();
            let _ = self.line(rest.trim_end_matches('\r'));
        }
        self.dispatch()
    }

    fn line(&mut self, line: &str) -> Option<SseEvent> {
        if line.is_empty() {
            return self.dispatch();
        }
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "event" => self.event = Some(value.to_owned()),
            "data" => self.data.push(value.to_owned()),
            _ => {}
        }
        None
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        if self.data.is_empty() && self.event.is_none() {
            return None;
        }
        let ev = SseEvent {
            event: self.event.take(),
            data: std::mem::take(&mut self.data).join("\n"),
        };
        Some(ev)
    }
}

/// Reads `response` as an event stream, calling `on_event` for each event until it returns
/// `false` or the body ends.
pub async fn read_events(
    mut response: reqwest::Response,
    mut on_event: impl FnMut(SseEvent) -> Result<bool, ModelError>,
) -> Result<(), ModelError> {
    let mut parser = SseParser::default();
    loop {
        let chunk = response
            .chunk()
            .await
            .map_err(|e| ModelError::Transport(format!("the stream broke off: {e}")))?;
        let Some(chunk) = chunk else { break };
        for ev in parser.feed(&chunk) {
            if !on_event(ev)? {
                return Ok(());
            }
        }
    }
    if let Some(ev) = parser.finish() {
        on_event(ev)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_split_across_chunks_and_crlf() {
        let mut p = SseParser::default();
        let mut got = p.feed(b"event: a\r\ndata: {\"x\"");
        assert!(got.is_empty());
        got.extend(p.feed(b":1}\r\n\r\n: comment\n\ndata: one\ndata: two\n\ndata: [DONE]"));
        got.extend(p.finish());
        assert_eq!(
            got,
            vec![
                SseEvent {
                    event: Some("a".into()),
                    data: "{\"x\":1}".into()
                },
                SseEvent {
                    event: None,
                    data: "one\ntwo".into()
                },
                SseEvent {
                    event: None,
                    data: "[DONE]".into()
                },
            ]
        );
    }
}
