//! [`McpHub`]: every configured server, started in parallel, each supervised on its own
//! task so that one failing or hanging server never blocks the rest (R-MCP-2).

use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::broadcast;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use toolgate_net::EgressPolicy;
use toolgate_registry::{Catalog, ToolSource};
use toolgate_store::CredentialStore;

use crate::config::{ServerConfig, validate_servers};
use crate::elicit::Elicitor;
use crate::sandbox::StdioSandbox;
use crate::supervisor::{McpServer, RetryPolicy};
use crate::{ConfigError, McpEvent, ServerStatus};

const EVENT_BUFFER: usize = 1024;

/// How the hub treats every server: reconnect backoff and the outbound-HTTP rules.
///
/// A bare [`RetryPolicy`] converts into options with the strict default [`EgressPolicy`]
/// (https to public addresses only), so an HTTP server on a loopback or private address is
/// refused until `egress` allowlists it.
#[derive(Debug, Clone, Default)]
pub struct HubOptions {
    pub retry: RetryPolicy,
    /// The `[egress]` rules every Streamable HTTP request is checked against (R-MCP-4).
    pub egress: EgressPolicy,
    /// Where OAuth tokens of servers with `auth` are kept; without it such a server fails
    /// with a message naming the fix.
    pub credentials: Option<Arc<CredentialStore>>,
    /// Confines stdio servers that have a `sandbox` table; without it such a server fails.
    pub stdio_sandbox: Option<Arc<dyn StdioSandbox>>,
    /// Answers servers' elicitation requests (a human, through the approval channel);
    /// without it the client does not offer elicitation.
    pub elicitor: Option<Arc<dyn Elicitor>>,
}

impl HubOptions {
    pub fn new(retry: RetryPolicy, egress: EgressPolicy) -> Self {
        HubOptions {
            retry,
            egress,
            credentials: None,
            stdio_sandbox: None,
            elicitor: None,
        }
    }

    /// Routes servers' elicitation requests to `elicitor`.
    pub fn with_elicitor(mut self, elicitor: Arc<dyn Elicitor>) -> Self {
        self.elicitor = Some(elicitor);
        self
    }

    /// Confines servers with a `sandbox` table through `sandbox`.
    pub fn with_stdio_sandbox(mut self, sandbox: Arc<dyn StdioSandbox>) -> Self {
        self.stdio_sandbox = Some(sandbox);
        self
    }

    /// Uses `store` for the OAuth tokens of servers with `auth` (R-MCP-3).
    pub fn with_credentials(mut self, store: Arc<CredentialStore>) -> Self {
        self.credentials = Some(store);
        self
    }
}

impl From<RetryPolicy> for HubOptions {
    fn from(retry: RetryPolicy) -> Self {
        HubOptions {
            retry,
            egress: EgressPolicy::default(),
            credentials: None,
            stdio_sandbox: None,
            elicitor: None,
        }
    }
}

/// The MCP client side of toolgate: owns one supervisor per enabled server, each feeding
/// the catalog as the source `mcp:{name}`. Dropping the hub stops the supervisors; call
/// [`McpHub::shutdown`] to also wait for the servers to close.
pub struct McpHub {
    servers: Vec<Arc<McpServer>>,
    shutdown: CancellationToken,
    tasks: Mutex<Vec<JoinHandle<()>>>,
    events: broadcast::Sender<McpEvent>,
}

impl std::fmt::Debug for McpHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpHub")
            .field("servers", &self.status())
            .finish()
    }
}

impl McpHub {
    /// Validates every entry, then starts the enabled servers in the background and returns
    /// at once. Must be called inside a Tokio runtime.
    pub fn spawn(
        configs: Vec<ServerConfig>,
        catalog: Arc<Catalog>,
        options: impl Into<HubOptions>,
    ) -> Result<McpHub, ConfigError> {
        validate_servers(&configs)?;
        let HubOptions {
            retry,
            egress,
            credentials,
            stdio_sandbox,
            elicitor,
        } = options.into();
        let egress = Arc::new(egress);
        let (events, _) = broadcast::channel(EVENT_BUFFER);
        let shutdown = CancellationToken::new();
        let mut servers = Vec::with_capacity(configs.len());
        let mut tasks = Vec::new();
        for config in configs {
            let enabled = config.enabled;
            let server = Arc::new(
                McpServer::new(
                    config,
                    retry,
                    Arc::clone(&egress),
                    credentials.clone(),
                    events.clone(),
                )?
                .with_stdio_sandbox(stdio_sandbox.clone())
                .with_elicitor(elicitor.clone()),
            );
            if enabled {
                tasks.push(tokio::spawn(
                    Arc::clone(&server).run(Arc::clone(&catalog), shutdown.child_token()),
                ));
            }
            servers.push(server);
        }
        Ok(McpHub {
            servers,
            shutdown,
            tasks: Mutex::new(tasks),
            events,
        })
    }

    /// [`McpHub::spawn`], then waits until every enabled server is ready or has failed its
    /// first attempt — at most the longest `startup_timeout`.
    pub async fn start(
        configs: Vec<ServerConfig>,
        catalog: Arc<Catalog>,
        options: impl Into<HubOptions>,
    ) -> Result<McpHub, ConfigError> {
        let hub = McpHub::spawn(configs, catalog, options)?;
        hub.settled().await;
        Ok(hub)
    }

    /// Resolves when every enabled server has finished its first connection attempt.
    pub async fn settled(&self) {
        for s in &self.servers {
            s.first_attempt_done().await;
        }
    }

    /// Every configured server, in config order.
    pub(crate) fn servers(&self) -> &[Arc<McpServer>] {
        &self.servers
    }

    /// Per-server state, protocol version, transport and tool count, in config order.
    pub fn status(&self) -> Vec<ServerStatus> {
        self.servers.iter().map(|s| s.status()).collect()
    }

    /// Progress, logging, state and tool-list events of every server.
    pub fn events(&self) -> broadcast::Receiver<McpEvent> {
        self.events.subscribe()
    }

    /// The catalog sources, one per configured server (`mcp:{name}`).
    pub fn sources(&self) -> Vec<Arc<dyn ToolSource>> {
        self.servers
            .iter()
            .map(|s| Arc::clone(s) as Arc<dyn ToolSource>)
            .collect()
    }

    /// Asks server `name` to re-list its tools now; false if there is no such server.
    pub fn refresh(&self, name: &str) -> bool {
        let found = self.servers.iter().find(|s| s.status().name == name);
        if let Some(s) = found {
            s.request_refresh();
        }
        found.is_some()
    }

    /// Stops every server: tools become unavailable, children are closed (and killed if
    /// they do not exit), HTTP sessions are ended.
    pub async fn shutdown(&self) {
        self.shutdown.cancel();
        let tasks = std::mem::take(&mut *self.tasks.lock().unwrap_or_else(PoisonError::into_inner));
        for t in tasks {
            let _ = t.await;
        }
    }
}

impl Drop for McpHub {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}
