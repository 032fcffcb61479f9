//! Where the real peers live and how to drive them: node and the reference servers
//! (server-everything, server-filesystem, server-memory) in tests/peers, the Python SDK's
//! MCPServer in .venv — both installed by scripts/test.sh (commands in
//! shared/interop/TESTBEDS.md). A missing peer fails the test with the command that installs
//! it, never a silent skip.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::broadcast;
use toolgate_core::{CancellationToken, ToolContext, ToolError};
use toolgate_mcp_client::{HubOptions, McpEvent, McpHub, RetryPolicy, ServerConfig};
use toolgate_net::EgressPolicy;
use toolgate_protocol::ToolOutput;
use toolgate_registry::{Availability, Catalog};

/// Generous: the machine is shared and node starts slowly under load.
pub const STARTUP: Duration = Duration::from_secs(30);
const NPM_INSTALL: &str = "run scripts/test.sh, or: npm install --prefix tests/peers node@22 \
    @modelcontextprotocol/server-everything@2026.8.31 @modelcontextprotocol/server-filesystem@2026.8.31 \
    @modelcontextprotocol/server-memory@2026.8.31";

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn must_exist(path: PathBuf, what: &str, install: &str) -> PathBuf {
    assert!(
        path.exists(),
        "{what} is missing at {}: {install}",
        path.display()
    );
    path
}

pub fn node() -> String {
    let p = must_exist(
        repo_root().join("tests/peers/node_modules/.bin/node"),
        "node 22 (npm package node@22)",
        NPM_INSTALL,
    );
    p.to_string_lossy().into_owned()
}

/// `dist/index.js` of `@modelcontextprotocol/{package}`.
pub fn npm_server(package: &str) -> String {
    let p = must_exist(
        repo_root().join(format!(
            "tests/peers/node_modules/@modelcontextprotocol/{package}/dist/index.js"
        )),
        &format!("@modelcontextprotocol/{package}"),
        NPM_INSTALL,
    );
    p.to_string_lossy().into_owned()
}

pub fn python() -> String {
    let p = must_exist(
        repo_root().join(".venv/bin/python"),
        "the Python MCP SDK (mcp 2.3.0)",
        "run scripts/test.sh, which installs it into .venv",
    );
    p.to_string_lossy().into_owned()
}

pub fn peer_script(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/peers")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

pub fn everything_stdio(name: &str) -> ServerConfig {
    ServerConfig::stdio(name, node())
        .with_args([npm_server("server-everything"), "stdio".to_owned()])
        .with_startup_timeout(STARTUP)
}

pub fn py_stdio(name: &str) -> ServerConfig {
    ServerConfig::stdio(name, python())
        .with_args([peer_script("py_peer.py"), "stdio".to_owned()])
        .with_startup_timeout(STARTUP)
}

/// Fast retries so restart tests finish quickly.
pub fn quick_retry() -> RetryPolicy {
    RetryPolicy {
        initial: Duration::from_millis(200),
        max: Duration::from_secs(2),
    }
}

/// Starts a hub whose `[egress]` allowlists exactly the loopback `host:port` of each HTTP
/// server in `configs` (plain http included): nothing else non-public is reachable.
pub async fn start(configs: Vec<ServerConfig>) -> (McpHub, Arc<Catalog>) {
    let egress = loopback_egress(&configs);
    start_with(configs, egress).await
}

pub async fn start_with(
    configs: Vec<ServerConfig>,
    egress: EgressPolicy,
) -> (McpHub, Arc<Catalog>) {
    let catalog = Arc::new(Catalog::new());
    let options = HubOptions::new(quick_retry(), egress);
    let hub = McpHub::start(configs, Arc::clone(&catalog), options)
        .await
        .expect("valid config");
    (hub, catalog)
}

/// `allow_hosts` and `allow_http` entries `host:port` for every `http://host:port/…` server.
pub fn loopback_egress(configs: &[ServerConfig]) -> EgressPolicy {
    let mut egress = EgressPolicy::default();
    for url in configs.iter().filter_map(|c| c.url.as_deref()) {
        let authority = url
            .strip_prefix("http://")
            .and_then(|rest| rest.split('/').next())
            .unwrap_or_else(|| panic!("test servers are http://host:port/…, not {url}"));
        egress = egress
            .allow_host(authority)
            .and_then(|e| e.allow_plain_http(authority))
            .expect("a host:port entry");
    }
    egress
}

/// Catalog names of one source, sorted.
pub fn names(catalog: &Catalog, source: &str) -> Vec<String> {
    catalog
        .all()
        .into_iter()
        .filter(|e| e.spec().source == source)
        .map(|e| e.spec().name.clone())
        .collect()
}

pub fn ctx(call_id: &str) -> ToolContext {
    ToolContext {
        call_id: call_id.to_owned(),
        ..ToolContext::for_test()
    }
}

/// What the gateway's lookup stage does: unknown and unavailable tools never run.
pub async fn call_with(
    catalog: &Catalog,
    name: &str,
    args: Value,
    ctx: ToolContext,
) -> Result<ToolOutput, ToolError> {
    let entry = catalog
        .get(name)
        .unwrap_or_else(|| panic!("{name} is not in the catalog"));
    match entry.availability {
        Availability::Available => entry.tool.call(args, ctx).await,
        Availability::Unavailable(why) | Availability::Quarantined(why) => {
            Err(ToolError::Unavailable(why))
        }
    }
}

/// A call's result as toolgate's own front ends read it: the upstream result kept for MCP
/// front ends ([`ToolOutput::mcp_result`]) is checked apart, in `everything.rs`.
pub async fn call(catalog: &Catalog, name: &str, args: Value) -> Result<ToolOutput, ToolError> {
    call_with(catalog, name, args, ctx("call_test"))
        .await
        .map(|out| ToolOutput {
            mcp_result: None,
            ..out
        })
}

/// The first event `pick` accepts, within `limit`.
pub async fn wait_event<T>(
    rx: &mut broadcast::Receiver<McpEvent>,
    limit: Duration,
    mut pick: impl FnMut(&McpEvent) -> Option<T>,
) -> T {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        match tokio::time::timeout_at(deadline, rx.recv()).await {
            Ok(Ok(e)) => {
                if let Some(t) = pick(&e) {
                    return t;
                }
            }
            Ok(Err(broadcast::error::RecvError::Lagged(_))) => {}
            Ok(Err(e)) => panic!("event channel closed: {e}"),
            Err(_) => panic!("the expected event did not arrive within {limit:?}"),
        }
    }
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// A peer serving Streamable HTTP on 127.0.0.1; killed on drop.
pub struct HttpPeer {
    child: Child,
    pub url: String,
}

impl HttpPeer {
    /// Starts `command` (which must listen on `port`) and waits until it accepts.
    pub fn start(mut command: Command, port: u16) -> HttpPeer {
        let child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn HTTP peer");
        let mut peer = HttpPeer {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        };
        let deadline = Instant::now() + STARTUP;
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Ok(Some(status)) = peer.child.try_wait() {
                panic!("HTTP peer exited before listening: {status}");
            }
            assert!(
                Instant::now() < deadline,
                "HTTP peer did not listen on {port}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        peer
    }

    pub fn everything() -> HttpPeer {
        let port = free_port();
        let mut c = Command::new(node());
        c.args([npm_server("server-everything"), "streamableHttp".to_owned()])
            .env("PORT", port.to_string());
        HttpPeer::start(c, port)
    }

    pub fn python() -> HttpPeer {
        HttpPeer::python_on(free_port())
    }

    pub fn python_on(port: u16) -> HttpPeer {
        let mut c = Command::new(python());
        c.args([
            peer_script("py_peer.py"),
            "http".to_owned(),
            port.to_string(),
        ]);
        HttpPeer::start(c, port)
    }
}

impl Drop for HttpPeer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A token to cancel a call from the test.
pub fn cancellable(call_id: &str) -> (ToolContext, CancellationToken) {
    let c = ctx(call_id);
    let token = c.cancel.clone();
    (c, token)
}
