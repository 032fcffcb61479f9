//! Idempotency (R-EXE-3): a write call carrying an idempotency key acts at most once. The
//! key comes from the request or from an `idempotency_key` argument. A repeat with the same
//! key and the same arguments replays the recorded outcome without acting (and without asking
//! a human again); the same key with other arguments is refused. Outcomes that did not act
//! (approval pending, cancelled, timed out) are not recorded, so a retry can still act.
//!
//! The recorded outcome is written to disk, so it is redacted first (R-EXE-6): the first
//! caller gets the real result; a replay gets it with secrets masked.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Value, json};
use toolgate_protocol::{CallError, ErrorCode, Risk, ToolOutput};
use toolgate_store::approvals::canonical_hash;
use toolgate_store::idempotency::{Claim, IdempotencyStore, KeyRef, Reservation};
use toolgate_store::redact::Redactor;

use crate::call::{Call, Outcome};
use crate::layer::{Layer, Next};

pub struct IdempotencyLayer {
    store: Arc<IdempotencyStore>,
    redactor: Arc<Redactor>,
}

impl IdempotencyLayer {
    pub fn new(store: Arc<IdempotencyStore>, redactor: Arc<Redactor>) -> Self {
        IdempotencyLayer { store, redactor }
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

/// The outcome as recorded, secrets masked. Only the tool's output and the error's text are
/// redacted, so the error code (under the sensitive-looking key `code`) still replays.
fn record(outcome: &Outcome, redactor: &Redactor) -> Option<Value> {
    match outcome {
        Ok(out) => {
            let out = serde_json::to_value(out).unwrap_or(Value::Null);
            Some(json!({"ok": true, "output": redactor.redact_value(&out)}))
        }
        Err(e) if e.code == ErrorCode::ExecutionFailed => {
            let mut e = e.clone();
            e.message = redactor.redact_text(&e.message);
            e.hint = e.hint.map(|h| redactor.redact_text(&h));
            e.details = e.details.map(|d| redactor.redact_value(&d));
            Some(json!({"ok": false, "error": e}))
        }
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
        let tool = call.request.tool.clone();
        let held = KeyRef::new(&call.request.principal, &tool, &key);
        let unavailable = |e: toolgate_store::StoreError| {
            CallError::new(ErrorCode::Unavailable, format!("idempotency store: {e}"))
        };
        // A duplicate arriving while the first call runs waits here for its outcome.
        let claim = tokio::select! {
            claim = self.store.claim(held, &hash) => claim.map_err(unavailable)?,
            () = call.request.cancel.cancelled() => {
                return Err(CallError::new(
                    ErrorCode::Cancelled,
                    format!("cancelled while an identical call with idempotency key `{key}` was running"),
                ));
            }
        };
        let reservation = match claim {
            Claim::Done(prior) => return replay(&prior.outcome),
            Claim::OtherArguments(_) => {
                return Err(CallError::new(
                    ErrorCode::InvalidArguments,
                    format!("idempotency key `{key}` was already used for `{tool}` with different arguments"),
                )
                .with_hint("use a new key for a different action"));
            }
            Claim::Reserved(r) => r,
        };
        let mut held = ReleaseOnDrop {
            store: Arc::clone(&self.store),
            reservation: Some(reservation.clone()),
        };
        let outcome = run_renewing(&self.store, &reservation, next.run(call)).await;
        held.reservation = None;
        match record(&outcome, &self.redactor) {
            Some(rec) => {
                let stored = self
                    .store
                    .complete(&reservation, &rec)
                    .await
                    .map_err(unavailable)?;
                if stored.outcome != rec {
                    // Taken over after a lapsed lease and completed by the other call first.
                    tracing::warn!(%tool, %key, "two calls with one idempotency key ran");
                    return replay(&stored.outcome);
                }
            }
            // It did not act (approval pending, cancelled, timed out): the next call may.
            None => {
                if let Err(e) = self.store.release(&reservation).await {
                    tracing::warn!(%tool, %key, error = %e, "could not release an idempotency key; it lapses with its lease");
                }
            }
        }
        outcome
    }
}

/// Lets a held key go when the call holding it is dropped mid-run (its caller went away), so
/// a waiting duplicate proceeds at once rather than after the lease.
struct ReleaseOnDrop {
    store: Arc<IdempotencyStore>,
    reservation: Option<Reservation>,
}

impl Drop for ReleaseOnDrop {
    fn drop(&mut self) {
        let Some(reservation) = self.reservation.take() else {
            return;
        };
        let store = Arc::clone(&self.store);
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                if let Err(e) = store.release(&reservation).await {
                    tracing::warn!(key = %reservation.key.key, error = %e, "could not release an idempotency key; it lapses with its lease");
                }
            });
        }
    }
}

/// Runs `call`, renewing the key's lease while it runs so no other caller takes it over.
async fn run_renewing(
    store: &IdempotencyStore,
    reservation: &Reservation,
    call: impl std::future::Future<Output = Outcome>,
) -> Outcome {
    tokio::pin!(call);
    let mut renew = tokio::time::interval(store.renew_every());
    renew.tick().await;
    loop {
        tokio::select! {
            outcome = &mut call => return outcome,
            _ = renew.tick() => {
                match store.renew(reservation).await {
                    Ok(true) => {}
                    Ok(false) => tracing::warn!(key = %reservation.key.key, "an idempotency key was taken over while its call ran"),
                    Err(e) => tracing::warn!(key = %reservation.key.key, error = %e, "could not renew an idempotency key's lease"),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layer::Layer;
    use crate::testing::{call_for, echo_tool};
    use toolgate_protocol::Risk;

    const SECRET: &str = "sk-proj-Abcdefghijklmnopqrstuvwxyz012345";

    /// The inner pipeline: the tool failed, naming a secret.
    struct FailsWithSecret;

    #[async_trait]
    impl Layer for FailsWithSecret {
        fn name(&self) -> &'static str {
            "fails"
        }
        async fn handle(&self, _call: &mut Call, _next: Next<'_>) -> Outcome {
            Err(CallError::new(
                ErrorCode::ExecutionFailed,
                format!("upstream said: token {SECRET}"),
            ))
        }
    }

    #[tokio::test]
    async fn recorded_outcomes_are_masked_and_still_replay_with_their_code() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("t.db");
        let layer = IdempotencyLayer::new(
            Arc::new(IdempotencyStore::open(&db).unwrap()),
            Redactor::shared(),
        );
        let inner: [Arc<dyn Layer>; 1] = [Arc::new(FailsWithSecret)];
        let args = json!({"idempotency_key": "k"});
        let mut call = call_for(echo_tool("w", Risk::Write), args.clone());
        let first = layer.handle(&mut call, Next::new(&inner)).await;
        assert_eq!(
            first.unwrap_err().message,
            format!("upstream said: token {SECRET}")
        );

        let mut call = call_for(echo_tool("w", Risk::Write), args);
        let replayed = layer.handle(&mut call, Next::new(&inner)).await;
        let e = replayed.unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (
                ErrorCode::ExecutionFailed,
                "upstream said: token [REDACTED]"
            )
        );
        for file in std::fs::read_dir(dir.path()).unwrap() {
            let bytes = std::fs::read(file.unwrap().path()).unwrap();
            assert!(!bytes.windows(SECRET.len()).any(|w| w == SECRET.as_bytes()));
        }
    }
}
