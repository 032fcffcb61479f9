//! An operation timed into a duration histogram and, with tracing on, a span — the shape
//! shared by an MCP request answered (`toolgate_server`'s `mcp::span`), an MCP request sent
//! (`toolgate_mcp_client`'s client span) and a model request of the agent loop.
//!
//! The attributes given to [`Operation::start`] go on both the span and the histogram (keep
//! them low-cardinality); span-only ones (ids) are added with [`Operation::span_attribute`].

use std::borrow::Cow;
use std::time::Instant;

use opentelemetry::KeyValue;
use opentelemetry::metrics::Histogram;
use opentelemetry::trace::{Span as _, SpanKind};
use toolgate_core::TraceContext;

use crate::metrics::{Instruments, metrics};
use crate::{names, spans};

/// Which histogram of the [`Instruments`] an operation's duration goes to.
pub type Duration = fn(&Instruments) -> &Histogram<f64>;

pub struct Operation {
    span: Option<spans::Span>,
    started: Instant,
    attributes: Vec<KeyValue>,
    duration: Duration,
}

impl Operation {
    /// Starts timing; with tracing on, a span named `name` of `kind` under `parent`.
    pub fn start(
        name: impl FnOnce() -> Cow<'static, str>,
        kind: SpanKind,
        parent: Option<&TraceContext>,
        attributes: Vec<KeyValue>,
        duration: Duration,
    ) -> Operation {
        let span =
            spans::tracer().and_then(|_| spans::start(name(), kind, parent, attributes.clone()));
        Operation {
            span,
            started: Instant::now(),
            attributes,
            duration,
        }
    }

    /// The context the operation's own requests carry: its span's, else `fallback`.
    pub fn trace(&self, fallback: Option<TraceContext>) -> Option<TraceContext> {
        spans::pass_on(self.span.as_ref(), fallback)
    }

    /// An attribute on the span only (request ids and the like).
    pub fn span_attribute(&mut self, attribute: KeyValue) {
        if let Some(span) = self.span.as_mut() {
            span.set_attribute(attribute);
        }
    }

    /// Attributes on the span only.
    pub fn span_attributes(&mut self, attributes: Vec<KeyValue>) {
        if let Some(span) = self.span.as_mut() {
            span.set_attributes(attributes);
        }
    }

    /// The attributes the histogram is recorded with.
    pub fn attributes(&self) -> &[KeyValue] {
        &self.attributes
    }

    /// Ends the operation; `error` is its `error.type` when it failed.
    pub fn end(mut self, error: Option<&str>) {
        if let Some(e) = error {
            self.attributes
                .push(KeyValue::new(names::ERROR_TYPE, e.to_owned()));
        }
        (self.duration)(metrics()).record(self.started.elapsed().as_secs_f64(), &self.attributes);
        if let Some(mut span) = self.span.take() {
            if let Some(e) = error {
                spans::fail(&mut span, e);
            }
            span.end();
        }
    }
}
