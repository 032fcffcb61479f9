//! Idempotency (R-EXE-3): a write call carrying an idempotency key acts at most once. The
//! key comes from the request or from an `idempotency_key` argument. A repeat with the same
//! key and the same arguments replays the recorded outcome without acting (and without asking
//! a human again); the same key with other arguments is refused. Outcomes that did not act
//! (approval pending, cancelled, timed out) are not recorded, so a retry can still act.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Value, json};
use toolgate_protocol::{CallError, ErrorCode, Risk, ToolOutput};
use toolgate_store::approvals::canonical_hash;
use toolgate_store::idempotency::IdempotencyStore;

use crate::call::{Call, Outcome};
use crate::layer::{Layer, Next};

pub struct IdempotencyLayer {
    store: Arc<IdempotencyStore>,
}

impl IdempotencyLayer {
    pub fn new(store: Arc<IdempotencyStore>) -> Self {
        IdempotencyLayer { store }
    }
}

fn key_of(call: &Call, args: &Value) -> Option<String> {
    call.request
        .idempotency_key
        .clone()
        .or_else(|| {
            args.get("idempotency_key")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .filter(|k| !k.is_empty())
}

fn without_key(args: &Value) -> Value {
    let mut a = args.clone();
    if let Some(obj) = a.as_object_mut() {
        obj.remove("idempotency_key");
    }
    a
}

fn record(outcome: &Outcome) -> Option<Value> {
    match outcome {
        Ok(out) => Some(json!({"ok": true, "output": out})),
        Err(e) if e.code == ErrorCode::ExecutionFailed => Some(json!({"ok": false, "error": e})),
        Err(_) => None,
    }
}

fn replay(stored: &Value) -> Outcome {
    let parsed = if stored["ok"] == Value::Bool(true) {
        serde_json::from_value::<ToolOutput>(stored["output"].clone()).map(Ok)
    } else {
        serde_json::from_value::<CallError>(stored["error"].clone()).map(Err)
    };
    parsed.unwrap_or_else(|e| {
        Err(CallError::new(
            ErrorCode::ExecutionFailed,
            format!("stored idempotent outcome is unreadable: {e}"),
        ))
    })
}

#[async_trait]
impl Layer for IdempotencyLayer {
    fn name(&self) -> &'static str {
        "idempotency"
    }

    async fn handle(&self, call: &mut Call, next: Next<'_>) -> Outcome {
        let risk = call.entry()?.spec().risk;
        let args = call.args()?;
        let Some(key) = key_of(call, args).filter(|_| risk != Risk::Read) else {
            return next.run(call).await;
        };
        let hash = canonical_hash(&without_key(args));
        let (principal, tool) = (call.request.principal.clone(), call.request.tool.clone());
        let unavailable = |e: toolgate_store::StoreError| {
            CallError::new(ErrorCode::Unavailable, format!("idempotency store: {e}"))
        };
        if let Some(prior) = self
            .store
            .get(&principal, &tool, &key)
            .map_err(unavailable)?
        {
            if prior.args_hash != hash {
                return Err(CallError::new(
                    ErrorCode::InvalidArguments,
                    format!("idempotency key `{key}` was already used for `{tool}` with different arguments"),
                )
                .with_hint("use a new key for a different action"));
            }
            return replay(&prior.outcome);
        }
        let outcome = next.run(call).await;
        if let Some(rec) = record(&outcome) {
            // First writer wins: a concurrent duplicate that acted too is reported, and the
            // outcome both callers see is the recorded one.
            let stored = self
                .store
                .put(&principal, &tool, &key, &hash, &rec)
                .map_err(unavailable)?;
            if stored.outcome != rec {
                tracing::warn!(%tool, %key, "two calls with one idempotency key ran concurrently");
                return replay(&stored.outcome);
            }
        }
        outcome
    }
}
