//! Calls in flight, counted so that a runtime shutting down can wait for them before it
//! flushes the audit log and exits.

use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::Notify;

#[derive(Debug, Default)]
pub struct InFlight {
    count: AtomicUsize,
    idle: Notify,
}

/// One call in flight; leaving (dropping) it may make the gateway idle.
#[derive(Debug)]
pub struct Entered<'a>(&'a InFlight);

impl InFlight {
    pub fn enter(&self) -> Entered<'_> {
        self.count.fetch_add(1, Ordering::SeqCst);
        Entered(self)
    }

    /// Calls running now.
    pub fn count(&self) -> usize {
        self.count.load(Ordering::SeqCst)
    }

    /// Returns once no call is in flight.
    pub async fn idle(&self) {
        loop {
            // Created before the check: a wakeup between the check and the await is kept.
            let notified = self.idle.notified();
            if self.count() == 0 {
                return;
            }
            notified.await;
        }
    }
}

impl Drop for Entered<'_> {
    fn drop(&mut self) {
        if self.0.count.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn idle_waits_for_the_last_call_to_leave() {
        let flight = Arc::new(InFlight::default());
        let (entered_tx, entered_rx) = tokio::sync::oneshot::channel();
        let (leave_tx, leave_rx) = tokio::sync::oneshot::channel::<()>();
        let held = Arc::clone(&flight);
        let call = tokio::spawn(async move {
            let _entered = held.enter();
            let _ = entered_tx.send(());
            let _ = leave_rx.await;
        });
        entered_rx.await.unwrap();
        assert_eq!(flight.count(), 1);
        let waiting = tokio::time::timeout(Duration::from_millis(50), flight.idle()).await;
        assert!(waiting.is_err(), "idle while a call is in flight");
        leave_tx.send(()).unwrap();
        call.await.unwrap();
        tokio::time::timeout(Duration::from_secs(5), flight.idle())
            .await
            .expect("idle after the call left");
        assert_eq!(flight.count(), 0);
    }
}
