//! One supervised MCP server (R-MCP-2) and the [`ToolSource`] `mcp:{name}` it feeds.
//!
//! The supervisor loops: connect (bounded by `startup_timeout`) → list tools → reload the
//! catalog → serve until the connection ends → mark the tools unavailable → wait a backoff
//! → connect again. While the server is down its tools stay in the catalog as
//! `Availability::Unavailable(reason)` and calls are refused at once. A `tools/list_changed`
//! (a notification on 2025-11-25, a `subscriptions/listen` stream on 2026-07-28) re-lists
//! every page and reloads the catalog. Availability is only ever flipped between
//! `Available` and `Unavailable`: a `Quarantined` tool (R-REG-5) stays quarantined.

use std::sync::{Arc, PoisonError, RwLock};
use std::time::{Duration, Instant, SystemTime};

use rmcp::model::{ServerNotification, SubscriptionFilter};
use rmcp::service::{Peer, RoleClient};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use toolgate_core::{DynTool, Tool};
use toolgate_net::EgressPolicy;
use toolgate_registry::{Availability, Catalog, ToolSource};
use toolgate_store::CredentialStore;

use crate::config::{ServerConfig, ToolFilter};
use crate::connect::{Connection, StderrTail, connect, error_chain, transport_kind};
use crate::inbound::McpClientHandler;
use crate::link::{AbortOnDrop, Connected, ServerLink};
use crate::offers::Offers;
use crate::sandbox::{SandboxChoice, SandboxSpec, StdioSandbox};
use crate::tool::{McpTool, Trust};
use crate::{ConnectError, McpEvent, ServerState, ServerStatus};

/// A connection that lasted this long resets the backoff.
const HEALTHY_AFTER: Duration = Duration::from_secs(30);
/// How long shutdown waits for a server to close cleanly.
const CLOSE_GRACE: Duration = Duration::from_secs(5);
/// How long a new connection waits for its `subscriptions/listen` acknowledgment.
const LISTEN_ACK_WAIT: Duration = Duration::from_secs(2);
/// How often the lists of a 2026-07-28 server without a working `subscriptions/listen`
/// stream are re-read.
const LIST_POLL: Duration = Duration::from_secs(60);

/// Exponential backoff between connection attempts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Wait after the first failure (and before restarting a crashed server).
    pub initial: Duration,
    /// The wait doubles per consecutive failure up to this cap.
    pub max: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            initial: Duration::from_secs(1),
            max: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// The wait before attempt `failures + 1`.
    pub fn delay(&self, failures: u32) -> Duration {
        self.initial
            .saturating_mul(2u32.saturating_pow(failures.min(30)))
            .min(self.max)
    }
}

pub(crate) struct McpServer {
    config: ServerConfig,
    source: String,
    filter: ToolFilter,
    link: Arc<ServerLink>,
    handler: McpClientHandler,
    stderr: StderrTail,
    retry: RetryPolicy,
    egress: Arc<EgressPolicy>,
    credentials: Option<Arc<CredentialStore>>,
    stdio_sandbox: Option<Arc<dyn StdioSandbox>>,
    tools: RwLock<Vec<DynTool>>,
    status: RwLock<ServerStatus>,
    settled: watch::Sender<bool>,
}

/// A fresh connection with its tools, not yet serving.
struct Session {
    conn: Connection,
    defs: Vec<rmcp::model::Tool>,
    offers: Offers,
    watcher: Option<AbortOnDrop>,
}

enum Ended {
    Shutdown,
    Lost(String),
}

impl ToolSource for McpServer {
    fn name(&self) -> &str {
        &self.source
    }

    fn tools(&self) -> Vec<DynTool> {
        self.tools
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// An MCP server's definitions are not ours: the catalog pins them (R-REG-5).
    fn pinned(&self) -> bool {
        true
    }
}

impl McpServer {
    /// `config` must be valid ([`ServerConfig::validate`]).
    pub(crate) fn new(
        config: ServerConfig,
        retry: RetryPolicy,
        egress: Arc<EgressPolicy>,
        credentials: Option<Arc<CredentialStore>>,
        events: tokio::sync::broadcast::Sender<McpEvent>,
    ) -> Result<Self, crate::ConfigError> {
        let filter = config.tool_filter()?;
        let link = Arc::new(ServerLink::new(
            config.name.clone(),
            crate::span::Wire::of(config.url.as_deref()),
            config.call_timeout,
            events,
        ));
        let source = config.source_name();
        let state = if config.enabled {
            ServerState::Connecting
        } else {
            ServerState::Disabled
        };
        let status = ServerStatus {
            name: config.name.clone(),
            source: source.clone(),
            transport: transport_kind(&config),
            state,
            protocol_version: None,
            tools: 0,
            restarts: 0,
            polling: None,
        };
        Ok(McpServer {
            handler: McpClientHandler::new(Arc::clone(&link), config.client_requests),
            source,
            filter,
            link,
            stderr: StderrTail::default(),
            retry,
            egress,
            credentials,
            stdio_sandbox: None,
            tools: RwLock::new(Vec::new()),
            status: RwLock::new(status),
            settled: watch::Sender::new(!config.enabled),
            config,
        })
    }

    /// What clients see for this server's names.
    pub(crate) fn naming(&self) -> crate::config::Naming {
        self.config.naming()
    }

    /// The live connection as calls and the federation see it.
    /// What answers the server's requests to its client (and its `input_required` rounds).
    pub(crate) fn handler(&self) -> &McpClientHandler {
        &self.handler
    }

    pub(crate) fn link(&self) -> &ServerLink {
        &self.link
    }

    pub(crate) fn status(&self) -> ServerStatus {
        let mut status = self
            .status
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        status.polling = match status.state {
            ServerState::Ready => self.link.polling(),
            _ => None,
        };
        status
    }

    /// Resolves once the first connection attempt has succeeded or failed.
    pub(crate) async fn first_attempt_done(&self) {
        let mut rx = self.settled.subscribe();
        let _ = rx.wait_for(|done| *done).await;
    }

    pub(crate) fn request_refresh(&self) {
        self.link.refresh.notify_one();
    }

    fn update(&self, f: impl FnOnce(&mut ServerStatus)) {
        f(&mut self.status.write().unwrap_or_else(PoisonError::into_inner));
    }

    fn set_state(&self, state: ServerState) {
        self.update(|s| s.state = state.clone());
        self.link.emit(McpEvent::State {
            server: self.config.name.clone(),
            state,
        });
    }

    /// The supervisor; returns after `shutdown` fires.
    pub(crate) async fn run(self: Arc<Self>, catalog: Arc<Catalog>, shutdown: CancellationToken) {
        let mut failures: u32 = 0;
        let mut connections: u32 = 0;
        while !shutdown.is_cancelled() {
            self.set_state(ServerState::Connecting);
            self.stderr.clear();
            let limit = self.config.startup_timeout;
            let attempt = tokio::select! {
                () = shutdown.cancelled() => break,
                r = tokio::time::timeout(limit, self.open()) => r,
            };
            let attempt = match attempt {
                Ok(r) => r.map_err(|e| e.with_stderr(&self.stderr.lines())),
                Err(_) => {
                    Err(ConnectError::StartupTimeout(limit).with_stderr(&self.stderr.lines()))
                }
            };
            let reason = match attempt {
                Ok(Session {
                    conn,
                    defs,
                    offers,
                    watcher,
                }) => {
                    if connections > 0 {
                        self.update(|s| s.restarts += 1);
                    }
                    connections += 1;
                    let up_since = Instant::now();
                    let lost = CancellationToken::new();
                    self.update(|s| s.protocol_version = Some(conn.protocol_version.clone()));
                    self.link.connected(Connected {
                        peer: conn.service.peer().clone(),
                        lost: lost.clone(),
                    });
                    self.install(&catalog, &defs).await;
                    self.link.set_offers(offers);
                    self.resubscribe(conn.service.peer()).await;
                    self.set_state(ServerState::Ready);
                    self.settled.send_replace(true);
                    tracing::info!(server = %self.config.name, protocol = %conn.protocol_version, tools = defs.len(), "MCP server ready");
                    let ended = self.serve(conn, &lost, &catalog, &shutdown).await;
                    drop(watcher);
                    if up_since.elapsed() >= HEALTHY_AFTER {
                        failures = 0;
                    }
                    match ended {
                        Ended::Shutdown => break,
                        Ended::Lost(why) => why,
                    }
                }
                Err(e) => e.to_string(),
            };
            let delay = self.retry.delay(failures);
            failures = failures.saturating_add(1);
            tracing::warn!(server = %self.config.name, error = %reason, retry_in = ?delay, "MCP server unavailable");
            self.go_down(&catalog, &reason);
            self.set_state(ServerState::Failed {
                error: reason,
                retry_at: SystemTime::now() + delay,
            });
            self.settled.send_replace(true);
            tokio::select! {
                () = shutdown.cancelled() => break,
                () = tokio::time::sleep(delay) => {}
            }
        }
        self.go_down(&catalog, "the MCP client was shut down");
        self.set_state(ServerState::Stopped);
        self.settled.send_replace(true);
    }

    /// Connects, subscribes to tool-list changes (before listing, so none is missed) and
    /// lists the tools.
    pub(crate) fn with_stdio_sandbox(mut self, sandbox: Option<Arc<dyn StdioSandbox>>) -> Self {
        self.stdio_sandbox = sandbox;
        self
    }

    /// Offers elicitation to this server, answered by `elicitor`.
    pub(crate) fn with_elicitor(mut self, elicitor: Option<Arc<dyn crate::Elicitor>>) -> Self {
        self.handler = self.handler.with_elicitor(elicitor);
        self
    }

    /// The configuration to connect with: a stdio server that is to be confined has its
    /// command replaced by the confined one (see [`crate::sandbox`]): a `sandbox` table is
    /// required; without one, the inferred default applies wherever a sandbox is available.
    fn effective_config(&self) -> Result<std::borrow::Cow<'_, ServerConfig>, ConnectError> {
        let Some(command) = &self.config.command else {
            return Ok(std::borrow::Cow::Borrowed(&self.config));
        };
        let cwd = self.config.cwd.as_deref();
        let spec = match (&self.config.sandbox, &self.stdio_sandbox) {
            (SandboxChoice::Off, _) => return Ok(std::borrow::Cow::Borrowed(&self.config)),
            (SandboxChoice::Spec(_), None) => {
                return Err(ConnectError::Sandbox(
                    "`sandbox` is set but this program has no sandbox for MCP servers".to_owned(),
                ));
            }
            (SandboxChoice::Spec(spec), Some(_)) => spec.clone(),
            (SandboxChoice::Default, sandbox) => match sandbox.as_ref().map(|s| s.available()) {
                Some(Ok(())) => SandboxSpec::inferred(command, &self.config.args, cwd),
                // The embedding program has a sandbox but this machine cannot give it:
                // refused, never started with less than promised; `sandbox = "off"` is
                // the operator's way to run it unconfined.
                Some(Err(why)) => {
                    return Err(ConnectError::Sandbox(format!(
                        "the default sandbox is unavailable here: {why} (`toolgate doctor` \
                         explains; set sandbox = \"off\" on this server to run it unconfined)"
                    )));
                }
                None => {
                    tracing::warn!(
                        server = %self.config.name,
                        "runs WITHOUT a sandbox: this program has no sandbox for MCP servers \
                         (set sandbox = \"off\" to say so)"
                    );
                    return Ok(std::borrow::Cow::Borrowed(&self.config));
                }
            },
        };
        let Some(sandbox) = &self.stdio_sandbox else {
            return Ok(std::borrow::Cow::Borrowed(&self.config));
        };
        // Inside the sandbox a missing program is only the helper's exit; say it as a
        // direct start would.
        if !crate::sandbox::program_exists(command, cwd) {
            let missing = std::io::Error::from_raw_os_error(libc::ENOENT);
            return Err(ConnectError::Spawn {
                command: command.clone(),
                reason: crate::connect::spawn_reason(&missing, cwd),
            });
        }
        let wrapped = sandbox
            .wrap(&self.config.name, &spec, command, &self.config.args, cwd)
            .map_err(|e| ConnectError::Sandbox(e.to_string()))?;
        let mut config = self.config.clone();
        config.command = Some(wrapped.program);
        config.args = wrapped.args;
        config.env.extend(wrapped.env);
        Ok(std::borrow::Cow::Owned(config))
    }

    async fn open(&self) -> Result<Session, ConnectError> {
        let config = self.effective_config()?;
        let conn = connect(
            &config,
            &self.handler,
            &self.stderr,
            &self.egress,
            self.credentials.as_ref(),
        )
        .await?;
        let watcher = self.watch_tool_changes(conn.service.peer()).await;
        let defs = list_tools(conn.service.peer()).await?;
        let offers = Offers::list(&self.config.name, conn.service.peer()).await;
        Ok(Session {
            conn,
            defs,
            offers,
            watcher,
        })
    }

    async fn serve(
        &self,
        conn: Connection,
        lost: &CancellationToken,
        catalog: &Catalog,
        shutdown: &CancellationToken,
    ) -> Ended {
        let peer = conn.service.peer().clone();
        let stop = conn.service.cancellation_token();
        let mut closed = tokio::spawn(conn.service.waiting());
        loop {
            tokio::select! {
                () = shutdown.cancelled() => {
                    stop.cancel();
                    let _ = tokio::time::timeout(CLOSE_GRACE, &mut closed).await;
                    break Ended::Shutdown;
                }
                quit = &mut closed => {
                    break Ended::Lost(match quit {
                        Ok(Ok(_)) => "the connection closed (the server exited or hung up)".to_owned(),
                        Ok(Err(e)) | Err(e) => format!("the connection task failed: {e}"),
                    });
                }
                () = lost.cancelled() => {
                    stop.cancel();
                    break Ended::Lost("the connection broke during a call".to_owned());
                }
                () = self.link.refresh.notified() => self.relist(&peer, catalog).await,
            }
        }
    }

    /// On 2026-07-28 list changes arrive on a `subscriptions/listen` stream, not as a bare
    /// notification; open one for the lists the server says change and forward what it
    /// carries. The stream is an optional feature: it runs in a task of its own, and the
    /// connection waits at most [`LISTEN_ACK_WAIT`] for its acknowledgment (so a change
    /// announced right after the connection is up is heard), never for the whole startup
    /// timeout. A server whose `listen` never answers, fails, or ends is federated all the
    /// same; its lists are then re-read every [`LIST_POLL`] instead, and a warning says so.
    async fn watch_tool_changes(&self, peer: &Peer<RoleClient>) -> Option<AbortOnDrop> {
        // What an earlier connection's stream said is no longer true of this one.
        self.link.set_polling(None);
        let info = peer.peer_info()?;
        let caps = &info.capabilities;
        let yes = |flag: Option<bool>| flag.filter(|f| *f);
        let mut filter = SubscriptionFilter::new();
        filter.tools_list_changed = yes(caps.tools.as_ref().and_then(|t| t.list_changed));
        filter.prompts_list_changed = yes(caps.prompts.as_ref().and_then(|p| p.list_changed));
        filter.resources_list_changed = yes(caps.resources.as_ref().and_then(|r| r.list_changed));
        let offers = filter.tools_list_changed.is_some()
            || filter.prompts_list_changed.is_some()
            || filter.resources_list_changed.is_some();
        if info.protocol_version.has_initialize() || !offers {
            return None;
        }
        let link = Arc::clone(&self.link);
        let peer = peer.clone();
        let wait = self.config.startup_timeout;
        let (acknowledged, ack) = tokio::sync::oneshot::channel::<()>();
        let task = AbortOnDrop(tokio::spawn(async move {
            link.set_polling(Some(
                "subscriptions/listen is not acknowledged yet".to_owned(),
            ));
            let why = match tokio::time::timeout(wait, peer.listen(filter)).await {
                Ok(Ok(mut sub)) => {
                    link.set_polling(None);
                    let _ = acknowledged.send(());
                    loop {
                        match sub.next().await {
                            Ok(Some(
                                ServerNotification::ToolListChangedNotification(_)
                                | ServerNotification::PromptListChangedNotification(_)
                                | ServerNotification::ResourceListChangedNotification(_),
                            )) => {
                                tracing::info!(server = %link.server, "MCP server's lists changed");
                                link.refresh.notify_one();
                            }
                            Ok(Some(_)) => {}
                            Ok(None) => break "the list-change stream ended".to_owned(),
                            Err(e) => {
                                break format!(
                                    "the list-change stream failed: {}",
                                    error_chain(&e)
                                );
                            }
                        }
                    }
                }
                Ok(Err(e)) => format!("could not subscribe to list changes: {}", error_chain(&e)),
                Err(_) => format!("no answer to subscriptions/listen within {wait:?}"),
            };
            tracing::warn!(server = %link.server, "{why}; its lists are re-read every {LIST_POLL:?} instead");
            link.set_polling(Some(why));
            let mut poll = tokio::time::interval(LIST_POLL);
            poll.tick().await;
            loop {
                poll.tick().await;
                link.refresh.notify_one();
            }
        }));
        let _ = tokio::time::timeout(LISTEN_ACK_WAIT.min(wait / 2), ack).await;
        Some(task)
    }

    /// Subscribes the new connection to every resource clients still hold a subscription to.
    async fn resubscribe(&self, peer: &Peer<RoleClient>) {
        for uri in self.link.held() {
            if let Err(e) = crate::subscribe::subscribe(&self.link, peer, &uri).await {
                tracing::warn!(server = %self.config.name, %uri, error = %error_chain(&e), "could not subscribe again after reconnecting");
            }
        }
    }

    async fn relist(&self, peer: &Peer<RoleClient>, catalog: &Catalog) {
        let offers = tokio::time::timeout(
            self.config.startup_timeout,
            Offers::list(&self.config.name, peer),
        );
        match offers.await {
            Ok(offers) => self.link.set_offers(offers),
            Err(_) => {
                tracing::warn!(server = %self.config.name, "re-listing prompts and resources timed out")
            }
        }
        match tokio::time::timeout(self.config.startup_timeout, list_tools(peer)).await {
            Ok(Ok(defs)) => self.install(catalog, &defs).await,
            Ok(Err(e)) => {
                tracing::warn!(server = %self.config.name, error = %e, "re-listing tools failed");
            }
            Err(_) => {
                tracing::warn!(server = %self.config.name, "re-listing tools timed out");
            }
        }
    }

    /// Replaces this source's tools in the catalog and makes them callable.
    async fn install(&self, catalog: &Catalog, defs: &[rmcp::model::Tool]) {
        let trust = Trust {
            trusted: self.config.trusted,
            overrides: &self.config.risk,
        };
        let naming = self.config.naming();
        let tools: Vec<McpTool> = defs
            .iter()
            .filter(|d| self.filter.admits(&d.name))
            .map(|d| {
                McpTool::new(
                    &naming,
                    &self.source,
                    d,
                    trust,
                    Arc::clone(&self.link),
                    self.handler.clone(),
                )
            })
            .collect();
        for label in self.config.risk.keys() {
            if !tools.iter().any(|t| t.raw_name() == label) {
                tracing::warn!(server = %self.config.name, tool = %label, "risk label names no federated tool");
            }
        }
        let named: Vec<(String, String)> = tools
            .iter()
            .map(|t| (t.spec().name.clone(), t.raw_name().to_owned()))
            .collect();
        let names: Vec<String> = named.iter().map(|(name, _)| name.clone()).collect();
        let dyn_tools: Vec<DynTool> = tools.into_iter().map(|t| Arc::new(t) as DynTool).collect();
        *self.tools.write().unwrap_or_else(PoisonError::into_inner) = dyn_tools;
        for skipped in catalog.reload_source(self).await {
            tracing::warn!(server = %self.config.name, error = %skipped, "MCP tool not added to the catalog");
        }
        let task_only = crate::tool::task_only_reason(&self.config.name);
        for (name, raw) in &named {
            let current = catalog.get(name).map(|e| e.availability);
            if self.link.is_task_only(raw) {
                if !matches!(current, Some(Availability::Quarantined(_))) {
                    catalog.set_availability(name, Availability::Unavailable(task_only.clone()));
                }
            } else if matches!(current, Some(Availability::Unavailable(_))) {
                catalog.set_availability(name, Availability::Available);
            }
        }
        self.update(|s| s.tools = names.len());
        self.link.emit(McpEvent::ToolsChanged {
            server: self.config.name.clone(),
            tools: names,
        });
    }

    /// Refuses calls from now on and marks the tools unavailable in the catalog.
    fn go_down(&self, catalog: &Catalog, reason: &str) {
        let why = format!("MCP server `{}` is unavailable: {reason}", self.config.name);
        self.link.disconnected(why.clone());
        for tool in self.tools() {
            let name = &tool.spec().name;
            if matches!(
                catalog.get(name).map(|e| e.availability),
                Some(Availability::Available)
            ) {
                catalog.set_availability(name, Availability::Unavailable(why.clone()));
            }
        }
    }
}

/// Every page of `tools/list`; a server without tools has none.
async fn list_tools(peer: &Peer<RoleClient>) -> Result<Vec<rmcp::model::Tool>, ConnectError> {
    let offers_tools = peer
        .peer_info()
        .is_none_or(|info| info.capabilities.tools.is_some());
    if !offers_tools {
        return Ok(Vec::new());
    }
    peer.list_all_tools()
        .await
        .map_err(|e| ConnectError::ListTools(error_chain(&e)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let p = RetryPolicy {
            initial: Duration::from_millis(100),
            max: Duration::from_secs(1),
        };
        let delays: Vec<u128> = (0..6).map(|n| p.delay(n).as_millis()).collect();
        assert_eq!(delays, [100, 200, 400, 800, 1000, 1000]);
        assert_eq!(p.delay(u32::MAX), Duration::from_secs(1));
    }
}
