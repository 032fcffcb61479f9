//! Opening one connection: the transport (a child process over stdio, or Streamable HTTP)
//! and the protocol era (R-MCP-1).
//!
//! Era negotiation under [`ProtocolChoice::Auto`]: first `server/discover` (2026-07-28).
//! A legacy server answers it with a JSON-RPC error (-32601) and rmcp falls back to
//! `initialize` on the same connection at once. A discover that ends in any other failure
//! (an HTTP endpoint that rejects a session-less request, a child that exits on an unknown
//! method) is retried on a fresh connection with `initialize`. An HTTP server that stays
//! silent is given [`DISCOVER_PROBE`] (it is already running, so silence means legacy)
//! rather than rmcp's built-in ten seconds; a stdio child is not probed on a timer, since
//! its start-up time (an `npx` download, a cold Python) would count as silence. The caller
//! bounds the whole attempt by `startup_timeout`.
//!
//! Every outgoing HTTP request goes through [`http_client`].

use std::collections::{HashMap, VecDeque};
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use process_wrap::tokio::{CommandWrap, ProcessGroup};
use rmcp::model::ProtocolVersion;
use rmcp::service::{ClientInitializeError, RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientLifecycleMode, ClientServiceExt};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::config::{Endpoint, ProtocolChoice, ServerConfig};
use crate::handler::McpClientHandler;
use crate::{ConfigError, ConnectError, TransportKind};

/// Longest wait for an HTTP server's `server/discover` answer before falling back to
/// `initialize`.
pub const DISCOVER_PROBE: Duration = Duration::from_secs(3);
const STDERR_LINES_KEPT: usize = 8;

pub(crate) type Running = RunningService<RoleClient, McpClientHandler>;

/// An established connection.
pub(crate) struct Connection {
    pub(crate) service: Running,
    pub(crate) protocol_version: String,
}

/// The last lines a stdio server wrote to stderr, for error messages.
#[derive(Clone, Default)]
pub(crate) struct StderrTail(Arc<Mutex<VecDeque<String>>>);

impl StderrTail {
    fn push(&self, line: String) {
        let mut lines = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if lines.len() == STDERR_LINES_KEPT {
            lines.pop_front();
        }
        lines.push_back(line);
    }

    pub(crate) fn lines(&self) -> Vec<String> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .cloned()
            .collect()
    }

    pub(crate) fn clear(&self) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }
}

pub(crate) fn transport_kind(config: &ServerConfig) -> TransportKind {
    if config.url.is_some() {
        TransportKind::StreamableHttp
    } else {
        TransportKind::Stdio
    }
}

/// Connects and negotiates the era; not bounded in time (the caller bounds it).
pub(crate) async fn connect(
    config: &ServerConfig,
    handler: &McpClientHandler,
    stderr: &StderrTail,
) -> Result<Connection, ConnectError> {
    let endpoint = config.endpoint()?;
    let name = config.name.as_str();
    let service = match config.protocol {
        ProtocolChoice::Initialize => {
            attempt(
                name,
                &endpoint,
                handler.clone(),
                ClientLifecycleMode::Initialize,
                stderr,
            )
            .await?
        }
        ProtocolChoice::Discover => {
            let modern = ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            };
            attempt(name, &endpoint, handler.clone(), modern, stderr).await?
        }
        ProtocolChoice::Auto => {
            let probe = match endpoint {
                Endpoint::Http { .. } => DISCOVER_PROBE.min(config.startup_timeout / 2),
                Endpoint::Stdio { .. } => config.startup_timeout,
            };
            let auto = ClientLifecycleMode::Auto {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                legacy_version: Some(ProtocolVersion::V_2025_11_25),
            };
            match tokio::time::timeout(
                probe,
                attempt(name, &endpoint, handler.clone(), auto, stderr),
            )
            .await
            {
                Ok(Ok(service)) => service,
                Ok(Err(e @ (ConnectError::Spawn { .. } | ConnectError::Config(_)))) => {
                    return Err(e);
                }
                Ok(Err(discover)) => {
                    tracing::debug!(server = %config.name, error = %discover, "server/discover failed; retrying with initialize");
                    attempt(
                        name,
                        &endpoint,
                        handler.clone(),
                        ClientLifecycleMode::Initialize,
                        stderr,
                    )
                    .await
                    .map_err(|e| match e {
                        ConnectError::Handshake(m) => ConnectError::Handshake(format!(
                            "{m} (server/discover before it: {discover})"
                        )),
                        other => other,
                    })?
                }
                Err(_) => {
                    tracing::debug!(server = %config.name, ?probe, "no answer to server/discover; retrying with initialize");
                    stderr.clear();
                    attempt(
                        name,
                        &endpoint,
                        handler.clone(),
                        ClientLifecycleMode::Initialize,
                        stderr,
                    )
                    .await?
                }
            }
        }
    };
    let protocol_version = service
        .peer()
        .peer_info()
        .map(|info| info.protocol_version.to_string())
        .unwrap_or_default();
    Ok(Connection {
        service,
        protocol_version,
    })
}

async fn attempt(
    server: &str,
    endpoint: &Endpoint,
    handler: McpClientHandler,
    mode: ClientLifecycleMode,
    stderr: &StderrTail,
) -> Result<Running, ConnectError> {
    let result = match endpoint {
        Endpoint::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let mut cmd = tokio::process::Command::new(command);
            cmd.args(args).envs(env).kill_on_drop(true);
            if let Some(dir) = cwd {
                cmd.current_dir(dir);
            }
            // Its own process group, so that killing it also ends what it started (`npx`,
            // shell wrappers) instead of leaving orphans behind on every restart.
            let mut wrapped = CommandWrap::from(cmd);
            wrapped.wrap(ProcessGroup::leader());
            let (transport, child_stderr) = TokioChildProcess::builder(wrapped)
                .stderr(Stdio::piped())
                .spawn()
                .map_err(|e| ConnectError::Spawn {
                    command: command.clone(),
                    reason: spawn_reason(&e, cwd.as_deref()),
                })?;
            if let Some(pipe) = child_stderr {
                forward_stderr(server.to_owned(), pipe, stderr.clone());
            }
            handler.serve_with_lifecycle(transport, mode).await
        }
        Endpoint::Http { url, headers } => {
            let transport = http_transport(server, url, headers)?;
            handler.serve_with_lifecycle(transport, mode).await
        }
    };
    result.map_err(|e| handshake_error(&e))
}

fn spawn_reason(e: &std::io::Error, cwd: Option<&std::path::Path>) -> String {
    match (e.kind(), cwd) {
        (std::io::ErrorKind::NotFound, Some(dir)) => format!(
            "{e}: check that the program exists (on PATH or as a path) and that `cwd` {} exists",
            dir.display()
        ),
        (std::io::ErrorKind::NotFound, None) => {
            format!("{e}: check that the program exists (on PATH or as a path)")
        }
        _ => e.to_string(),
    }
}

fn handshake_error(e: &ClientInitializeError) -> ConnectError {
    match e {
        ClientInitializeError::ConnectionClosed(_) => {
            ConnectError::Handshake("the server closed the connection during the handshake".into())
        }
        other => ConnectError::Handshake(error_chain(other)),
    }
}

/// An error with its sources, `a: b: c`, so transport details are not lost.
pub(crate) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let s_text = s.to_string();
        if !text.contains(&s_text) {
            text.push_str(": ");
            text.push_str(&s_text);
        }
        source = s.source();
    }
    text
}

/// Copies a child's stderr into `tracing` (and the tail kept for error messages).
fn forward_stderr(server: String, pipe: tokio::process::ChildStderr, tail: StderrTail) {
    tokio::spawn(async move {
        let mut lines = BufReader::new(pipe).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            tracing::info!(server = %server, "stderr: {line}");
            tail.push(line);
        }
    });
}

fn http_transport(
    server: &str,
    url: &str,
    headers: &std::collections::BTreeMap<String, String>,
) -> Result<StreamableHttpClientTransport<reqwest::Client>, ConnectError> {
    let mut custom = HashMap::new();
    for (name, value) in headers {
        let invalid = |reason: &str| {
            ConnectError::Config(ConfigError::InvalidHeader {
                server: server.to_owned(),
                header: name.clone(),
                reason: reason.to_owned(),
            })
        };
        let n = reqwest::header::HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| invalid("not a valid HTTP header name"))?;
        let mut v = reqwest::header::HeaderValue::from_str(value)
            .map_err(|_| invalid("the value has characters HTTP headers cannot carry"))?;
        v.set_sensitive(true);
        custom.insert(n, v);
    }
    let client = http_client().map_err(|e| ConnectError::HttpClient(error_chain(&e)))?;
    let config = StreamableHttpClientTransportConfig::with_uri(url).custom_headers(custom);
    Ok(StreamableHttpClientTransport::with_client(client, config))
}

/// The one HTTP client every MCP request is sent with.
///
/// Stand-in until `toolgate-net` lands: replace the body with
/// `toolgate_net::client(&policy)`, whose SSRF guard (R-MCP-4) checks every resolved address
/// and redirect hop. Proxies are off here because proxy variables would bypass that guard.
pub fn http_client() -> Result<reqwest::Client, reqwest::Error> {
    reqwest::Client::builder()
        .no_proxy()
        .connect_timeout(Duration::from_secs(10))
        .build()
}
