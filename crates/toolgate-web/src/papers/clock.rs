//! [`Clock`]: the time rate limiting waits on. The tool waits between arXiv requests and
//! after a 429's `Retry-After`; tests give it a clock that records each wait and moves its
//! own time on, so nothing sleeps for real and the waits are asserted exactly.

use std::time::Duration;

use async_trait::async_trait;

/// Monotonic time and waiting.
#[async_trait]
pub trait Clock: Send + Sync + 'static {
    /// Time since an arbitrary, fixed origin.
    fn now(&self) -> Duration;

    /// Waits `duration`.
    async fn sleep(&self, duration: Duration);
}

/// Tokio's clock.
#[derive(Debug, Clone, Copy)]
pub struct TokioClock {
    origin: tokio::time::Instant,
}

impl Default for TokioClock {
    fn default() -> Self {
        TokioClock {
            origin: tokio::time::Instant::now(),
        }
    }
}

#[async_trait]
impl Clock for TokioClock {
    fn now(&self) -> Duration {
        self.origin.elapsed()
    }

    async fn sleep(&self, duration: Duration) {
        tokio::time::sleep(duration).await;
    }
}
