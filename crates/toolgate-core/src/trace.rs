//! The caller's W3C Trace Context (`traceparent`, `tracestate`), carried with a call so the
//! upstream it reaches joins the caller's trace.
//!
//! It arrives as HTTP headers (`/v1`, `/mcp`) or in a request's `params._meta` (MCP, SEP-414;
//! `_meta` wins over the headers of the POST that carried it) and leaves in the `_meta` of the
//! request toolgate sends a federated MCP server. Only well-formed values cross: a malformed
//! `traceparent` drops the context, a malformed `tracestate` is dropped alone (W3C Trace
//! Context §3.3.1 and §3.3.2). `baggage` is not carried: it is application data the caller
//! chose to send toolgate, not the upstream.

use serde_json::{Map, Value};

/// A validated W3C trace context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceContext {
    traceparent: String,
    tracestate: Option<String>,
}

/// The `_meta` key and HTTP header of the trace parent.
pub const TRACEPARENT: &str = "traceparent";
/// The `_meta` key and HTTP header of the vendor trace state.
pub const TRACESTATE: &str = "tracestate";

/// The longest `tracestate` carried (W3C: 32 list members; vendors are told to keep the
/// whole header under 512 characters, and a gateway need not carry more).
const MAX_TRACESTATE: usize = 512;
/// `00-` + 32 + `-` + 16 + `-` + 2.
const VERSION_00_LEN: usize = 55;

impl TraceContext {
    /// The context when `traceparent` is well formed; `tracestate` is kept only when it is
    /// too. A future version's extra fields after the first four are cut off, as §3.2.4
    /// tells a version-00 parser to do.
    pub fn parse(traceparent: &str, tracestate: Option<&str>) -> Option<Self> {
        let traceparent = parse_traceparent(traceparent.trim())?;
        let tracestate = tracestate
            .map(str::trim)
            .filter(|s| valid_tracestate(s))
            .map(str::to_owned);
        Some(TraceContext {
            traceparent,
            tracestate,
        })
    }

    /// The context in a request's `_meta`, if it holds a well-formed one.
    pub fn from_meta(meta: &Map<String, Value>) -> Option<Self> {
        let parent = meta.get(TRACEPARENT)?.as_str()?;
        TraceContext::parse(parent, meta.get(TRACESTATE).and_then(Value::as_str))
    }

    /// Writes the context into an outgoing request's `_meta`, replacing any there.
    pub fn write_meta(&self, meta: &mut Map<String, Value>) {
        meta.insert(TRACEPARENT.to_owned(), self.traceparent.clone().into());
        match &self.tracestate {
            Some(state) => {
                meta.insert(TRACESTATE.to_owned(), state.clone().into());
            }
            None => {
                meta.remove(TRACESTATE);
            }
        }
    }

    /// The whole `traceparent` value.
    pub fn traceparent(&self) -> &str {
        &self.traceparent
    }

    /// The `tracestate` value, when the caller sent a well-formed one.
    pub fn tracestate(&self) -> Option<&str> {
        self.tracestate.as_deref()
    }

    /// The 32-hex-digit trace id.
    pub fn trace_id(&self) -> &str {
        &self.traceparent[3..35]
    }

    /// The 16-hex-digit id of the caller's span.
    pub fn parent_id(&self) -> &str {
        &self.traceparent[36..52]
    }
}

/// The version-00 form of `value`: `VV-<trace id>-<parent id>-FF`, lower-case hex, neither
/// id all zeros, version `ff` refused.
fn parse_traceparent(value: &str) -> Option<String> {
    if value.len() < VERSION_00_LEN || !value.is_ascii() {
        return None;
    }
    let bytes = value.as_bytes();
    let version = &value[0..2];
    if !is_lower_hex(version) || version == "ff" {
        return None;
    }
    // Version 00 is exactly 55 characters; a later version may add fields after a dash.
    if version == "00" && value.len() != VERSION_00_LEN {
        return None;
    }
    if value.len() > VERSION_00_LEN && bytes[VERSION_00_LEN] != b'-' {
        return None;
    }
    let (trace_id, parent_id, flags) = (&value[3..35], &value[36..52], &value[53..55]);
    let dashes = [2, 35, 52].iter().all(|&i| bytes[i] == b'-');
    let ok = dashes
        && is_lower_hex(trace_id)
        && is_lower_hex(parent_id)
        && is_lower_hex(flags)
        && !all_zero(trace_id)
        && !all_zero(parent_id);
    ok.then(|| value[..VERSION_00_LEN].to_owned())
}

fn is_lower_hex(s: &str) -> bool {
    s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

fn all_zero(s: &str) -> bool {
    s.bytes().all(|b| b == b'0')
}

/// A list of at most 32 `key=value` members of the characters §3.3.1 allows, under
/// [`MAX_TRACESTATE`] in all.
fn valid_tracestate(value: &str) -> bool {
    if value.is_empty() || value.len() > MAX_TRACESTATE {
        return false;
    }
    let members: Vec<&str> = value
        .split(',')
        .map(|m| m.trim_matches([' ', '\t']))
        .filter(|m| !m.is_empty())
        .collect();
    if members.is_empty() || members.len() > 32 {
        return false;
    }
    members.iter().all(|member| {
        let Some((key, val)) = member.split_once('=') else {
            return false;
        };
        let key_ok = !key.is_empty()
            && key.len() <= 256
            && key
                .bytes()
                .all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-' | b'*' | b'/' | b'@'));
        // Printable ASCII but `,` and `=`; no trailing space.
        let val_ok = !val.is_empty()
            && val.len() <= 256
            && !val.ends_with(' ')
            && val
                .bytes()
                .all(|b| (0x20..=0x7e).contains(&b) && b != b',' && b != b'=');
        key_ok && val_ok
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const PARENT: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

    #[test]
    fn a_well_formed_context_is_kept_whole() {
        let t =
            TraceContext::parse(PARENT, Some("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE")).unwrap();
        assert_eq!(t.traceparent(), PARENT);
        assert_eq!(t.trace_id(), "0af7651916cd43dd8448eb211c80319c");
        assert_eq!(t.parent_id(), "b7ad6b7169203331");
        assert_eq!(
            t.tracestate(),
            Some("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE")
        );
    }

    #[test]
    fn malformed_parents_are_refused() {
        let bad = [
            "",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331",
            "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01",
            "00-00000000000000000000000000000000-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
            "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-extra",
            "00_0af7651916cd43dd8448eb211c80319c_b7ad6b7169203331_01",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b716920333\u{e9}-0",
            "01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01x",
        ];
        for value in bad {
            assert_eq!(TraceContext::parse(value, None), None, "{value:?}");
        }
    }

    #[test]
    fn a_later_version_is_read_as_version_00_fields() {
        let t = TraceContext::parse(
            "cc-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-what-the-future-holds",
            None,
        )
        .unwrap();
        assert_eq!(
            t.traceparent(),
            "cc-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
        );
    }

    #[test]
    fn a_malformed_state_is_dropped_alone() {
        let long = format!("k={}", "v".repeat(600));
        for state in [
            "",
            "novalue",
            "UPPER=1",
            "a=b\nc=d",
            "a=,b=1",
            long.as_str(),
        ] {
            let t = TraceContext::parse(PARENT, Some(state)).unwrap();
            assert_eq!(t.tracestate(), None, "{state:?}");
        }
    }

    #[test]
    fn meta_round_trip_replaces_what_was_there() {
        let meta = json!({"traceparent": PARENT, "tracestate": "a=1", "other": 1});
        let t = TraceContext::from_meta(meta.as_object().unwrap()).unwrap();
        let mut out = json!({"traceparent": "stale", "tracestate": "stale=1", "keep": true});
        let out = out.as_object_mut().unwrap();
        t.write_meta(out);
        assert_eq!(
            Value::Object(out.clone()),
            json!({"traceparent": PARENT, "tracestate": "a=1", "keep": true})
        );
        let no_state = TraceContext::parse(PARENT, None).unwrap();
        no_state.write_meta(out);
        assert_eq!(out.get(TRACESTATE), None);
        assert_eq!(TraceContext::from_meta(&Map::new()), None);
        assert_eq!(
            TraceContext::from_meta(json!({"traceparent": 7}).as_object().unwrap()),
            None
        );
    }
}
