//! Result governance (R-EXE-4): a result over the per-call budget is stored in full (secrets
//! masked) and the caller gets its head, the total size and a reference id that
//! `read_result` pages through.
//! Errors are never cut. A result beyond the hard limit is refused with `result_too_large`
//! rather than stored.

mod read_result;

use std::io;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use toolgate_protocol::{CallError, ErrorCode, Governance, ToolOutput};
use toolgate_store::redact::Redactor;
use toolgate_store::results::ResultStore;

pub use read_result::{READ_RESULT, ReadResultTool};

use crate::call::{Call, Outcome};
use crate::layer::{Layer, Next};

pub struct GovernLayer {
    store: Arc<ResultStore>,
    budget_bytes: usize,
    hard_limit_bytes: usize,
}

impl GovernLayer {
    pub fn new(store: Arc<ResultStore>, budget_bytes: usize, hard_limit_bytes: usize) -> Self {
        GovernLayer {
            store,
            budget_bytes,
            hard_limit_bytes,
        }
    }
}

/// The text a model would read for `data`: strings as they are, other values as JSON.
fn as_text(data: &Value) -> String {
    match data {
        Value::String(s) => s.clone(),
        other => serde_json::to_string_pretty(other).unwrap_or_default(),
    }
}

/// Longest JSON text of a number (`-1.2345678901234567e-308`).
const MAX_NUMBER_BYTES: usize = 24;

/// Whether the JSON text of `data` surely has at most `limit` bytes, by a bound that needs no
/// serialising: six bytes for every byte of a string (`\u00XX` is the longest escape), the
/// longest form of every number, and the punctuation. `false` means "maybe not".
fn json_len_surely_within(data: &Value, limit: usize) -> bool {
    let mut bound = 0usize;
    let mut pending = vec![data];
    while let Some(v) = pending.pop() {
        bound += match v {
            Value::Null | Value::Bool(_) => 5,
            Value::Number(_) => MAX_NUMBER_BYTES,
            Value::String(s) => 2 + 6 * s.len(),
            Value::Array(items) => {
                pending.extend(items);
                2 + items.len()
            }
            Value::Object(members) => {
                let mut own = 2 + members.len();
                for (key, member) in members {
                    own += 3 + 6 * key.len();
                    pending.push(member);
                }
                own
            }
        };
        if bound > limit {
            return false;
        }
    }
    true
}

/// Whether the JSON text of `data` is longer than `limit` bytes. Counts instead of building
/// the text, and stops as soon as the answer is known.
fn json_len_exceeds(data: &Value, limit: usize) -> bool {
    struct Counter {
        bytes: usize,
        limit: usize,
    }
    impl io::Write for Counter {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.bytes += buf.len();
            if self.bytes > self.limit {
                return Err(io::Error::other("over the limit"));
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    serde_json::to_writer(&mut Counter { bytes: 0, limit }, data).is_err()
}

fn head(text: &str, max: usize) -> &str {
    let mut end = max.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[async_trait]
impl Layer for GovernLayer {
    fn name(&self) -> &'static str {
        "govern"
    }

    async fn handle(&self, call: &mut Call, next: Next<'_>) -> Outcome {
        let mut out: ToolOutput = next.run(call).await?;
        if call.request.tool == READ_RESULT {
            return Ok(out);
        }
        // Cheap size probe first: most results are small.
        let over_budget = match &out.data {
            Value::String(s) => s.len() > self.budget_bytes,
            other => {
                !json_len_surely_within(other, self.budget_bytes)
                    && json_len_exceeds(other, self.budget_bytes)
            }
        };
        if !over_budget {
            return Ok(out);
        }
        // What is stored is redacted (R-EXE-6), and the head comes from the same text so that
        // the inline part and the pages agree.
        let text = as_text(&Redactor::shared().redact_value(&out.data));
        if text.len() > self.hard_limit_bytes {
            return Err(CallError::new(
                ErrorCode::ResultTooLarge,
                format!(
                    "the result is {} bytes, over the hard limit of {} bytes",
                    text.len(),
                    self.hard_limit_bytes
                ),
            )
            .with_hint("narrow the request (a smaller range, a filter, a limit)"));
        }
        let shown = head(&text, self.budget_bytes).to_owned();
        let result_id = match self.store.put(&call.request.call_id, &text).await {
            Ok(id) => Some(id),
            Err(e) => {
                tracing::warn!(error = %e, "offloading a large result failed; truncating only");
                None
            }
        };
        call.governance = Some(Governance {
            total_bytes: text.len() as u64,
            returned_bytes: shown.len() as u64,
            result_id,
        });
        out.data = Value::String(shown);
        Ok(out)
    }
}

#[cfg(test)]
mod tests;
