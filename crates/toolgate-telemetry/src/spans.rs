//! The tracer, and the bridge between [`TraceContext`] — what arrives in `traceparent`
//! headers and MCP `_meta` and leaves in them — and the spans toolgate starts.
//!
//! With tracing off there is no tracer: [`start`] returns `None` before anything is built,
//! so a call pays one atomic load.

use std::borrow::Cow;
use std::str::FromStr;
use std::sync::OnceLock;

use opentelemetry::trace::{
    Span as _, SpanBuilder, SpanContext, SpanId, SpanKind, Status, TraceContextExt, TraceFlags,
    TraceId, TraceState, Tracer as _,
};
use opentelemetry::{Context, KeyValue};
use opentelemetry_sdk::trace::SdkTracer;
/// A span toolgate started (the SDK's).
pub use opentelemetry_sdk::trace::Span;
use toolgate_core::TraceContext;

use crate::names;

static TRACER: OnceLock<SdkTracer> = OnceLock::new();

/// This process's tracer, once [`crate::install`] set one up with tracing on.
pub fn tracer() -> Option<&'static SdkTracer> {
    TRACER.get()
}

pub(crate) fn set_tracer(tracer: SdkTracer) {
    let _ = TRACER.set(tracer);
}

/// Starts a span under `parent` (a remote caller's context, or a span of toolgate's own
/// passed on as a [`TraceContext`]); a root span without one. `None` when tracing is off —
/// a per-call caller checks [`tracer`] first, so it builds no arguments then.
pub fn start(
    name: impl Into<Cow<'static, str>>,
    kind: SpanKind,
    parent: Option<&TraceContext>,
    attributes: Vec<KeyValue>,
) -> Option<Span> {
    let tracer = tracer()?;
    let builder = SpanBuilder::from_name(name)
        .with_kind(kind)
        .with_attributes(attributes);
    Some(tracer.build_with_context(builder, &parent_context(parent)))
}

/// Marks `span` failed with `error_type` (a closed error code, or a protocol's error
/// class): `error.type` and an error status naming only that — never a message, which may
/// quote arguments.
pub fn fail(span: &mut Span, error_type: &str) {
    span.set_attribute(KeyValue::new(names::ERROR_TYPE, error_type.to_owned()));
    span.set_status(Status::error(error_type.to_owned()));
}

/// The context a span started under `trace` hangs from.
pub fn parent_context(trace: Option<&TraceContext>) -> Context {
    match trace.and_then(span_context) {
        Some(sc) => Context::new().with_remote_span_context(sc),
        None => Context::new(),
    }
}

/// `trace` as OpenTelemetry's span context (remote).
pub fn span_context(trace: &TraceContext) -> Option<SpanContext> {
    let trace_id = TraceId::from_hex(trace.trace_id()).ok()?;
    let span_id = SpanId::from_hex(trace.parent_id()).ok()?;
    let flags = u8::from_str_radix(trace.traceparent().get(53..55)?, 16).ok()?;
    let state = trace
        .tracestate()
        .and_then(|s| TraceState::from_str(s).ok())
        .unwrap_or_default();
    Some(SpanContext::new(
        trace_id,
        span_id,
        TraceFlags::new(flags),
        true,
        state,
    ))
}

/// What the next hop receives for `span`: its W3C trace context.
pub fn trace_context(span: &SpanContext) -> Option<TraceContext> {
    if !span.is_valid() {
        return None;
    }
    let parent = format!(
        "00-{}-{}-{:02x}",
        span.trace_id(),
        span.span_id(),
        span.trace_flags().to_u8()
    );
    let state = span.trace_state().header();
    TraceContext::parse(&parent, (!state.is_empty()).then_some(state.as_str()))
}

/// The context to pass on for `span` when there is one, else `fallback` (the caller's own,
/// so an upstream still joins the caller's trace with tracing off).
pub fn pass_on(span: Option<&Span>, fallback: Option<TraceContext>) -> Option<TraceContext> {
    span.and_then(|s| trace_context(s.span_context()))
        .or(fallback)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PARENT: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

    #[test]
    fn a_context_crosses_into_a_span_context_and_back_unchanged() {
        let t = TraceContext::parse(PARENT, Some("rojo=00f067aa0ba902b7")).unwrap();
        let sc = span_context(&t).unwrap();
        assert!(sc.is_remote() && sc.is_sampled());
        assert_eq!(
            format!("{}", sc.trace_id()),
            "0af7651916cd43dd8448eb211c80319c"
        );
        assert_eq!(trace_context(&sc).unwrap(), t);
        let unsampled = TraceContext::parse(
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00",
            None,
        )
        .unwrap();
        assert!(!span_context(&unsampled).unwrap().is_sampled());
        assert_eq!(trace_context(&SpanContext::empty_context()), None);
    }

    #[test]
    fn without_a_tracer_nothing_starts_and_the_callers_context_is_passed_on() {
        assert!(start("x", SpanKind::Internal, None, Vec::new()).is_none());
        let t = TraceContext::parse(PARENT, None);
        assert_eq!(pass_on(None, t.clone()), t);
    }
}
