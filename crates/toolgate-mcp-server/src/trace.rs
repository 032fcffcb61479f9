//! The caller's W3C trace context as every front end of `toolgate serve` reads it: the
//! `traceparent` / `tracestate` headers of the HTTP request, or for MCP the request's
//! `params._meta` (SEP-414), which wins over the headers of the POST that carried it — a
//! client may multiplex requests of several traces over one connection.

use http::HeaderMap;
use serde_json::{Map, Value};
use toolgate_core::TraceContext;
use toolgate_core::trace::{TRACEPARENT, TRACESTATE};

/// The context in `headers`, when their `traceparent` is well formed.
pub fn from_headers(headers: &HeaderMap) -> Option<TraceContext> {
    // Two traceparent headers are ambiguous: take neither. tracestate may be split.
    let mut parents = headers.get_all(TRACEPARENT).iter();
    let parent = parents.next()?.to_str().ok()?;
    if parents.next().is_some() {
        return None;
    }
    let states: Vec<&str> = headers
        .get_all(TRACESTATE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    let state = (!states.is_empty()).then(|| states.join(","));
    TraceContext::parse(parent, state.as_deref())
}

/// An MCP request's context: the first of its `_meta` objects (wherever the parser left
/// it) holding one, else its HTTP request's.
pub fn for_mcp<'a>(
    metas: impl IntoIterator<Item = &'a Map<String, Value>>,
    headers: Option<&HeaderMap>,
) -> Option<TraceContext> {
    metas
        .into_iter()
        .find_map(TraceContext::from_meta)
        .or_else(|| headers.and_then(from_headers))
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;
    use serde_json::json;

    const A: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    const B: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn headers_give_the_context_and_split_state_is_joined() {
        let mut h = HeaderMap::new();
        h.insert(TRACEPARENT, HeaderValue::from_static(A));
        h.append(TRACESTATE, HeaderValue::from_static("a=1"));
        h.append(TRACESTATE, HeaderValue::from_static("b=2"));
        let t = from_headers(&h).unwrap();
        assert_eq!((t.traceparent(), t.tracestate()), (A, Some("a=1,b=2")));
        h.append(TRACEPARENT, HeaderValue::from_static(B));
        assert_eq!(from_headers(&h), None, "two parents are ambiguous");
    }

    #[test]
    fn meta_wins_over_headers() {
        let mut h = HeaderMap::new();
        h.insert(TRACEPARENT, HeaderValue::from_static(A));
        let meta = json!({"traceparent": B});
        let empty = Map::new();
        let from_meta = for_mcp([&empty, meta.as_object().unwrap()], Some(&h)).unwrap();
        assert_eq!(from_meta.traceparent(), B);
        let from_head = for_mcp([&empty], Some(&h)).unwrap();
        assert_eq!(from_head.traceparent(), A);
        assert_eq!(for_mcp([&empty], None), None);
    }
}
