//! Quotas (R-SRV-5): per principal and per tool, calls per interval (a token bucket in
//! [`toolgate_store::quotas`]) and calls in flight. A call over a limit ends `rate_limited`
//! (retryable) with `details.retry_after_ms` — audited like any outcome — and never reaches
//! validation, approval or the tool.
//!
//! Buckets live where the store says: in memory (one process), or in PostgreSQL, where every
//! replica draws from the same row and the rate holds across the cluster. Calls in flight are
//! counted per process: across `n` replicas up to `n × max_in_flight` run at once.

mod config;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::json;
use toolgate_protocol::{CallError, ErrorCode};
use toolgate_store::quotas::{Admission, QuotaBuckets};

pub use config::{Quota, QuotaConfig, QuotaError, QuotaKey, compile_all};

use crate::call::{Call, Outcome};
use crate::layer::{Layer, Next};

/// What a caller is told to wait when a call-in-flight cap refuses it.
const IN_FLIGHT_RETRY_MS: u64 = 1000;

pub struct QuotaLayer {
    quotas: Vec<Quota>,
    buckets: Arc<dyn QuotaBuckets>,
    in_flight: Arc<Mutex<HashMap<String, u32>>>,
}

impl QuotaLayer {
    pub fn new(quotas: Vec<Quota>, buckets: Arc<dyn QuotaBuckets>) -> Self {
        QuotaLayer {
            quotas,
            buckets,
            in_flight: Arc::new(Mutex::new(HashMap::new())),
        }
    }
}

/// A place among the calls in flight of one bucket, given back when dropped.
struct Slot {
    key: String,
    counts: Arc<Mutex<HashMap<String, u32>>>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        if let Ok(mut counts) = self.counts.lock()
            && let Some(n) = counts.get_mut(&self.key)
        {
            *n -= 1;
            if *n == 0 {
                counts.remove(&self.key);
            }
        }
    }
}

fn limited(quota: &Quota, what: String, retry_after_ms: u64) -> CallError {
    CallError::new(
        ErrorCode::RateLimited,
        format!("quota \"{}\": {what}", quota.id),
    )
    .with_hint(format!(
        "retry after {:.1} s",
        retry_after_ms as f64 / 1000.0
    ))
    .with_details(json!({"quota": quota.id, "retry_after_ms": retry_after_ms}))
}

impl QuotaLayer {
    fn enter(&self, quota: &Quota, key: &str, max: u32) -> Result<Slot, CallError> {
        let mut counts = self.in_flight.lock().map_err(|_| {
            CallError::new(ErrorCode::Unavailable, "the quota counters are unusable")
        })?;
        let n = counts.entry(key.to_owned()).or_insert(0);
        if *n >= max {
            return Err(limited(
                quota,
                format!("{max} calls already in flight"),
                IN_FLIGHT_RETRY_MS,
            ));
        }
        *n += 1;
        Ok(Slot {
            key: key.to_owned(),
            counts: Arc::clone(&self.in_flight),
        })
    }
}

#[async_trait]
impl Layer for QuotaLayer {
    fn name(&self) -> &'static str {
        "quota"
    }

    async fn handle(&self, call: &mut Call, next: Next<'_>) -> Outcome {
        if self.quotas.is_empty() {
            return next.run(call).await;
        }
        let (principal, tool) = (call.request.principal.as_str(), call.request.tool.as_str());
        let mut slots = Vec::new();
        for quota in self.quotas.iter().filter(|q| q.applies(principal, tool)) {
            let key = quota.key(principal, tool);
            if let Some(max) = quota.max_in_flight {
                slots.push(self.enter(quota, &key, max)?);
            }
            if let Some(rate) = quota.rate {
                let taken = self.buckets.take(&key, rate).await.map_err(|e| {
                    CallError::new(
                        ErrorCode::Unavailable,
                        format!("quota \"{}\" cannot be checked: {e}", quota.id),
                    )
                })?;
                if let Admission::Refused { retry_after_us } = taken {
                    let what = quota.rate_text.clone().unwrap_or_default();
                    return Err(limited(
                        quota,
                        format!("over {what}"),
                        retry_after_us.div_ceil(1000),
                    ));
                }
            }
        }
        let outcome = next.run(call).await;
        drop(slots);
        outcome
    }
}
