//! The SSRF guard on Streamable HTTP servers (R-MCP-4): every request goes through
//! `toolgate-net` under the hub's `[egress]` policy. A server on a non-public address that is
//! not allowlisted is refused before a connection is opened, with the entry to add; a
//! redirect to a non-allowlisted address is not followed; proxy variables are ignored.

use std::net::TcpListener;
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use toolgate_mcp_client::{ServerConfig, ServerState, ServerStatus};
use toolgate_net::EgressPolicy;
use toolgate_protocol::ToolOutput;

use super::peers::{HttpPeer, STARTUP, call, start, start_with};

/// A listener that accepts nothing: a connection attempt would sit in its backlog.
struct Untouched(TcpListener);

impl Untouched {
    fn bind() -> Untouched {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.set_nonblocking(true).unwrap();
        Untouched(l)
    }

    fn port(&self) -> u16 {
        self.0.local_addr().unwrap().port()
    }

    fn connected(&self) -> bool {
        match self.0.accept() {
            Ok(_) => true,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => false,
            Err(e) => panic!("accept: {e}"),
        }
    }
}

fn failed_error(status: &ServerStatus) -> String {
    match &status.state {
        ServerState::Failed { error, .. } => error.clone(),
        other => panic!("{} should have been refused, is {other:?}", status.name),
    }
}

fn quick(name: &str, url: String) -> ServerConfig {
    ServerConfig::http(name, url).with_startup_timeout(Duration::from_secs(5))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_loopback_server_not_allowlisted_is_refused_without_connecting() {
    let target = Untouched::bind();
    let port = target.port();
    let plain = quick("plain", format!("http://127.0.0.1:{port}/mcp"));
    let tls = quick("tls", format!("https://127.0.0.1:{port}/mcp"));
    let ipv6 = quick("six", format!("https://[::ffff:127.0.0.1]:{port}/mcp"));
    let (hub, catalog) = start_with(vec![plain, tls, ipv6], EgressPolicy::default()).await;
    let errors: Vec<String> = hub.status().iter().map(failed_error).collect();
    assert_eq!(
        errors,
        [
            format!(
                "refused: plain http to 127.0.0.1; use https, or to allow it add \"127.0.0.1\" to \
                 [egress] allow_http; and refused: 127.0.0.1 is loopback; to allow it add \
                 \"127.0.0.1:{port}\" to [egress] allow_hosts"
            ),
            format!(
                "refused: 127.0.0.1 is loopback; to allow it add \"127.0.0.1:{port}\" to [egress] \
                 allow_hosts"
            ),
            format!(
                "refused: ::ffff:127.0.0.1 is loopback; to allow it add \
                 \"[::ffff:127.0.0.1]:{port}\" to [egress] allow_hosts"
            ),
        ]
    );
    assert!(catalog.all().is_empty());
    hub.shutdown().await;
    assert!(
        !target.connected(),
        "nothing may be sent to a refused server"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_resolving_to_loopback_is_refused_by_the_resolver() {
    let target = Untouched::bind();
    let port = target.port();
    // http is allowed for `localhost`, which does not make its loopback address reachable.
    let egress = EgressPolicy::default()
        .allow_plain_http("localhost")
        .unwrap();
    let config = quick("local", format!("http://localhost:{port}/mcp"));
    let (hub, _catalog) = start_with(vec![config], egress).await;
    assert_eq!(
        failed_error(&hub.status()[0]),
        "refused: localhost resolves to 127.0.0.1, which is loopback; to allow it add \
         \"localhost\" to [egress] allow_hosts"
    );
    hub.shutdown().await;
    assert!(!target.connected());
}

/// Answers every request with `307` to `location`, counting requests.
async fn redirector(location: String) -> (u16, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let task = tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let location = location.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 16 * 1024];
                let mut seen = Vec::new();
                while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                    match sock.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => seen.extend_from_slice(&buf[..n]),
                    }
                }
                let answer = format!(
                    "HTTP/1.1 307 Temporary Redirect\r\nLocation: {location}\r\n\
                     Content-Length: 0\r\nConnection: close\r\n\r\n"
                );
                let _ = sock.write_all(answer.as_bytes()).await;
                let _ = sock.shutdown().await;
            });
        }
    });
    (port, task)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_to_a_non_allowlisted_address_is_not_followed() {
    let target = Untouched::bind();
    let (port, task) = redirector(format!("http://127.0.0.1:{}/mcp", target.port())).await;
    // Plain http is allowed on every port of 127.0.0.1, but only the redirecting server's
    // own port is an allowed destination: the hop is refused for its address.
    let config = quick("hop", format!("http://127.0.0.1:{port}/mcp"));
    let egress = EgressPolicy::default()
        .allow_host(&format!("127.0.0.1:{port}"))
        .and_then(|e| e.allow_plain_http("127.0.0.1"))
        .unwrap();
    let (hub, _catalog) = start_with(vec![config], egress).await;
    assert_eq!(
        failed_error(&hub.status()[0]),
        format!(
            "refused: 127.0.0.1 is loopback; to allow it add \"127.0.0.1:{}\" to [egress] \
             allow_hosts",
            target.port()
        )
    );
    hub.shutdown().await;
    task.abort();
    assert!(!target.connected(), "the redirect must not be followed");
}

const PROXY_CHILD: &str = "TOOLGATE_MCP_TEST_PROXY_CHILD_PEER_URL";

/// The hub runs in a re-executed copy of this test binary with every proxy variable pointing
/// at a listener; the call still goes straight to the (allowlisted) server and the listener
/// sees nothing. Only the child has the variables, so no other test is affected.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proxy_variables_are_not_honoured() {
    let proxy = Untouched::bind();
    let peer = HttpPeer::python();
    let proxy_url = format!("http://127.0.0.1:{}", proxy.port());
    let mut child = tokio::process::Command::new(std::env::current_exe().unwrap());
    child
        .args(["--exact", "egress::child_calls_under_proxy_variables"])
        .args(["--nocapture", "--test-threads=1"])
        .env(PROXY_CHILD, &peer.url)
        .env_remove("NO_PROXY")
        .env_remove("no_proxy");
    for var in [
        "HTTP_PROXY",
        "http_proxy",
        "HTTPS_PROXY",
        "https_proxy",
        "ALL_PROXY",
        "all_proxy",
    ] {
        child.env(var, &proxy_url);
    }
    let out = child.output().await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "child failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!proxy.connected(), "the proxy must not be used");
}

/// Runs in the child only (does nothing when run directly).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn child_calls_under_proxy_variables() {
    let Ok(url) = std::env::var(PROXY_CHILD) else {
        return;
    };
    let config = ServerConfig::http("py", url).with_startup_timeout(STARTUP);
    let (hub, catalog) = start(vec![config]).await;
    assert_eq!(
        call(&catalog, "mcp__py__add", json!({"a": 20, "b": 22}))
            .await
            .unwrap(),
        ToolOutput::json(json!({"result": 42}))
    );
    hub.shutdown().await;
}
