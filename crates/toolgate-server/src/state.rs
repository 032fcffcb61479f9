//! What every handler shares: the gateway (the one way to run a call), the stores it reads
//! directly (approvals to decide, the audit to query and verify) and the server settings.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use tokio_util::sync::CancellationToken;
use toolgate_gateway::Gateway;
use toolgate_store::ApprovalStore;

use crate::config::ServerConfig;

/// Cheap to clone; handlers take it by value.
#[derive(Clone)]
pub struct AppState {
    inner: Arc<Inner>,
}

pub struct Inner {
    pub gateway: Arc<Gateway>,
    pub approvals: Arc<ApprovalStore>,
    /// The audit log file and the SQLite database holding its index.
    pub audit_jsonl: PathBuf,
    pub audit_db: PathBuf,
    pub config: ServerConfig,
    /// The address actually bound (port 0 resolved).
    pub local_addr: std::net::SocketAddr,
    pub started: Instant,
    /// Fires when shutdown begins: long-lived streams end, new calls are refused.
    pub shutdown: CancellationToken,
}

impl AppState {
    pub fn new(inner: Inner) -> Self {
        AppState {
            inner: Arc::new(inner),
        }
    }
}

impl std::ops::Deref for AppState {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        &self.inner
    }
}
