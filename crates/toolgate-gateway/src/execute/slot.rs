//! A running call's execution slot, given back while the call waits for its client.
//!
//! A call that asks its caller something (a federated server's elicitation, sampling or
//! roots request) may wait minutes — a stateless 2026-07-28 client answers in its next
//! round, which may come minutes later or never. Waiting is not executing: the slot is
//! released when the call's first open question is sent and taken again (waiting its turn
//! like a new call) when the last one is answered, so parked calls cannot fill the
//! gateway-wide limit and stall every other caller.

use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use serde_json::Value;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use toolgate_core::{CallerChannel, CallerError, CallerQuestion, CallerRequest};

/// One call's slot: the permit while it runs, none while it waits for its client.
pub(super) struct Slot {
    permits: Arc<Semaphore>,
    state: Mutex<SlotState>,
}

#[derive(Default)]
struct SlotState {
    permit: Option<OwnedSemaphorePermit>,
    /// Questions sent and not yet answered.
    asking: usize,
    /// The call ended: the slot is never taken again.
    finished: bool,
}

impl Slot {
    pub(super) fn new(permits: Arc<Semaphore>, permit: OwnedSemaphorePermit) -> Arc<Slot> {
        Arc::new(Slot {
            permits,
            state: Mutex::new(SlotState {
                permit: Some(permit),
                ..SlotState::default()
            }),
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, SlotState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The call ended (also when the tool keeps its context alive): the permit goes back.
    pub(super) fn finish(&self) {
        let permit = {
            let mut s = self.state();
            s.finished = true;
            s.permit.take()
        };
        drop(permit);
    }

    /// A question is sent: the slot is free for others until it is answered.
    fn leave(&self) {
        let permit = {
            let mut s = self.state();
            s.asking += 1;
            s.permit.take()
        };
        drop(permit);
    }

    /// A question is answered: once none is open, the call waits for a slot again.
    async fn rejoin(&self) {
        {
            let mut s = self.state();
            s.asking = s.asking.saturating_sub(1);
            if s.asking > 0 || s.permit.is_some() || s.finished {
                return;
            }
        }
        // Closed only at shutdown, where the call is being cancelled anyway.
        let Ok(permit) = Arc::clone(&self.permits).acquire_owned().await else {
            return;
        };
        let extra = {
            let mut s = self.state();
            if s.asking > 0 || s.permit.is_some() || s.finished {
                Some(permit)
            } else {
                s.permit = Some(permit);
                None
            }
        };
        drop(extra);
    }
}

/// The call's channel to its client, releasing the call's slot while a question is open.
pub(super) struct SlotFreeChannel {
    pub(super) inner: Arc<dyn CallerChannel>,
    pub(super) slot: Arc<Slot>,
}

#[async_trait]
impl CallerChannel for SlotFreeChannel {
    fn answers(&self, request: CallerRequest) -> bool {
        self.inner.answers(request)
    }

    async fn log(&self, params: Value) {
        self.inner.log(params).await;
    }

    async fn ask(&self, question: CallerQuestion) -> Result<Value, CallerError> {
        self.slot.leave();
        let answer = self.inner.ask(question).await;
        self.slot.rejoin().await;
        answer
    }

    fn is_parked(&self) -> bool {
        self.inner.is_parked()
    }
}
