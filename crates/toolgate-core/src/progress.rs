//! Progress a running tool reports to whoever called it (an MCP server's
//! `notifications/progress`, a long download). The gateway turns each update into a call
//! event; front ends pass it on (the MCP server as `notifications/progress` to its client).

use std::sync::Arc;

/// One progress report. `progress` grows with each report of a call; `total` is known or
/// not.
#[derive(Debug, Clone, PartialEq)]
pub struct ProgressUpdate {
    pub progress: f64,
    pub total: Option<f64>,
    pub message: Option<String>,
}

/// Where a tool sends its progress; reporting to a sink nobody listens to costs nothing.
#[derive(Clone, Default)]
pub struct ProgressSink(Option<Arc<dyn Fn(ProgressUpdate) + Send + Sync>>);

impl ProgressSink {
    /// A sink that calls `report` for every update.
    pub fn new(report: impl Fn(ProgressUpdate) + Send + Sync + 'static) -> Self {
        ProgressSink(Some(Arc::new(report)))
    }

    /// A sink that drops every update.
    pub fn none() -> Self {
        ProgressSink(None)
    }

    pub fn report(&self, update: ProgressUpdate) {
        if let Some(report) = &self.0 {
            report(update);
        }
    }
}

impl std::fmt::Debug for ProgressSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "ProgressSink(listening)"
        } else {
            "ProgressSink(none)"
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn updates_reach_the_listener_and_a_silent_sink_drops_them() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = {
            let seen = Arc::clone(&seen);
            ProgressSink::new(move |u| seen.lock().expect("lock").push(u))
        };
        let update = ProgressUpdate {
            progress: 1.0,
            total: Some(4.0),
            message: Some("one of four".into()),
        };
        sink.clone().report(update.clone());
        ProgressSink::none().report(update.clone());
        assert_eq!(*seen.lock().expect("lock"), [update]);
        assert_eq!(format!("{sink:?}"), "ProgressSink(listening)");
    }
}
