//! The model-stream SSE parser (`toolgate_agent::sse::SseParser`) on arbitrary bytes.
//!
//! Input: one control byte, then the stream. Property: the events do not depend on how the
//! bytes are chunked — the whole stream at once, in chunks of sizes drawn from the control
//! byte, and one byte at a time all give the same events (the network decides the chunking,
//! so a parser that depended on it would drop or merge events at random).

use toolgate_agent::sse::{SseEvent, SseParser};

fn parse<'a>(chunks: impl Iterator<Item = &'a [u8]>) -> Vec<SseEvent> {
    let mut parser = SseParser::default();
    let mut events = Vec::new();
    for chunk in chunks {
        events.extend(parser.feed(chunk));
    }
    events.extend(parser.finish());
    events
}

/// One input: see the module doc for the properties checked.
pub fn run(data: &[u8]) {
    let Some((&ctl, body)) = data.split_first() else {
        return;
    };
    let whole = parse(std::iter::once(body));
    let size = usize::from(ctl % 17) + 1;
    let chunked = parse(body.chunks(size));
    assert_eq!(whole, chunked, "chunks of {size} bytes changed the events");
    let bytewise = parse(body.chunks(1));
    assert_eq!(whole, bytewise, "byte-at-a-time feeding changed the events");
    for ev in &whole {
        assert!(
            !ev.data.contains('\r') || body.contains(&b'\r'),
            "a carriage return appeared from nowhere"
        );
    }
}
