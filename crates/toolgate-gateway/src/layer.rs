//! The layer abstraction: each cross-cutting concern sees the call on the way in, may stop
//! it with an error, and otherwise hands it to [`Next`], seeing the outcome on the way out.
//! The one order of layers is declared in [`crate::pipeline`].

use std::sync::Arc;

use async_trait::async_trait;

use crate::call::{Call, Outcome, internal};

/// One stage of the pipeline.
#[async_trait]
pub trait Layer: Send + Sync {
    /// Short name, used in docs, traces and `toolgate` diagnostics.
    fn name(&self) -> &'static str;

    async fn handle(&self, call: &mut Call, next: Next<'_>) -> Outcome;
}

/// The rest of the pipeline after the current layer.
pub struct Next<'a> {
    rest: &'a [Arc<dyn Layer>],
}

impl<'a> Next<'a> {
    pub fn new(rest: &'a [Arc<dyn Layer>]) -> Self {
        Next { rest }
    }

    /// Runs the remaining layers. The last layer (execution) never calls `run`; reaching
    /// the end means the pipeline was assembled without an executor.
    pub async fn run(self, call: &mut Call) -> Outcome {
        match self.rest.split_first() {
            Some((layer, rest)) => {
                if let Some(stages) = call.stages.as_mut() {
                    stages.push((layer.name(), std::time::Instant::now()));
                }
                layer.handle(call, Next { rest }).await
            }
            None => Err(internal("the pipeline has no execution layer")),
        }
    }
}
