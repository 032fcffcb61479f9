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
//! Every outgoing HTTP request goes through [`http_client`], the SSRF-guarded client of
//! `toolgate-net` built from the `[egress]` policy (R-MCP-4). The server URL is checked
//! before anything is sent, so a refusal names the `[egress]` entry to add; a name that
//! resolves to a forbidden address, or a redirect to one, is refused by the client itself
//! and reported the same way.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use process_wrap::tokio::{CommandWrap, ProcessGroup};
use rmcp::model::ProtocolVersion;
use rmcp::service::{ClientInitializeError, RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpClientTransportConfig, StreamableHttpError,
};
use rmcp::{ClientLifecycleMode, ClientServiceExt};
use tokio::io::{AsyncBufReadExt, BufReader};
use toolgate_net::{EgressError, EgressPolicy, HostPattern, check_url};
use toolgate_store::CredentialStore;

use crate::auth::{AuthConfig, AuthContext};
use crate::config::{Endpoint, ProtocolChoice, ServerConfig};
use crate::inbound::McpClientHandler;
use crate::transport::ChildTransport;
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
    egress: &EgressPolicy,
    credentials: Option<&Arc<CredentialStore>>,
) -> Result<Connection, ConnectError> {
    let endpoint = config.endpoint()?;
    let auth = auth_setup(config, egress, credentials)?;
    let auth = auth.as_ref();
    if let Endpoint::Http { url, .. } = &endpoint {
        check_server_url(egress, url)?;
    }
    let name = config.name.as_str();
    let attempt = |mode| attempt(name, &endpoint, handler.clone(), mode, stderr, egress, auth);
    let service = match config.protocol {
        ProtocolChoice::Initialize => attempt(ClientLifecycleMode::Initialize).await?,
        ProtocolChoice::Discover => {
            let modern = ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            };
            attempt(modern).await?
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
            match tokio::time::timeout(probe, attempt(auto)).await {
                Ok(Ok(service)) => service,
                Ok(Err(
                    e @ (ConnectError::Spawn { .. }
                    | ConnectError::Config(_)
                    | ConnectError::Egress(_)
                    | ConnectError::Auth(_)),
                )) => {
                    return Err(e);
                }
                Ok(Err(discover)) => {
                    tracing::debug!(server = %config.name, error = %discover, "server/discover failed; retrying with initialize");
                    attempt(ClientLifecycleMode::Initialize)
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
                    attempt(ClientLifecycleMode::Initialize).await?
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
    egress: &EgressPolicy,
    auth: Option<&(AuthConfig, AuthContext)>,
) -> Result<Running, ConnectError> {
    let result = match endpoint {
        Endpoint::Stdio {
            command,
            args,
            env,
            cwd,
            clear_env,
        } => {
            let mut cmd = tokio::process::Command::new(command);
            if *clear_env {
                cmd.env_clear();
                for var in crate::sandbox::PASSED_ENV {
                    if let Some(value) = std::env::var_os(var) {
                        cmd.env(var, value);
                    }
                }
            }
            // Only stdio reaches the server: descriptors toolgate opens are close-on-exec, and
            // those its caller left open are marked so once, at process start (the binary's
            // `main`, through `toolgate_tools::sandbox::close_inherited_descriptors`).
            cmd.args(args).envs(env).kill_on_drop(true);
            if let Some(dir) = cwd {
                cmd.current_dir(dir);
            }
            // Its own process group, so that killing it also ends what it started (`npx`,
            // shell wrappers) instead of leaving orphans behind on every restart.
            let mut wrapped = CommandWrap::from(cmd);
            wrapped.wrap(ProcessGroup::leader());
            // Our transport, not rmcp's: an oversized or undecodable response fails its
            // call at once instead of leaving it to time out (crate::transport).
            let (transport, child_stderr) =
                ChildTransport::spawn(wrapped).map_err(|e| ConnectError::Spawn {
                    command: command.clone(),
                    reason: spawn_reason(&e, cwd.as_deref()),
                })?;
            if let Some(pipe) = child_stderr {
                forward_stderr(server.to_owned(), pipe, stderr.clone());
            }
            handler.serve_with_lifecycle(transport, mode).await
        }
        Endpoint::Http { url, headers } => match auth {
            None => {
                let client =
                    http_client(egress).map_err(|e| ConnectError::HttpClient(e.to_string()))?;
                let transport = http_transport(server, url, headers, client)?;
                handler.serve_with_lifecycle(transport, mode).await
            }
            Some((auth, ctx)) => {
                let client = crate::auth::authorized_client(server, url, auth, ctx)
                    .await
                    .map_err(|e| ConnectError::Auth(e.to_string()))?;
                let transport = http_transport(server, url, headers, client)?;
                handler.serve_with_lifecycle(transport, mode).await
            }
        },
    };
    result.map_err(|e| handshake_error(server, &e))
}

pub(crate) fn spawn_reason(e: &std::io::Error, cwd: Option<&std::path::Path>) -> String {
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

fn handshake_error(server: &str, e: &ClientInitializeError) -> ConnectError {
    match e {
        ClientInitializeError::ConnectionClosed(_) => {
            ConnectError::Handshake("the server closed the connection during the handshake".into())
        }
        ClientInitializeError::TransportError { error, .. } => {
            if let Some(refusal) = find_egress_refusal(error.error.as_ref()) {
                return ConnectError::Egress(refusal.to_string());
            }
            // A 401 or 403 is not a legacy server: never retried with `initialize`.
            match find_http_error(error.error.as_ref()) {
                Some(
                    refusal @ (StreamableHttpError::AuthRequired(_)
                    | StreamableHttpError::InsufficientScope(_)),
                ) => ConnectError::Auth(format!(
                    "MCP server `{server}` refused the connection ({}); sign in: `toolgate mcp login {server}`",
                    error_chain(refusal)
                )),
                _ => ConnectError::Handshake(error_chain(e)),
            }
        }
        other => ConnectError::Handshake(error_chain(other)),
    }
}

/// The guard's refusal somewhere in an error's sources. rmcp's `StreamableHttpError::Client`
/// does not expose the reqwest error as its source, so it is opened by hand; inside, the
/// refusal is the source of the connector's, resolver's or redirect policy's error.
fn find_egress_refusal<'a>(e: &'a (dyn std::error::Error + 'static)) -> Option<&'a EgressError> {
    let mut cause = Some(e);
    while let Some(c) = cause {
        if let Some(refusal) = c.downcast_ref::<EgressError>() {
            return Some(refusal);
        }
        if let Some(StreamableHttpError::Client(inner)) =
            c.downcast_ref::<StreamableHttpError<reqwest::Error>>()
        {
            return toolgate_net::egress_refusal(inner);
        }
        cause = c.source();
    }
    None
}

/// The Streamable HTTP transport's own error somewhere in an error's sources.
fn find_http_error<'a>(
    e: &'a (dyn std::error::Error + 'static),
) -> Option<&'a StreamableHttpError<reqwest::Error>> {
    let mut cause = Some(e);
    while let Some(c) = cause {
        if let Some(http) = c.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
            return Some(http);
        }
        cause = c.source();
    }
    None
}

/// Checks a server URL against `[egress]` without sending anything (done before every
/// connection). For a plain-http URL to a non-public address both missing entries are named
/// at once, so the operator does not fix one only to meet the next. A host name is judged
/// here only by its spelling; its addresses are checked when it is resolved.
pub fn check_server_url(policy: &EgressPolicy, url: &str) -> Result<(), ConnectError> {
    let parsed = url::Url::parse(url)
        .map_err(|e| ConnectError::Egress(format!("refused: `{url}` is not a valid URL: {e}")))?;
    match check_url(policy, &parsed) {
        Ok(()) => Ok(()),
        Err(plain @ EgressError::PlainHttp { .. }) => {
            let mut relaxed = policy.clone();
            if let Some(Ok(host)) = parsed.host_str().map(str::parse::<HostPattern>) {
                relaxed.allow_http.push(host);
            }
            match check_url(&relaxed, &parsed) {
                Err(address) => Err(ConnectError::Egress(format!("{plain}; and {address}"))),
                Ok(()) => Err(ConnectError::Egress(plain.to_string())),
            }
        }
        Err(other) => Err(ConnectError::Egress(other.to_string())),
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

/// The OAuth setup of a server with `auth`: its config and what the flow needs.
fn auth_setup(
    config: &ServerConfig,
    egress: &EgressPolicy,
    credentials: Option<&Arc<CredentialStore>>,
) -> Result<Option<(AuthConfig, AuthContext)>, ConnectError> {
    let Some(auth) = &config.auth else {
        return Ok(None);
    };
    let store = credentials.ok_or_else(|| {
        ConnectError::Auth(format!(
            "MCP server `{}` has `auth` but no credential store was given to the hub (HubOptions::with_credentials)",
            config.name
        ))
    })?;
    Ok(Some((
        auth.clone(),
        AuthContext::new(egress.clone(), Arc::clone(store)),
    )))
}

fn http_transport<C: StreamableHttpClient>(
    server: &str,
    url: &str,
    headers: &std::collections::BTreeMap<String, String>,
    client: C,
) -> Result<StreamableHttpClientTransport<C>, ConnectError> {
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
    let config = StreamableHttpClientTransportConfig::with_uri(url).custom_headers(custom);
    Ok(StreamableHttpClientTransport::with_client(client, config))
}

/// The one HTTP client every MCP request is sent with: `toolgate_net::client`, whose SSRF
/// guard checks every resolved address and redirect hop and ignores proxy variables.
///
/// `[egress] request_timeout_secs` is not applied: a Streamable HTTP response may be an SSE
/// stream that lasts as long as the call (bounded by the server's `call_timeout`), and the
/// standalone GET stream lasts as long as the session. The connect timeout is kept.
pub fn http_client(egress: &EgressPolicy) -> Result<reqwest::Client, EgressError> {
    let policy = EgressPolicy {
        request_timeout_secs: 0,
        ..egress.clone()
    };
    toolgate_net::client(&policy)
}
