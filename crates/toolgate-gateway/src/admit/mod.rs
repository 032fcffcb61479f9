//! Admission: the identifiers of a call must be storable as they are. PostgreSQL's `text`
//! cannot hold a NUL, so a session id, tool name, principal, role, call id or idempotency
//! key carrying one would fail where it is written — before this layer, it failed the audit
//! batch it landed in, and other callers' records with it. Such a call is refused here with
//! `invalid_arguments`, inside the audit layer, so the refusal is recorded; the offending
//! fields are first rewritten with each NUL escaped (`\u0000`, as JSON spells it), so the
//! record says what was sent and every store can hold it.
//!
//! Arguments are not checked here: they reach the log as JSON, whose escapes hold any
//! character.

use async_trait::async_trait;
use toolgate_protocol::{CallError, ErrorCode};

use crate::call::{Call, Outcome};
use crate::layer::{Layer, Next};

/// What stands for a NUL in an escaped field.
const ESCAPED_NUL: &str = "\\u0000";

#[derive(Debug, Default)]
pub struct AdmitLayer;

impl AdmitLayer {
    pub fn new() -> Self {
        AdmitLayer
    }
}

#[async_trait]
impl Layer for AdmitLayer {
    fn name(&self) -> &'static str {
        "admit"
    }

    async fn handle(&self, call: &mut Call, next: Next<'_>) -> Outcome {
        let refused = escape_all(call);
        if refused.is_empty() {
            return next.run(call).await;
        }
        Err(CallError::new(
            ErrorCode::InvalidArguments,
            format!(
                "the {} of this call contain{} a NUL character, which cannot be stored or \
                 audited as sent; the call was refused and recorded with it escaped",
                refused.join(", "),
                if refused.len() == 1 { "s" } else { "" }
            ),
        )
        .with_retryable(false)
        .with_hint("send identifiers without NUL (U+0000) characters"))
    }
}

/// Escapes every NUL in the call's identifiers; returns the names of the fields that had one.
fn escape_all(call: &mut Call) -> Vec<&'static str> {
    let r = &mut call.request;
    let mut refused = Vec::new();
    let mut field = |name: &'static str, value: &mut String| {
        if escape(value) {
            refused.push(name);
        }
    };
    field("tool name", &mut r.tool);
    field("session id", r.session_id.as_mut_string());
    field("principal", r.principal.as_mut_string());
    field("role", r.role.as_mut_string());
    field("call id", &mut r.call_id);
    if let Some(key) = r.idempotency_key.as_mut() {
        field("idempotency key", key);
    }
    if let Some(identity) = r.identity.as_mut() {
        let identity = std::sync::Arc::make_mut(identity);
        field("issuer", &mut identity.issuer);
        field("subject", &mut identity.subject);
    }
    refused
}

/// Rewrites each NUL of `value` as `\u0000`; whether there was one.
fn escape(value: &mut String) -> bool {
    if !value.contains('\0') {
        return false;
    }
    *value = value.replace('\0', ESCAPED_NUL);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_only_what_needs_it() {
        let mut s = "se\0ss\0".to_owned();
        assert!(escape(&mut s));
        assert_eq!(s, "se\\u0000ss\\u0000");
        let mut plain = "plain".to_owned();
        assert!(!escape(&mut plain));
        assert_eq!(plain, "plain");
    }
}
